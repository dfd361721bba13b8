import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { startTestPlatform, type Principal, type TestPlatform } from '../helpers/platform.ts'
import { expectProblem } from '../helpers/problem.ts'

let p: TestPlatform
let company: string
let owner: Principal
let admin: Principal
const ORIGIN = { origin: 'http://127.0.0.1:8000' }

beforeAll(async () => {
  p = await startTestPlatform()
  company = await p.createCompany()
  owner = await p.createUser({ companyId: company, role: 'owner', password: 'owner-password-1' })
  admin = await p.createUser({ companyId: company, role: 'admin', password: 'admin-password-1' })
})
afterAll(() => p.close())

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

describe('reset links', () => {
  test('an admin hands over a one-time link; the user chooses a password; the link works once and old sessions end', async () => {
    const member = await p.createUser({ companyId: company, password: 'forgotten-password' })
    const old = (await signIn(member.username, 'forgotten-password')) as string
    const issued = await p.call('POST', `/api/users/${member.userId}/password-reset`, { as: admin })
    expect(issued.status).toBe(201)
    expect(issued.body.url).toStartWith(`${p.services.config.adminBaseUrl}/reset-password?token=`)
    const token = new URL(issued.body.url).searchParams.get('token')
    expect(token).toBe(issued.body.token)

    expect((await p.call('POST', '/auth/password-reset', { as: null, json: { token, password: 'chosen-by-me' } })).status).toBe(204)
    expect(await me(old)).toBe(401)
    expect(await signIn(member.username, 'chosen-by-me')).toBeString()
    const again = expectProblem(await p.call('POST', '/auth/password-reset', { as: null, json: { token, password: 'second-try-1' } }), 422, 'validation_error')
    expect(again.errors).toContainEqual({ path: 'token', message: 'unknown, used or expired' })
  })

  test('a newer link replaces the older one; the console form lands on the sign-in page', async () => {
    const member = await p.createUser({ companyId: company })
    const first = (await p.call('POST', `/api/users/${member.userId}/password-reset`, { as: admin })).body.token
    const second = (await p.call('POST', `/api/users/${member.userId}/password-reset`, { as: owner })).body.token
    expectProblem(await p.call('POST', '/auth/password-reset', { as: null, json: { token: first, password: 'from-the-old-link' } }), 422, 'validation_error')
    const form = await p.call('POST', '/auth/password-reset', { as: null, body: new URLSearchParams({ token: second, password: 'from-the-new-link' }), headers: { 'content-type': 'application/x-www-form-urlencoded' } })
    expect(form.status).toBe(303)
    expect(form.headers.get('location')).toBe('/login?reset=done')
    expect(await signIn(member.username, 'from-the-new-link')).toBeString()
  })

  test('a link stops working when its user rises out of the admin’s reach; nobody makes a link for themselves', async () => {
    const member = await p.createUser({ companyId: company })
    const token = (await p.call('POST', `/api/users/${member.userId}/password-reset`, { as: admin })).body.token
    expect((await p.call('PATCH', `/api/v1/User/${member.userId}`, { json: { is_superadmin: true } })).status).toBe(200)
    expectProblem(await p.call('POST', '/auth/password-reset', { as: null, json: { token, password: 'taken-over-123' } }), 422, 'validation_error')
    const promoted = await p.createUser({ companyId: company })
    const second = (await p.call('POST', `/api/users/${promoted.userId}/password-reset`, { as: admin })).body.token
    expect((await p.call('PATCH', `/api/v1/CompanyUser/${(await p.call('GET', `/api/v1/CompanyUser?user_id=eq.${promoted.userId}`, { as: owner })).body.data[0].id}`, { as: owner, json: { role: 'owner' } })).status).toBe(200)
    expectProblem(await p.call('POST', '/auth/password-reset', { as: null, json: { token: second, password: 'taken-over-123' } }), 422, 'validation_error')
    expectProblem(await p.call('POST', `/api/users/${admin.userId}/password-reset`, { as: admin }), 403, 'forbidden')
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
