import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { manualClock } from '../../src/clock.ts'
import { ADMIN_PASSWORD, startTestPlatform, type TestPlatform } from '../helpers/platform.ts'
import { expectProblem } from '../helpers/problem.ts'

const HOUR = 3_600_000
const clock = manualClock()
let p: TestPlatform

beforeAll(async () => {
  p = await startTestPlatform({ SWITCHBOARD_LOGIN_RATE_BURST: '3', SWITCHBOARD_LOGIN_RATE_PER_MINUTE: '1' }, clock)
})
afterAll(() => p.close())

const json = { accept: 'application/json' }
async function signIn(username = 'admin', password = ADMIN_PASSWORD, address = '198.51.100.7') {
  const reply = await p.call('POST', '/auth/login', { as: null, json: { username, password }, headers: json, address })
  return { reply, cookie: reply.headers.get('set-cookie')?.split(';')[0] ?? '' }
}
const whoami = (cookie: string) => p.call('GET', `/api/v1/User/${p.root.userId}`, { as: null, headers: { cookie } })

describe('sign-in', () => {
  test('JSON sign-in sets an HttpOnly, SameSite=Lax session cookie that lasts the maximum age', async () => {
    const { reply, cookie } = await signIn()
    expect(reply.status).toBe(200)
    expect(reply.body.user).toMatchObject({ username: 'admin', is_superadmin: true })
    expect(JSON.stringify(reply.body)).not.toContain('argon2')
    const setCookie = reply.headers.get('set-cookie')!
    expect(setCookie).toMatch(/^switchboard_session_token=[A-Za-z0-9_-]{43};/)
    expect(setCookie).toContain('HttpOnly')
    expect(setCookie).toContain('SameSite=Lax')
    expect(setCookie).toContain('Path=/')
    expect(setCookie).toContain(`Max-Age=${30 * 24 * 3600}`)
    expect(setCookie).not.toContain('Secure')
    expect((await whoami(cookie)).status).toBe(200)
    // Only the hash of the token is stored.
    const rows = await p.store.db.selectFrom('sessions').select('token_hash').execute()
    expect(rows.map((r) => r.token_hash)).not.toContain(cookie.split('=')[1])
  })

  test('the username or the email, in any case, signs in', async () => {
    expect((await signIn('ADMIN')).reply.status).toBe(200)
    expect((await signIn('Admin@Switchboard.Local')).reply.status).toBe(200)
  })

  test('a form sign-in answers 303 to the deep link, and a bad one goes back to the sign-in page', async () => {
    const form = (password: string, redirect: string) =>
      p.call('POST', '/auth/login', {
        as: null,
        body: new URLSearchParams({ username: 'admin', password, post_login_redirect: redirect }),
        headers: { 'content-type': 'application/x-www-form-urlencoded' },
        address: '198.51.100.8',
      })
    const good = await form(ADMIN_PASSWORD, '/users?q=ada')
    expect(good.status).toBe(303)
    expect(good.headers.get('location')).toBe('/users?q=ada')
    const offsite = await form(ADMIN_PASSWORD, '//evil.example/x')
    expect(offsite.headers.get('location')).toBe('/')
    const bad = await form('wrong password', '/users')
    expect(bad.status).toBe(303)
    expect(bad.headers.get('location')).toBe('/login?error=invalid&post_login_redirect=%2Fusers')
    expect(bad.headers.get('set-cookie')).toBeNull()
  })

  test('a wrong password is 401, and the same for an unknown user', async () => {
    expectProblem((await signIn('admin', 'nope', '198.51.100.9')).reply, 401, 'unauthorized')
    expectProblem((await signIn('nobody', 'nope', '198.51.100.9')).reply, 401, 'unauthorized')
  })

  test('a missing field is 422 and a body of another type 415', async () => {
    expectProblem(await p.call('POST', '/auth/login', { as: null, json: { username: 'admin' }, headers: json }), 422, 'validation_error')
    expectProblem(await p.call('POST', '/auth/login', { as: null, body: 'admin', headers: { 'content-type': 'text/plain', ...json } }), 415, 'unsupported_media_type')
  })

  test('failed sign-ins are throttled per account and per address; others are unaffected', async () => {
    const victim = await p.createUser({ password: 'victim-password-1' })
    for (let i = 0; i < 3; i++) expect((await signIn(victim.username, 'guess', `203.0.113.${i}`)).reply.status).toBe(401)
    // The account is locked for everyone, even with the right password, from a fresh address.
    const locked = (await signIn(victim.username, 'victim-password-1', '203.0.113.50')).reply
    expectProblem(locked, 429, 'rate_limited')
    expect(Number(locked.headers.get('retry-after'))).toBeGreaterThanOrEqual(1)
    // Another account from another address still signs in.
    expect((await signIn('admin', ADMIN_PASSWORD, '203.0.113.60')).reply.status).toBe(200)
    // One address guessing many accounts is stopped too.
    for (let i = 0; i < 3; i++) await signIn(`someone-${i}`, 'guess', '203.0.113.99')
    expectProblem((await signIn('admin', ADMIN_PASSWORD, '203.0.113.99')).reply, 429, 'rate_limited')
    // After Retry-After, the account may try again.
    clock.advance(Number(locked.headers.get('retry-after')) * 1000)
    expect((await signIn(victim.username, 'victim-password-1', '203.0.113.51')).reply.status).toBe(200)
  })
})

