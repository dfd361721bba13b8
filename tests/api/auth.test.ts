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

  test('failed sign-ins are throttled per address before the password is checked; other addresses are unaffected', async () => {
    const victim = await p.createUser({ password: 'victim-password-1' })
    for (let i = 0; i < 3; i++) expect((await signIn(victim.username, 'guess', '203.0.113.1')).reply.status).toBe(401)
    // Not even the right password is checked from there.
    const limited = (await signIn(victim.username, 'victim-password-1', '203.0.113.1')).reply
    expectProblem(limited, 429, 'rate_limited')
    expect(Number(limited.headers.get('retry-after'))).toBe(60)
    const form = await p.call('POST', '/auth/login', {
      as: null,
      body: new URLSearchParams({ username: victim.username, password: 'victim-password-1', post_login_redirect: '/users' }),
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
      address: '203.0.113.1',
    })
    expect(form.status).toBe(303)
    expect(form.headers.get('location')).toBe('/login?error=throttled&post_login_redirect=%2Fusers')
    // The account is not locked: from another address the owner signs in.
    expect((await signIn(victim.username, 'victim-password-1', '203.0.113.2')).reply.status).toBe(200)
    // One address guessing many accounts is stopped too.
    for (let i = 0; i < 3; i++) await signIn(`someone-${i}`, 'guess', '203.0.113.99')
    expectProblem((await signIn('admin', ADMIN_PASSWORD, '203.0.113.99')).reply, 429, 'rate_limited')
    // After Retry-After, the address may try again.
    clock.advance(60_000)
    expect((await signIn(victim.username, 'victim-password-1', '203.0.113.1')).reply.status).toBe(200)
  })
})

describe('sign-in throttle', () => {
  // 10 failures per address (one more a minute), 15 per account an hour from addresses it never signed in from.
  const limits = { SWITCHBOARD_LOGIN_RATE_BURST: '10', SWITCHBOARD_LOGIN_RATE_PER_MINUTE: '1', SWITCHBOARD_LOGIN_ACCOUNT_PER_HOUR: '15' }
  let q: TestPlatform
  beforeAll(async () => {
    q = await startTestPlatform(limits, manualClock())
  })
  afterAll(() => q.close())

  const attempt = async (on: TestPlatform, username: string, password: string, address: string) =>
    (await on.call('POST', '/auth/login', { as: null, json: { username, password }, headers: json, address })).status
  const statuses = (replies: number[]) => ({ 401: replies.filter((s) => s === 401).length, 429: replies.filter((s) => s === 429).length })

  test('of 40 concurrent wrong passwords from one address, only the 10 the limit allows are checked', async () => {
    const victim = await q.createUser({ password: 'victim-password-2' })
    const replies = await Promise.all(Array.from({ length: 40 }, () => attempt(q, victim.username, 'guess', '198.18.1.1')))
    expect(statuses(replies)).toEqual({ 401: 10, 429: 30 })
  })

  test('the username and the email are one account with one budget', async () => {
    const victim = await q.createUser({ password: 'victim-password-3' })
    const names = [victim.username, `${victim.username}@example.com`, victim.username.toUpperCase()]
    for (let i = 0; i < 15; i++) expect(await attempt(q, names[i % 3]!, 'guess', `198.18.2.${i}`)).toBe(401)
    for (const name of names) expect(await attempt(q, name, 'victim-password-3', '198.18.2.100')).toBe(429)
  })

  test('an attacker cannot lock the owner out of the addresses they sign in from; a new address meets the cap', async () => {
    const owner = await q.createUser({ password: 'owner-password-1' })
    expect(await attempt(q, owner.username, 'owner-password-1', '198.18.3.1')).toBe(200)
    // The attacker spends their address's bucket, then the account's hourly cap from other addresses.
    const fromA = await Promise.all(Array.from({ length: 20 }, () => attempt(q, owner.username, 'guess', '198.18.3.66')))
    expect(statuses(fromA)).toEqual({ 401: 10, 429: 10 })
    const elsewhere = []
    for (let i = 0; i < 10; i++) elsewhere.push(await attempt(q, `${owner.username}@example.com`, 'guess', `198.18.3.${100 + i}`))
    expect(statuses(elsewhere)).toEqual({ 401: 5, 429: 5 })
    // The owner, at their usual address, still signs in; at a new address the account's cap refuses them.
    expect(await attempt(q, owner.username, 'owner-password-1', '198.18.3.1')).toBe(200)
    expect(await attempt(q, owner.username, 'owner-password-1', '198.18.3.200')).toBe(429)
    // A mistake at the usual address is still only limited by that address's bucket.
    expect(await attempt(q, owner.username, 'typo', '198.18.3.1')).toBe(401)
  })

  test('a correct password costs nothing: many sign-ins in a row, and the full budget of failures after them', async () => {
    const user = await q.createUser({ password: 'user-password-1' })
    for (let i = 0; i < 12; i++) expect(await attempt(q, user.username, 'user-password-1', '198.18.4.1')).toBe(200)
    const failures = await Promise.all(Array.from({ length: 12 }, () => attempt(q, user.username, 'typo', '198.18.4.1')))
    expect(statuses(failures)).toEqual({ 401: 10, 429: 2 })
    // Successes give back only what they reserved themselves, not what failures spent.
    expect(await attempt(q, user.username, 'user-password-1', '198.18.4.1')).toBe(429)
  })

  test('the per-account hourly cap holds across many addresses and refills over the hour', async () => {
    const clock = manualClock()
    const r = await startTestPlatform({ ...limits, SWITCHBOARD_LOGIN_ACCOUNT_PER_HOUR: '5' }, clock)
    try {
      const victim = await r.createUser({ password: 'victim-password-4' })
      const replies = []
      for (let i = 0; i < 10; i++) replies.push(await attempt(r, victim.username, 'guess', `198.18.5.${i}`))
      expect(statuses(replies)).toEqual({ 401: 5, 429: 5 })
      const limited = await r.call('POST', '/auth/login', { as: null, json: { username: victim.username, password: 'guess' }, headers: json, address: '198.18.5.50' })
      expectProblem(limited, 429, 'rate_limited')
      expect(limited.headers.get('retry-after')).toBe('720')
      clock.advance(720_000)
      expect(await attempt(r, victim.username, 'guess', '198.18.5.51')).toBe(401)
      expect(await attempt(r, victim.username, 'guess', '198.18.5.52')).toBe(429)
    } finally {
      await r.close()
    }
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
      // It says where to get a token (RFC 9728), and that a bearer token sent was not valid (RFC 6750).
      const metadata = `resource_metadata="${p.services.config.baseUrl}/.well-known/oauth-protected-resource"`
      const invalid = headers.authorization?.startsWith('Bearer') ? 'error="invalid_token", ' : ''
      expect(reply.headers.get('www-authenticate')).toBe(`Bearer realm="switchboard", ${invalid}${metadata}`)
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
