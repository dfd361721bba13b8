import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { speakerOf } from '../../src/channels/speakers.ts'
import { startSmtpServer, type SmtpServer } from '../fixtures/channels/mail-servers.ts'
import { startTestPlatform, type Principal, type TestPlatform } from '../helpers/platform.ts'
import { expectProblem } from '../helpers/problem.ts'
import { until } from '../helpers/until.ts'

const MAIL_LOGIN = { user: 'platform', password: 'smtp-password-for-tests' }
let smtp: SmtpServer
let p: TestPlatform
let company: string

beforeAll(async () => {
  smtp = await startSmtpServer(MAIL_LOGIN)
  p = await startTestPlatform({ SWITCHBOARD_SMTP_URL: `smtp://${MAIL_LOGIN.user}:${MAIL_LOGIN.password}@127.0.0.1:${smtp.port}` })
  company = await p.createCompany()
})
afterAll(async () => {
  await p.close()
  await smtp.close()
})

const addressOf = async (who: Principal) => (await p.store.db.selectFrom('users').select('email').where('id', '=', who.userId).executeTakeFirstOrThrow()).email
const verifiedSender = (address: string) => ({ id: address, verified: true })
const signInWith = async (login: string, password: string) =>
  (await p.call('POST', '/auth/login', { as: null, json: { username: login, password }, headers: { accept: 'application/json' } })).status

async function mailTo(address: string, after: number) {
  return until(() => smtp.sent.slice(after).find((m) => m.to.includes(address)), { what: `a mail to ${address}` })
}

describe('taking over another person’s address', () => {
  test('a member cannot set their account’s address to someone else’s: mail from it does not run as them', async () => {
    const member = await p.createUser({ companyId: company })
    const before = await addressOf(member)
    const refused = expectProblem(await p.call('PATCH', `/api/v1/User/${member.userId}`, { as: member, json: { email: 'ceo@victim.example' } }), 403, 'forbidden')
    expect(refused.detail).toContain('POST /api/me/email')
    const admin = await p.createUser({ companyId: company, role: 'admin' })
    expectProblem(await p.call('PATCH', `/api/v1/User/${member.userId}`, { as: admin, json: { email: 'ceo@victim.example' } }), 403, 'forbidden')
    expect(await addressOf(member)).toBe(before)
    expect(await speakerOf(p.store.db, company, 'email', verifiedSender('ceo@victim.example'))).toBeUndefined()
    // The same address is fine: a profile saved as it was changes nothing.
    expect((await p.call('PATCH', `/api/v1/User/${member.userId}`, { as: member, json: { email: before, display_name: 'Me' } })).status).toBe(200)
  })

  test('an asked-for address counts nowhere until its link is opened by the account that asked, signed in', async () => {
    const member = await p.createUser({ companyId: company, password: 'member-password-1' })
    const other = await p.createUser({ companyId: company })
    const mark = smtp.sent.length
    const asked = await p.call('POST', '/api/me/email', { as: member, json: { email: 'New.Me@example.org' } })
    expect(asked.status).toBe(202)
    expect(asked.body).toEqual({ sent_to: 'N…@example.org', expires_at: expect.any(String) })

    const mail = await mailTo('new.me@example.org', mark)
    const token = new URL(/https?:\/\/\S+\/confirm-email\?token=\S+/.exec(String(mail.mail.text))![0]).searchParams.get('token')!
    // Pending: not the account's address for anything.
    expect(await addressOf(member)).not.toBe('New.Me@example.org')
    expect(await speakerOf(p.store.db, company, 'email', verifiedSender('new.me@example.org'))).toBeUndefined()
    expect(await signInWith('New.Me@example.org', 'member-password-1')).toBe(401)

    // Someone else who opens the link (the address's real owner, tricked) confirms nothing.
    const wrongPerson = expectProblem(await p.call('POST', '/api/me/email/confirm', { as: other, json: { token } }), 422, 'validation_error')
    expect(wrongPerson.detail).toContain('another account')
    expect((await p.call('POST', '/api/me/email/confirm', { as: member, json: { token } })).body).toEqual({ email: 'New.Me@example.org' })
    expect(await addressOf(member)).toBe('New.Me@example.org')
    expect(await speakerOf(p.store.db, company, 'email', verifiedSender('new.me@example.org'))).toBe(member.userId)
    expect(await signInWith('new.me@example.org', 'member-password-1')).toBe(200)
    // Once.
    expectProblem(await p.call('POST', '/api/me/email/confirm', { as: member, json: { token } }), 422, 'validation_error')
  })

  test('asking for an address another account has answers the same; its owner is told and nothing is pending', async () => {
    const holder = await p.createUser({ companyId: company })
    const taker = await p.createUser({ companyId: company })
    const taken = await addressOf(holder)
    const mark = smtp.sent.length
    const asked = await p.call('POST', '/api/me/email', { as: taker, json: { email: taken.toUpperCase() } })
    expect(asked.status).toBe(202)
    expect(Object.keys(asked.body).sort()).toEqual(['expires_at', 'sent_to'])
    const notice = await mailTo(taken.toLowerCase(), mark)
    expect(String(notice.mail.text)).toContain('nothing changed')
    expect(String(notice.mail.text)).not.toContain('token=')
    expect(await p.store.db.selectFrom('email_changes').select('user_id').where('user_id', '=', taker.userId).execute()).toEqual([])
  })

  test('an expired link confirms nothing', async () => {
    const member = await p.createUser({ companyId: company })
    const mark = smtp.sent.length
    expect((await p.call('POST', '/api/me/email', { as: member, json: { email: 'late@example.org' } })).status).toBe(202)
    const mail = await mailTo('late@example.org', mark)
    const token = new URL(/https?:\/\/\S+\/confirm-email\?token=\S+/.exec(String(mail.mail.text))![0]).searchParams.get('token')!
    await p.store.db.updateTable('email_changes').set({ expires_at: new Date(Date.now() - 1000) }).where('user_id', '=', member.userId).execute()
    expectProblem(await p.call('POST', '/api/me/email/confirm', { as: member, json: { token } }), 422, 'validation_error')
    expect(await addressOf(member)).not.toBe('late@example.org')
  })
})

describe('POST /api/me/email', () => {
  test('401 anonymous, 422 for what is not an address, 429 past five an hour', async () => {
    expectProblem(await p.call('POST', '/api/me/email', { as: null, json: { email: 'a@example.org' } }), 401, 'unauthorized')
    const member = await p.createUser({ companyId: company })
    expectProblem(await p.call('POST', '/api/me/email', { as: member, json: { email: 'not an address' } }), 422, 'validation_error')
    expectProblem(await p.call('POST', '/api/me/email', { as: member, json: { email: 'a@example.org', extra: 1 } }), 422, 'validation_error')
    const statuses: number[] = []
    for (let i = 0; i < 6; i++) statuses.push((await p.call('POST', '/api/me/email', { as: member, json: { email: `bomb-${i}@example.org` } })).status)
    expect(statuses).toEqual([202, 202, 202, 202, 202, 429])
  })

  test('without a mail server the address cannot be confirmed: 409, and nothing is pending', async () => {
    const unmailed = await startTestPlatform()
    try {
      const member = await unmailed.createUser()
      const refused = expectProblem(await unmailed.call('POST', '/api/me/email', { as: member, json: { email: 'a@example.org' } }), 409, 'conflict')
      expect(refused.detail).toContain('SWITCHBOARD_SMTP_URL')
    } finally {
      await unmailed.close()
    }
  })
})
