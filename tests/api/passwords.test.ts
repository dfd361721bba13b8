import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { startSmtpServer, type SmtpServer } from '../fixtures/channels/mail-servers.ts'
import { startTestPlatform, type Principal, type TestPlatform } from '../helpers/platform.ts'
import { expectProblem } from '../helpers/problem.ts'
import { consoleCookie, CONSOLE_ORIGIN } from '../helpers/console.ts'
import { until } from '../helpers/until.ts'
import { jsonb } from '../../src/db/jsonb.ts'

const MAIL_LOGIN = { user: 'platform', password: 'smtp-password-for-tests' }
let smtp: SmtpServer
let p: TestPlatform
let company: string
let owner: Principal
let admin: Principal
const ORIGIN = { origin: 'http://127.0.0.1:8000' }

beforeAll(async () => {
  smtp = await startSmtpServer(MAIL_LOGIN)
  p = await startTestPlatform({ SWITCHBOARD_SMTP_URL: `smtp://${MAIL_LOGIN.user}:${MAIL_LOGIN.password}@127.0.0.1:${smtp.port}`, SWITCHBOARD_MAIL_FROM: 'accounts@switchboard.test' })
  company = await p.createCompany()
  owner = await p.createUser({ companyId: company, role: 'owner', password: 'owner-password-1' })
  admin = await p.createUser({ companyId: company, role: 'admin', password: 'admin-password-1' })
})
afterAll(async () => {
  await p.close()
  await smtp.close()
})

/** Signs in and answers the session cookie, or the status when refused. */
async function signIn(username: string, password: string): Promise<string | number> {
  const reply = await p.call('POST', '/auth/login', { as: null, json: { username, password }, headers: { accept: 'application/json' } })
  if (reply.status !== 200) return reply.status
  return /switchboard_session_token=[^;]+/.exec(reply.headers.get('set-cookie') ?? '')![0]
}
const asCookie = (cookie: string) => ({ as: null, headers: { cookie, ...ORIGIN } })
const me = async (cookie: string) => (await p.call('GET', '/api/me', asCookie(cookie))).status

describe('only the user, with their current password, or a superadmin sets a password', () => {
  test('a company admin cannot set a member’s password, and is told to hand over a reset link', async () => {
    const member = await p.createUser({ companyId: company, password: 'member-password-1' })
    const refused = expectProblem(await p.call('PATCH', `/api/v1/User/${member.userId}`, { as: admin, json: { password: 'taken-over-123' } }), 403, 'forbidden')
    expect(refused.detail).toContain(`/api/users/${member.userId}/password-reset`)
    expect(await signIn(member.username, 'taken-over-123')).toBe(401)
    expect(await signIn(member.username, 'member-password-1')).toBeString()
  })

  test('nobody sets their own password without the current one', async () => {
    expectProblem(await p.call('PATCH', `/api/v1/User/${admin.userId}`, { as: admin, json: { password: 'no-current-123' } }), 403, 'forbidden')
    expectProblem(await p.call('PATCH', `/api/v1/User/${p.root.userId}`, { json: { password: 'no-current-123' } }), 403, 'forbidden')
  })

  test('a superadmin sets someone’s password, which ends that user’s sessions', async () => {
    const member = await p.createUser({ companyId: company, password: 'member-password-2' })
    const cookie = (await signIn(member.username, 'member-password-2')) as string
    expect(await me(cookie)).toBe(200)
    expect((await p.call('PATCH', `/api/v1/User/${member.userId}`, { json: { password: 'set-by-superadmin' } })).status).toBe(200)
    expect(await me(cookie)).toBe(401)
    expect(await signIn(member.username, 'set-by-superadmin')).toBeString()
  })
})

