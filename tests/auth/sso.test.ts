import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { idpIssuer, startTestIdp, throughProvider, type TestIdp } from '../helpers/oidc-idp.ts'
import { freePort } from '../helpers/ports.ts'
import { startTestPlatform, type Principal, type TestPlatform } from '../helpers/platform.ts'
import { expectProblem } from '../helpers/problem.ts'

// Sign-in through a company's identity provider, against a real OpenID Connect provider on loopback (oidc-provider):
// the code flow with PKCE end to end, the accounts it makes or links, and the attacks it must refuse.

const CLIENT = { client_id: 'switchboard', client_secret: 'client-secret-for-the-tests-0123456789' }
const OTHER_CLIENT = { client_id: 'someone-else', client_secret: 'another-secret-for-the-tests-0123456' }
const port = freePort()
let p: TestPlatform
let idp: TestIdp
let provider: string
let strict: string
let company: string

const redirectUri = (id: string) => `${p.services.config.adminBaseUrl}/auth/sso/${id}/callback`

let slugs = 0
/** A provider of the company; the slug it answers to in the sign-in addresses. */
async function createProvider(json: Record<string, unknown>, as?: Principal): Promise<string> {
  const slug = `test-idp-${++slugs}`
  const made = await p.call('POST', '/api/v1/IdentityProvider', { json: { slug, name: 'Test IdP', issuer: idpIssuer(port), client_id: CLIENT.client_id, client_secret_secret: 'idp/secret', scopes: 'openid email profile groups', ...json }, as })
  expect(made.status).toBe(201)
  return slug
}

const providerId = async (slug: string) => (await p.store.db.selectFrom('identity_providers').select('id').where('slug', '=', slug).executeTakeFirstOrThrow()).id

const cookieOf = (response: Response, name: string) =>
  response.headers
    .getSetCookie()
    .map((c) => c.split(';')[0]!)
    .find((c) => c.startsWith(`${name}=`))

/** A browser signing in through the provider as `subject`: the start, the provider's pages, the callback. */
async function signIn(providerId: string, subject: string, { redirect = '/chat?open=1', flowCookie }: { redirect?: string; flowCookie?: string | null } = {}) {
  idp.state.loginAs = subject
  const start = await p.api.request(`/auth/sso/${providerId}?${new URLSearchParams({ post_login_redirect: redirect })}`)
  expect(start.status).toBe(302)
  const flow = cookieOf(start, 'switchboard_sso')!
  const back = await throughProvider(start.headers.get('location')!, redirectUri(providerId))
  const cookie = flowCookie === null ? undefined : (flowCookie ?? flow)
  const done = await p.api.request(`/auth/sso/${providerId}/callback${back.search}`, { headers: cookie ? { cookie } : {} })
  return { start, back, flow, done, session: cookieOf(done, 'switchboard_session_token') }
}

const refusedWith = (done: Response) => new URL(done.headers.get('location')!, 'http://x').searchParams.get('error')

async function me(session: string) {
  const reply = await p.api.request('/api/me', { headers: { cookie: session } })
  const body = (await reply.json()) as { user: Record<string, any>; role: string }
  return { status: reply.status, body: { ...body.user, role: body.role } as Record<string, any> }
}

beforeAll(async () => {
  p = await startTestPlatform({ SWITCHBOARD_OUTBOUND_ALLOW: '127.0.0.0/8', SWITCHBOARD_OIDC_ALLOW_HTTP: 'true' })
  company = p.root.companyId!
  expect((await p.call('PUT', '/api/vault/secrets', { json: { scope: 'company', owner_id: company, name: 'idp/secret', value: CLIENT.client_secret } })).status).toBe(200)
  provider = await createProvider({ role_mapping: [{ group: 'eng-leads', role: 'admin' }], link_by_email: true })
  strict = await createProvider({ name: 'Strict IdP', jit: false, link_by_email: false })
  idp = await startTestIdp(
    [
      { ...CLIENT, redirect_uris: [redirectUri(provider), redirectUri(strict)], post_logout_redirect_uris: [`${p.services.config.adminBaseUrl}/login`] },
      { ...OTHER_CLIENT, redirect_uris: [redirectUri(provider)] },
    ],
    port,
  )
  idp.accounts.set('ada', { email: 'ada@corp.example', email_verified: true, name: 'Ada Lovelace', preferred_username: 'ada', groups: ['eng-leads', 'everyone'] })
  idp.accounts.set('grace', { email: 'grace@corp.example', email_verified: true, name: 'Grace Hopper', groups: ['owners', 'everyone'] })
}, 30_000)
afterAll(async () => {
  await idp?.stop()
  await p?.close()
})