describe('sessions', () => {
  test('activity slides the inactivity window; idleness past it ends the session', async () => {
    const { cookie } = await signIn()
    clock.advance(71 * HOUR)
    expect((await whoami(cookie)).status).toBe(200)
    clock.advance(71 * HOUR)
    expect((await whoami(cookie)).status).toBe(200)
    clock.advance(72 * HOUR + 1000)
    expectProblem(await whoami(cookie), 401, 'unauthorized')
  })

  test('however active, a session ends at its maximum age', async () => {
    const { cookie } = await signIn()
    for (let day = 1; day < 30; day++) {
      clock.advance(24 * HOUR)
      expect((await whoami(cookie)).status).toBe(200)
    }
    clock.advance(24 * HOUR)
    expectProblem(await whoami(cookie), 401, 'unauthorized')
  })

  test('the store is written at most once a minute per session', async () => {
    const { cookie } = await signIn()
    const lastSeen = async () =>
      (await p.store.db.selectFrom('sessions').select('last_seen_at').orderBy('created_at', 'desc').executeTakeFirstOrThrow()).last_seen_at.getTime()
    const start = await lastSeen()
    for (let i = 0; i < 5; i++) {
      clock.advance(10_000)
      await whoami(cookie)
    }
    expect(await lastSeen()).toBe(start)
    clock.advance(15_000)
    await whoami(cookie)
    expect(await lastSeen()).toBe(clock.now())
  })

  test('sign-out ends the session and clears the cookie', async () => {
    const { cookie } = await signIn()
    const out = await p.call('POST', '/auth/logout', { as: null, headers: { cookie, ...json } })
    expect(out.status).toBe(204)
    expect(out.headers.get('set-cookie')).toMatch(/^switchboard_session_token=;.*Max-Age=0/)
    expectProblem(await whoami(cookie), 401, 'unauthorized')
  })

  test('an unknown or malformed credential is 401 with a WWW-Authenticate challenge', async () => {
    const attempts: Array<Record<string, string>> = [{ cookie: 'switchboard_session_token=forged' }, { authorization: 'Bearer sb_forged' }, { authorization: 'Basic abc' }, {}]
    for (const headers of attempts) {
      const reply = await p.call('GET', '/api/v1/AgentConfigRecord', { as: null, headers })
      expectProblem(reply, 401, 'unauthorized')
      expect(reply.headers.get('www-authenticate')).toBe('Bearer realm="switchboard"')
    }
  })
})

describe('personal API tokens', () => {
  test('made once, shown once, usable at once, revoked by deleting', async () => {
    const user = await p.createUser({ role: 'member' })
    const made = await p.call('POST', '/api/v1/ApiToken', { as: user, json: { name: 'nightly' } })
    expect(made.status).toBe(201)
    const token = made.body.token as string
    expect(token).toMatch(/^sb_[A-Za-z0-9_-]{43}$/)
    expect(made.body.prefix).toBe(token.slice(0, 10))
    const listed = await p.call('GET', '/api/v1/ApiToken', { as: user })
    expect(JSON.stringify(listed.body)).not.toContain(token)
    expect(listed.body.data.map((t: { name: string }) => t.name)).toContain('nightly')

    const asToken = { ...user, token }
    expect((await p.call('GET', `/api/v1/User/${user.userId}`, { as: asToken })).status).toBe(200)
    expect((await p.call('DELETE', `/api/v1/ApiToken/${made.body.id}`, { as: user })).status).toBe(204)
    expectProblem(await p.call('GET', `/api/v1/User/${user.userId}`, { as: asToken }), 401, 'unauthorized')
  })

  test('tokens are personal: another user, even a superadmin, cannot see or revoke them', async () => {
    const owner = await p.createUser()
    const made = await p.call('POST', '/api/v1/ApiToken', { as: owner, json: { name: 'mine' } })
    expectProblem(await p.call('GET', `/api/v1/ApiToken/${made.body.id}`), 404, 'not_found')
    expectProblem(await p.call('DELETE', `/api/v1/ApiToken/${made.body.id}`), 404, 'not_found')
  })

  test('an expired token no longer works', async () => {
    const user = await p.createUser()
    const made = await p.call('POST', '/api/v1/ApiToken', { as: user, json: { name: 'short', expires_at: new Date(clock.now() + HOUR).toISOString() } })
    const asToken = { ...user, token: made.body.token }
    expect((await p.call('GET', `/api/v1/User/${user.userId}`, { as: asToken })).status).toBe(200)
    clock.advance(HOUR + 1)
    expectProblem(await p.call('GET', `/api/v1/User/${user.userId}`, { as: asToken }), 401, 'unauthorized')
  })
})