describe('POST /api/me/password', () => {
  test('asks for the current password and ends every other session of the user', async () => {
    const member = await p.createUser({ companyId: company, password: 'first-password' })
    const here = (await signIn(member.username, 'first-password')) as string
    const elsewhere = (await signIn(member.username, 'first-password')) as string

    const wrong = expectProblem(await p.call('POST', '/api/me/password', { ...asCookie(here), json: { current_password: 'guess', password: 'second-password' } }), 422, 'validation_error')
    expect(wrong.errors).toContainEqual({ path: 'current_password', message: 'wrong password' })
    expectProblem(await p.call('POST', '/api/me/password', { ...asCookie(here), json: { current_password: 'first-password', password: 'short' } }), 422, 'validation_error')

    expect((await p.call('POST', '/api/me/password', { ...asCookie(here), json: { current_password: 'first-password', password: 'second-password' } })).status).toBe(204)
    expect(await me(here)).toBe(200)
    expect(await me(elsewhere)).toBe(401)
    expect(await signIn(member.username, 'first-password')).toBe(401)
    expect(await signIn(member.username, 'second-password')).toBeString()
  })

  test('also ends the grants of MCP hosts and, unless asked to keep them, the personal API tokens', async () => {
    const grantOf = async (userId: string) => {
      const clientId = Bun.randomUUIDv7()
      await p.store.db.insertInto('oauth_clients').values({ id: clientId, client_id: `sbc_${clientId}`, kind: 'dynamic', client_uri: null, redirect_uris: jsonb(['http://127.0.0.1/cb']), secret_hash: null, fetched_at: null }).execute()
      await p.store.db.insertInto('oauth_grants').values({ id: Bun.randomUUIDv7(), client_ref: clientId, user_id: userId, company_id: company, resource: 'http://x/mcp', scope: 'mcp', last_used_at: null }).execute()
    }
    const grants = async (userId: string) => (await p.store.db.selectFrom('oauth_grants').select('id').where('user_id', '=', userId).execute()).length

    const member = await p.createUser({ companyId: company, password: 'first-password' })
    await grantOf(member.userId)
    const here = (await signIn(member.username, 'first-password')) as string
    expect((await p.call('POST', '/api/me/password', { ...asCookie(here), json: { current_password: 'first-password', password: 'second-password' } })).status).toBe(204)
    expect((await p.call('GET', '/api/me', { as: member })).status).toBe(401)
    expect(await grants(member.userId)).toBe(0)

    const scripted = await p.createUser({ companyId: company, password: 'first-password' })
    await grantOf(scripted.userId)
    const there = (await signIn(scripted.username, 'first-password')) as string
    const kept = await p.call('POST', '/api/me/password', { ...asCookie(there), json: { current_password: 'first-password', password: 'second-password', end_api_tokens: false } })
    expect(kept.status).toBe(204)
    expect((await p.call('GET', '/api/me', { as: scripted })).status).toBe(200)
    expect(await grants(scripted.userId)).toBe(0)
  })

  test('wrong current passwords are throttled like sign-ins', async () => {
    const local = await startTestPlatform({ SWITCHBOARD_LOGIN_RATE_BURST: '3' })
    try {
      const member = await local.createUser({ password: 'the-password' })
      const statuses = []
      for (let i = 0; i < 5; i++) {
        statuses.push((await local.call('POST', '/api/me/password', { as: member, json: { current_password: `guess-${i}`, password: 'whatever-123' } })).status)
      }
      expect(statuses).toEqual([422, 422, 422, 429, 429])
    } finally {
      await local.close()
    }
  })

  test('401 without credentials, 422 for a bad body', async () => {
    expectProblem(await p.call('POST', '/api/me/password', { as: null, json: { current_password: 'x', password: 'yyyyyyyy' } }), 401, 'unauthorized')
    expectProblem(await p.call('POST', '/api/me/password', { as: admin, json: { password: 'yyyyyyyy', extra: 1 } }), 422, 'validation_error')
  })
})

/** The reset link in the latest mail to `address`, once it has come. */
async function mailedLink(address: string, after = 0): Promise<{ token: string; text: string }> {
  const mail = await until(() => smtp.sent.slice(after).findLast((m) => m.to.includes(address)), { what: `a mail to ${address}` })
  const text = String(mail.mail.text)
  const url = /https?:\/\/\S+\/reset-password\?token=\S+/.exec(text)![0]
  return { token: new URL(url).searchParams.get('token')!, text }
}