describe('signing in through the provider', () => {
  test('the company’s sign-in page offers its providers; the shared page only those a superadmin listed', async () => {
    const slug = (await p.store.db.selectFrom('companies').select('slug').where('id', '=', company).executeTakeFirstOrThrow()).slug
    const offered = async (query = '') => ((await p.call('GET', `/auth/sso${query}`, { as: null })).body as { data: Array<{ slug: string; company: string }> }).data
    expect((await offered(`?company=${slug}`)).map((d) => d.slug).sort()).toEqual([provider, strict].sort())
    expect((await offered(`?company=${slug}`))[0]!.company).toBe('Default')
    expect(await offered('?company=no-such-company')).toEqual([])
    expect(await offered()).toEqual([])
    // An admin may not put the company's button on everyone's sign-in page; a superadmin may.
    const admin = await p.createUser({ role: 'admin' })
    const id = await providerId(provider)
    expectProblem(await p.call('PATCH', `/api/v1/IdentityProvider/${id}`, { json: { listed: true }, as: admin }), 403, 'forbidden')
    expect((await p.call('PATCH', `/api/v1/IdentityProvider/${id}`, { json: { listed: true } })).status).toBe(200)
    expect((await offered()).map((d) => d.slug)).toEqual([provider])
    const page = await (await p.admin.request(`/login?company=${slug}`)).text()
    expect(page).toContain(`href="/auth/sso/${strict}?post_login_redirect=%2F"`)
    expect((await p.call('PATCH', `/api/v1/IdentityProvider/${id}`, { json: { listed: false } })).status).toBe(200)
  })

  test('a first sign-in creates the person in the company with the mapped role and lands on the deep link asked for', async () => {
    const { start, done, session } = await signIn(provider, 'ada', { redirect: '/chat?open=1' })
    // The authorization request: code flow, PKCE S256, state and nonce, the scopes set.
    const asked = new URL(start.headers.get('location')!)
    expect(asked.origin).toBe(idpIssuer(port))
    expect(Object.fromEntries(asked.searchParams)).toMatchObject({ response_type: 'code', client_id: CLIENT.client_id, code_challenge_method: 'S256', scope: 'openid email profile groups', redirect_uri: redirectUri(provider) })
    expect(asked.searchParams.get('state')).toBeTruthy()
    expect(asked.searchParams.get('nonce')).toBeTruthy()
    expect(cookieOf(start, 'switchboard_sso')).toBeTruthy()
    expect(start.headers.getSetCookie().find((c) => c.startsWith('switchboard_sso='))).toMatch(/HttpOnly/i)

    expect(done.status).toBe(303)
    expect(done.headers.get('location')).toBe('/chat?open=1')
    expect(session).toBeTruthy()
    const { body } = await me(session!)
    expect(body).toMatchObject({ email: 'ada@corp.example', display_name: 'Ada Lovelace', username: 'ada' })
    const membership = await p.store.db.selectFrom('company_users').select('role').where('user_id', '=', body.id).where('company_id', '=', company).executeTakeFirstOrThrow()
    expect(membership.role).toBe('admin')
    const trail = await p.store.db.selectFrom('audit_events').select(['action', 'model']).where('record_id', '=', body.id).execute()
    expect(trail.map((e) => e.action)).toEqual(expect.arrayContaining(['create', 'sign_in']))
  })

  test('a second sign-in is the same person, whose role follows the groups the provider sends now', async () => {
    const first = await me((await signIn(provider, 'ada')).session!)
    idp.accounts.set('ada', { ...idp.accounts.get('ada'), groups: ['everyone'] })
    try {
      const again = await signIn(provider, 'ada')
      const { body } = await me(again.session!)
      expect(body.id).toBe(first.body.id)
      // No mapped group now: the role stays what it was (the mapping says nothing of "everyone").
      expect((await p.store.db.selectFrom('company_users').select('role').where('user_id', '=', body.id).executeTakeFirstOrThrow()).role).toBe('admin')
    } finally {
      idp.accounts.set('ada', { ...idp.accounts.get('ada'), groups: ['eng-leads', 'everyone'] })
    }
  })
})

describe('attacks, each refused with a readable reason', () => {
  test('an owner signing in through a provider that maps them lower keeps their role: a provider takes away no more than it could give', async () => {
    const owner = await p.createUser({ role: 'owner' })
    await p.store.db.insertInto('user_identities').values({ id: Bun.randomUUIDv7(), provider_id: await providerId(provider), user_id: owner.userId, subject: 'boss' }).execute()
    idp.accounts.set('boss', { email: `${owner.username}@example.com`, email_verified: true, groups: ['eng-leads'] })
    const { session } = await signIn(provider, 'boss')
    expect((await me(session!)).body.id).toBe(owner.userId)
    expect((await p.store.db.selectFrom('company_users').select('role').where('user_id', '=', owner.userId).executeTakeFirstOrThrow()).role).toBe('owner')
  })

  test('a group claim names a role the mapping does not give (owners): it grants nothing beyond the mapping', async () => {
    const { session } = await signIn(provider, 'grace')
    const { body } = await me(session!)
    expect((await p.store.db.selectFrom('company_users').select('role').where('user_id', '=', body.id).executeTakeFirstOrThrow()).role).toBe('member')
  })

  test('a callback whose state is not this browser’s sign-in is refused, and nobody is signed in', async () => {
    idp.state.loginAs = 'ada'
    const start = await p.api.request(`/auth/sso/${provider}`)
    const back = await throughProvider(start.headers.get('location')!, redirectUri(provider))
    back.searchParams.set('state', 'forged-state')
    const done = await p.api.request(`/auth/sso/${provider}/callback${back.search}`, { headers: { cookie: cookieOf(start, 'switchboard_sso')! } })
    expect(done.status).toBe(303)
    expect(refusedWith(done)).toBe('sso_state')
    expect(cookieOf(done, 'switchboard_session_token')).toBeUndefined()
  })

  test('a callback in a browser that started no sign-in (no flow cookie, or a forged one) is refused', async () => {
    expect(refusedWith((await signIn(provider, 'ada', { flowCookie: null })).done)).toBe('sso_state')
    const { done } = await signIn(provider, 'ada', { flowCookie: 'switchboard_sso=eyJwcm92aWRlciI6IngifQ.forged' })
    expect(refusedWith(done)).toBe('sso_state')
  })

  test('a code used once is refused the second time, even with the same flow cookie', async () => {
    const first = await signIn(provider, 'ada')
    expect(first.session).toBeTruthy()
    const replay = await p.api.request(`/auth/sso/${provider}/callback${first.back.search}`, { headers: { cookie: first.flow } })
    expect(refusedWith(replay)).toBe('sso_verify')
    expect(cookieOf(replay, 'switchboard_session_token')).toBeUndefined()
  })

  test.each([
    ['another audience', (c: Record<string, unknown>) => ({ ...c, aud: OTHER_CLIENT.client_id })],
    ['another issuer', (c: Record<string, unknown>) => ({ ...c, iss: 'https://evil.example' })],
    ['a nonce of another sign-in', (c: Record<string, unknown>) => ({ ...c, nonce: 'not-the-nonce-we-sent' })],
    ['no nonce at all', ({ nonce: _, ...c }: Record<string, unknown>) => c],
    ['an expiry passed', (c: Record<string, unknown>) => ({ ...c, iat: Math.floor(Date.now() / 1000) - 7200, exp: Math.floor(Date.now() / 1000) - 3600 })],
  ])('an ID token with %s, signed with the provider’s own key, is refused', async (_, tamper) => {
    idp.state.tamper = tamper
    try {
      const { done, session } = await signIn(provider, 'ada')
      expect(refusedWith(done)).toBe('sso_verify')
      expect(session).toBeUndefined()
    } finally {
      idp.state.tamper = null
    }
  })

  test('an ID token signed with a key the provider never published is refused', async () => {
    idp.state.tamper = (claims) => claims
    idp.state.foreignKey = true
    try {
      const { done, session } = await signIn(provider, 'ada')
      expect(refusedWith(done)).toBe('sso_verify')
      expect(session).toBeUndefined()
    } finally {
      idp.state.tamper = null
      idp.state.foreignKey = false
    }
  })

  test('an issuer setting that is not the provider’s own issuer is refused at the start', async () => {
    const wrong = await createProvider({ name: 'Wrong issuer', issuer: `http://localhost:${port}` })
    const start = await p.api.request(`/auth/sso/${wrong}`)
    expect(start.status).toBe(303)
    expect(refusedWith(start)).toBe('sso_provider')
    await p.call('DELETE', `/api/v1/IdentityProvider/${await providerId(wrong)}`)
  })

  test('an unverified email never signs in as the account that has it; a verified one links only where the provider may', async () => {
    const victim = await p.createUser({ role: 'member' })
    const email = `${victim.username}@example.com`
    idp.accounts.set('mallory', { email, email_verified: false, groups: [] })
    expect(refusedWith((await signIn(provider, 'mallory')).done)).toBe('sso_unverified')
    // Where the provider does not link by email, a verified one is refused too.
    idp.accounts.set('mallory', { email, email_verified: true, groups: [] })
    expect(refusedWith((await signIn(strict, 'mallory')).done)).toBe('sso_exists')
    // An owner is above what this provider may grant (admin): not linked, though the email is verified.
    const owner = await p.createUser({ role: 'owner' })
    idp.accounts.set('mallory-owner', { email: `${owner.username}@example.com`, email_verified: true })
    expect(refusedWith((await signIn(provider, 'mallory-owner')).done)).toBe('sso_exists')
    // Someone of another company: not linked.
    const outsider = await p.createUser({ companyId: await p.createCompany() })
    idp.accounts.set('mallory-outsider', { email: `${outsider.username}@example.com`, email_verified: true })
    expect(refusedWith((await signIn(provider, 'mallory-outsider')).done)).toBe('sso_exists')
    // A member the provider may have made, with a verified email, is linked: signed in as that member.
    const { session } = await signIn(provider, 'mallory')
    expect((await me(session!)).body.id).toBe(victim.userId)
  })

  test('a provider that creates nobody refuses a stranger, saying to ask an admin', async () => {
    idp.accounts.set('stranger', { email: 'stranger@corp.example', email_verified: true })
    expect(refusedWith((await signIn(strict, 'stranger')).done)).toBe('sso_unknown')
    expect(await p.store.db.selectFrom('users').select('id').where('email', '=', 'stranger@corp.example').execute()).toEqual([])
  })

  test('the sign-in page says each reason in words', async () => {
    const page = await p.admin.request('/login?error=sso_unverified')
    expect(await page.text()).toContain('has not verified your email address')
  })
})