const addressOf = (who: Principal) => `${who.username}@example.com`

describe('reset links', () => {
  test('an admin forces a reset: the member’s password, sessions, API tokens and grants end; the link goes to the member, saying who asked', async () => {
    const member = await p.createUser({ companyId: company, password: 'forgotten-password' })
    const old = (await signIn(member.username, 'forgotten-password')) as string
    const mailsBefore = smtp.sent.length
    const issued = await p.call('POST', `/api/users/${member.userId}/password-reset`, { as: admin })
    expect(issued.status).toBe(202)
    // The admin learns where it went (masked) and when it expires, never the link.
    expect(issued.body).toEqual({ sent_to: `${member.username[0]}…@example.com`, expires_at: expect.any(String) })
    expect(JSON.stringify(issued.body)).not.toContain('rst_')

    expect(await me(old)).toBe(401)
    expect(await signIn(member.username, 'forgotten-password')).toBe(401)
    expect((await p.call('GET', '/api/me', { as: member })).status).toBe(401)

    const { token, text } = await mailedLink(addressOf(member), mailsBefore)
    expect(smtp.sent.at(-1)!.from).toBe('accounts@switchboard.test')
    expect(text).toContain(admin.username)
    expect(text).toContain('If you did not expect this')
    expect((await p.call('POST', '/auth/password-reset', { as: null, json: { token, password: 'chosen-by-me' } })).status).toBe(204)
    expect(await signIn(member.username, 'chosen-by-me')).toBeString()
    const again = expectProblem(await p.call('POST', '/auth/password-reset', { as: null, json: { token, password: 'second-try-1' } }), 422, 'validation_error')
    expect(again.errors).toContainEqual({ path: 'token', message: 'unknown, used or expired' })
  })

  test('the admin cannot read the member’s private conversation by way of a reset', async () => {
    const member = await p.createUser({ companyId: company, password: 'member-secret-1' })
    const agent = await p.call('POST', '/api/v1/AgentConfigRecord', { as: owner, json: { name: `diary-${crypto.randomUUID().slice(0, 6)}`, runner: 'echo', model: 'echo-1' } })
    const conversation = await p.call('POST', '/api/v1/WebchatConversation', { as: member, json: { agent_id: agent.body.id } })
    expect(conversation.status).toBe(201)
    expect((await p.call('POST', `/api/users/${member.userId}/password-reset`, { as: admin })).status).toBe(202)
    // Nothing the admin holds lets them in as the member: no link, no password, no token.
    expect(await signIn(member.username, 'member-secret-1')).toBe(401)
    expect((await p.call('GET', `/api/v1/WebchatConversation/${conversation.body.id}`, { as: admin })).status).toBe(404)
  })

  test('a newer link replaces the older one; the console form lands on the sign-in page', async () => {
    const member = await p.createUser({ companyId: company })
    let mark = smtp.sent.length
    expect((await p.call('POST', `/api/users/${member.userId}/password-reset`, { as: admin })).status).toBe(202)
    const first = (await mailedLink(addressOf(member), mark)).token
    mark = smtp.sent.length
    expect((await p.call('POST', `/api/users/${member.userId}/password-reset`, { as: owner })).status).toBe(202)
    const second = (await mailedLink(addressOf(member), mark)).token
    expectProblem(await p.call('POST', '/auth/password-reset', { as: null, json: { token: first, password: 'from-the-old-link' } }), 422, 'validation_error')
    const form = await p.call('POST', '/auth/password-reset', { as: null, body: new URLSearchParams({ token: second, password: 'from-the-new-link' }), headers: { 'content-type': 'application/x-www-form-urlencoded' } })
    expect(form.status).toBe(303)
    expect(form.headers.get('location')).toBe('/login?reset=done')
    expect(await signIn(member.username, 'from-the-new-link')).toBeString()
  })

  test('a link stops working when its user rises out of the admin’s reach; nobody makes a link for themselves', async () => {
    const member = await p.createUser({ companyId: company })
    let mark = smtp.sent.length
    expect((await p.call('POST', `/api/users/${member.userId}/password-reset`, { as: admin })).status).toBe(202)
    const token = (await mailedLink(addressOf(member), mark)).token
    expect((await p.call('PATCH', `/api/v1/User/${member.userId}`, { json: { is_superadmin: true } })).status).toBe(200)
    expectProblem(await p.call('POST', '/auth/password-reset', { as: null, json: { token, password: 'taken-over-123' } }), 422, 'validation_error')
    const promoted = await p.createUser({ companyId: company })
    mark = smtp.sent.length
    expect((await p.call('POST', `/api/users/${promoted.userId}/password-reset`, { as: admin })).status).toBe(202)
    const second = (await mailedLink(addressOf(promoted), mark)).token
    expect((await p.call('PATCH', `/api/v1/CompanyUser/${(await p.call('GET', `/api/v1/CompanyUser?user_id=eq.${promoted.userId}`, { as: owner })).body.data[0]!.id}`, { as: owner, json: { role: 'owner' } })).status).toBe(200)
    expectProblem(await p.call('POST', '/auth/password-reset', { as: null, json: { token: second, password: 'taken-over-123' } }), 422, 'validation_error')
    expectProblem(await p.call('POST', `/api/users/${admin.userId}/password-reset`, { as: admin }), 403, 'forbidden')
  })

  test('a mail server that refuses the link changes nothing: 503, and the member still signs in', async () => {
    const member = await p.createUser({ companyId: company, password: 'still-mine-123' })
    smtp.refuseRecipient(addressOf(member))
    const refused = expectProblem(await p.call('POST', `/api/users/${member.userId}/password-reset`, { as: admin }), 503, 'unavailable')
    expect(refused.detail).toContain('nothing was changed')
    expect(await signIn(member.username, 'still-mine-123')).toBeString()
    expect((await p.call('GET', '/api/me', { as: member })).status).toBe(200)
  })

  test('without a mail server a company admin is refused (409) and nothing changes; a superadmin gets the link to hand over', async () => {
    const unmailed = await startTestPlatform()
    try {
      const team = await unmailed.createCompany()
      const boss = await unmailed.createUser({ companyId: team, role: 'admin' })
      const member = await unmailed.createUser({ companyId: team, password: 'kept-password-1' })
      const refused = expectProblem(await unmailed.call('POST', `/api/users/${member.userId}/password-reset`, { as: boss }), 409, 'conflict')
      expect(refused.detail).toContain('SWITCHBOARD_SMTP_URL')
      expect((await unmailed.call('GET', '/api/me', { as: member })).status).toBe(200)
      const operator = await unmailed.call('POST', `/api/users/${member.userId}/password-reset`)
      expect(operator.status).toBe(201)
      expect('url' in operator.body && operator.body.url).toStartWith(`${unmailed.services.config.adminBaseUrl}/reset-password?token=`)
    } finally {
      await unmailed.close()
    }
  })

  test('only for users the admin may manage: 403 above them or for a member asking, 404 for another company’s user, 401 anonymous', async () => {
    expectProblem(await p.call('POST', `/api/users/${owner.userId}/password-reset`, { as: admin }), 403, 'forbidden')
    const member = await p.createUser({ companyId: company })
    expectProblem(await p.call('POST', `/api/users/${admin.userId}/password-reset`, { as: member }), 404, 'not_found')
    const stranger = await p.createUser({ companyId: await p.createCompany() })
    expectProblem(await p.call('POST', `/api/users/${stranger.userId}/password-reset`, { as: admin }), 404, 'not_found')
    expectProblem(await p.call('POST', `/api/users/${member.userId}/password-reset`, { as: null }), 401, 'unauthorized')
    expect((await p.call('POST', `/api/users/not-a-uuid/password-reset`, { as: admin })).status).toBe(400)
  })
})

describe('forgot password', () => {
  const forgot = (login: string, headers: Record<string, string> = {}) =>
    p.api.request('/auth/forgot-password', { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify({ login }) })

  test('a link goes to the account’s address; the answer is the same for nobody; the old password works until the link is used', async () => {
    const member = await p.createUser({ companyId: company, password: 'remembered-after-all' })
    const mark = smtp.sent.length
    const nobody = await forgot(`nobody-${crypto.randomUUID()}@example.com`, { 'x-forwarded-for': '203.0.113.7' })
    const known = await forgot(addressOf(member).toUpperCase(), { 'x-forwarded-for': '203.0.113.8' })
    expect([nobody.status, known.status]).toEqual([202, 202])
    expect(await nobody.json()).toEqual(await known.json())
    const { token, text } = await mailedLink(addressOf(member), mark)
    expect(text).toContain(`your Switchboard account (${member.username})`)
    expect(text).toContain('your password stays as it is until the link is used')
    // Only the one mail: nobody's request sent nothing.
    expect(smtp.sent.slice(mark).map((m) => m.to)).toEqual([[addressOf(member)]])
    // Asking locked nobody out.
    expect(typeof (await signIn(member.username, 'remembered-after-all'))).toBe('string')
    const used = await p.api.request('/auth/password-reset', { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ token, password: 'a-brand-new-password' }) })
    expect(used.status).toBe(204)
    expect(typeof (await signIn(member.username, 'a-brand-new-password'))).toBe('string')
    expect(await signIn(member.username, 'remembered-after-all')).not.toBeTypeOf('string')
  })

  test('a form post goes back to the sign-in page, which says a link is on its way; the sign-in page offers it', async () => {
    const form = await p.admin.request('/auth/forgot-password', { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded', ...ORIGIN }, body: new URLSearchParams({ login: 'someone' }) })
    expect(form.status).toBe(303)
    expect(form.headers.get('location')).toBe('/login?forgot=sent')
    expect(await (await p.admin.request('/login?forgot=sent')).text()).toContain('a link to choose a new password is on its way')
    expect(await (await p.admin.request('/login')).text()).toContain('<a href="/forgot-password">Forgot password?</a>')
    expect(await (await p.admin.request('/forgot-password')).text()).toContain('action="/auth/forgot-password"')
  })

  test('a few links an hour per account, then 429; an empty login is 422', async () => {
    const member = await p.createUser({ companyId: company })
    const answers = []
    for (let i = 0; i < 4; i++) answers.push((await forgot(member.username, { 'x-forwarded-for': `198.51.100.${i + 1}` })).status)
    expect(answers).toEqual([202, 202, 202, 429])
    const empty = await forgot('')
    expectProblem({ status: empty.status, headers: empty.headers, body: await empty.json() }, 422, 'validation_error')
  })
})