describe('signing out', () => {
  test('a session begun at the provider ends there too: the browser goes to its end_session_endpoint with the ID token as hint', async () => {
    const { session } = await signIn(provider, 'ada')
    const out = await p.api.request('/auth/logout', { method: 'POST', headers: { cookie: session!, origin: p.services.config.adminBaseUrl } })
    expect(out.status).toBe(303)
    const to = new URL(out.headers.get('location')!)
    expect(to.origin).toBe(idpIssuer(port))
    expect(to.searchParams.get('post_logout_redirect_uri')).toBe(`${p.services.config.adminBaseUrl}/login`)
    expect(to.searchParams.get('id_token_hint')?.split('.')).toHaveLength(3)
    expect((await me(session!)).status).toBe(401)
    // The provider takes the hint it issued.
    const atProvider = await fetch(to, { redirect: 'manual' })
    expect(atProvider.status).toBeLessThan(400)
  })

  test('a session begun with a password signs out to the sign-in page as before', async () => {
    const person = await p.createUser({ password: 'a-long-password-for-tests' })
    const login = await p.api.request('/auth/login', { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json', origin: p.services.config.adminBaseUrl }, body: JSON.stringify({ username: person.username, password: 'a-long-password-for-tests' }) })
    const out = await p.api.request('/auth/logout', { method: 'POST', headers: { cookie: cookieOf(login, 'switchboard_session_token')!, origin: p.services.config.adminBaseUrl } })
    expect(out.headers.get('location')).toBe('/login')
  })
})

describe('a company that requires its provider', () => {
  const signInWithPassword = (username: string, json = true) =>
    p.api.request('/auth/login', {
      method: 'POST',
      headers: { 'content-type': json ? 'application/json' : 'application/x-www-form-urlencoded', ...(json ? { accept: 'application/json' } : {}), origin: p.services.config.adminBaseUrl },
      body: json ? JSON.stringify({ username, password: 'a-long-password-for-tests' }) : new URLSearchParams({ username, password: 'a-long-password-for-tests' }).toString(),
    })

  test('cannot require one it has not set up', async () => {
    const bare = await p.createCompany()
    const owner = await p.createUser({ companyId: bare, role: 'owner' })
    expectProblem(await p.call('PATCH', `/api/v1/Company/${bare}`, { json: { require_sso: true }, as: owner }), 422, 'validation_error')
  })

  test('refuses its members’ passwords, saying how to sign in; a superadmin still signs in with one; off again, passwords work', async () => {
    const member = await p.createUser({ password: 'a-long-password-for-tests' })
    expect((await p.call('PATCH', `/api/v1/Company/${company}`, { json: { require_sso: true } })).status).toBe(200)
    try {
      const refused = await signInWithPassword(member.username)
      expect(refused.status).toBe(403)
      expect(((await refused.json()) as { detail: string }).detail).toContain('through its identity provider')
      expect(cookieOf(refused, 'switchboard_session_token')).toBeUndefined()
      const form = await signInWithPassword(member.username, false)
      expect(form.status).toBe(303)
      expect(form.headers.get('location')).toStartWith('/login?error=sso_required')
      // A wrong password is told as before: the rule is not revealed to someone guessing.
      const guess = await p.api.request('/auth/login', { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json', origin: p.services.config.adminBaseUrl }, body: JSON.stringify({ username: member.username, password: 'wrong-password-for-tests' }) })
      expect(guess.status).toBe(401)
      const superadmin = await p.createUser({ superadmin: true, password: 'a-long-password-for-tests' })
      expect((await signInWithPassword(superadmin.username)).status).toBe(200)
      // The provider still signs members in.
      expect((await signIn(provider, 'ada')).session).toBeTruthy()
    } finally {
      expect((await p.call('PATCH', `/api/v1/Company/${company}`, { json: { require_sso: false } })).status).toBe(200)
    }
    expect((await signInWithPassword(member.username)).status).toBe(200)
  })
})

describe('setting providers up', () => {
  test('nobody sets up a provider that grants a role above their own: an admin may not map a group to owner', async () => {
    const admin = await p.createUser({ role: 'admin' })
    const refused = await p.call('POST', '/api/v1/IdentityProvider', { json: { slug: 'escalate', name: 'Escalate', issuer: idpIssuer(port), client_id: 'x', role_mapping: [{ group: 'g', role: 'owner' }] }, as: admin })
    expectProblem(refused, 403, 'forbidden')
    expect(await createProvider({ name: 'Fine', role_mapping: [{ group: 'g', role: 'admin' }] }, admin)).toBeTruthy()
  })

  test('members cannot see or change providers; another company’s provider is not there', async () => {
    const member = await p.createUser({ role: 'member' })
    expectProblem(await p.call('GET', '/api/v1/IdentityProvider', { as: member }), 403, 'forbidden')
    const outsider = await p.createUser({ companyId: await p.createCompany(), role: 'owner' })
    expectProblem(await p.call('GET', `/api/v1/IdentityProvider/${await providerId(provider)}`, { as: outsider }), 404, 'not_found')
  })

  test('bad settings are 422 naming the field', async () => {
    expectProblem(await p.call('POST', '/api/v1/IdentityProvider', { json: { slug: 'bad', name: 'x', issuer: 'ftp://idp.example', client_id: 'x' } }), 422, 'validation_error')
    expectProblem(await p.call('POST', '/api/v1/IdentityProvider', { json: { slug: 'bad', name: 'x', issuer: idpIssuer(port), client_id: 'x', scopes: 'email profile' } }), 422, 'validation_error')
    expectProblem(await p.call('POST', '/api/v1/IdentityProvider', { json: { slug: '../Evil', name: 'x', issuer: idpIssuer(port), client_id: 'x' } }), 422, 'validation_error')
    // A slug is the provider's public name: another company cannot take one in use.
    const other = await p.createUser({ companyId: await p.createCompany(), role: 'owner' })
    expectProblem(await p.call('POST', '/api/v1/IdentityProvider', { json: { slug: provider, name: 'Mine now', issuer: idpIssuer(port), client_id: 'x' }, as: other }), 409, 'conflict')
  })
})