describe('the console’s reset button', () => {
  test('an owner sends a member a reset link from the user’s page; a member is refused in words', async () => {
    const member = await p.createUser({ companyId: company, password: 'member-old-password' })
    const cookie = await consoleCookie(p, owner.username, 'owner-password-1')
    const page = await (await p.admin.request(`/users/${member.userId}`, { headers: { cookie } })).text()
    expect(page).toContain('Send a password reset link')
    const mark = smtp.sent.length
    const sent = await p.admin.request(`/users/${member.userId}/password-reset`, { method: 'POST', headers: { cookie, origin: CONSOLE_ORIGIN, 'hx-request': 'true' } })
    expect(sent.status).toBe(200)
    expect(await sent.text()).toMatch(/A reset link was mailed to \S+@example\.com\./)
    await mailedLink(addressOf(member), mark)
    expect(await signIn(member.username, 'member-old-password')).toBe(401)

    const memberCookie = await consoleCookie(p, (await p.createUser({ companyId: company, password: 'plain-member-pw' })).username, 'plain-member-pw')
    const refused = await p.admin.request(`/users/${owner.userId}/password-reset`, { method: 'POST', headers: { cookie: memberCookie, origin: CONSOLE_ORIGIN, 'hx-request': 'true' } })
    const text = await refused.text()
    expect(text).toContain('role="alert"')
    expect(text).not.toContain('A reset link was mailed')
  })
})
