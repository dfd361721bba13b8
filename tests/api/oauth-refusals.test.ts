import { describe, expect, test } from 'bun:test'
import { consentForm, consentInBrowser, oauthPost, startOAuthPlatform, TLS_CERT, TLS_KEY, type OAuthPlatform } from '../helpers/oauth.ts'
import { useStarted } from '../helpers/platform.ts'
import { expectProblem } from '../helpers/problem.ts'

const REDIRECT = 'http://127.0.0.1:33418/callback'

// Every test registers its clients from the same loopback address, and registration is held to the sign-in rate
// per address: at its default burst most of this file would be answered 429 instead of the refusal it is about.
const platform = useStarted(() => startOAuthPlatform({ SWITCHBOARD_LOGIN_RATE_BURST: '1000' }))

type Person = Awaited<ReturnType<OAuthPlatform['person']>>

/** A PKCE pair (RFC 7636 §4.1-4.2): 43 characters of base64url, and its S256 challenge. */
function pkce(): { verifier: string; challenge: string } {
  const verifier = Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString('base64url')
  return { verifier, challenge: new Bun.CryptoHasher('sha256').update(verifier).digest('base64url') }
}

async function register(p: OAuthPlatform, metadata: Record<string, unknown>): Promise<{ status: number; body: any }> {
  const response = await fetch(`${p.base}/oauth/register`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify(metadata) })
  return { status: response.status, body: await response.json() }
}

async function publicClient(p: OAuthPlatform, redirectUri = REDIRECT): Promise<string> {
  const registered = await register(p, { client_name: 'Refused Host', redirect_uris: [redirectUri], token_endpoint_auth_method: 'none' })
  expect(registered.status).toBe(201)
  return registered.body.client_id
}

/** An authorization request as a well-behaved host makes it; `changes` replace parameters, or drop them when undefined. */
function authorizationUrl(p: OAuthPlatform, clientId: string, challenge: string, changes: Record<string, string | undefined> = {}): URL {
  const params = {
    response_type: 'code',
    client_id: clientId,
    redirect_uri: REDIRECT,
    code_challenge: challenge,
    code_challenge_method: 'S256',
    resource: `${p.base}/mcp/everything`,
    state: 's',
    ...changes,
  }
  const url = new URL(`${p.adminUrl}/oauth/authorize`)
  for (const [key, value] of Object.entries(params)) if (value !== undefined) url.searchParams.set(key, value)
  return url
}

/** A code the person approved for a fresh public client (unless one is given), with the verifier that goes with it. */
async function approvedCode(p: OAuthPlatform, person: Person, changes: Record<string, string | undefined> = {}, clientId?: string) {
  const client = clientId ?? (await publicClient(p))
  const { verifier, challenge } = pkce()
  const { location } = await consentInBrowser(authorizationUrl(p, client, challenge, changes), person.cookie, 'approve')
  const code = location.searchParams.get('code')
  expect(code).toBeString()
  return { clientId: client, code: code!, verifier }
}

function exchange(p: OAuthPlatform, form: Record<string, string>) {
  return oauthPost(`${p.base}/oauth/token`, { grant_type: 'authorization_code', redirect_uri: REDIRECT, ...form })
}

/** An access and refresh token for the everything server (or what `changes` ask), issued to a fresh public client. */
async function issuedTokens(p: OAuthPlatform, person: Person, changes: Record<string, string | undefined> = {}) {
  const { clientId, code, verifier } = await approvedCode(p, person, changes)
  const issued = await exchange(p, { client_id: clientId, code, code_verifier: verifier })
  expect(issued.status).toBe(200)
  return { clientId, ...(issued.body as { access_token: string; refresh_token: string; scope: string }) }
}

/** Opens the consent page for a request the server sends back to the client: where the browser is sent instead. */
async function sentBack(url: URL, person: Person): Promise<URL> {
  const opened = await fetch(url, { headers: { cookie: person.cookie }, redirect: 'manual' })
  expect(opened.status).toBe(302)
  const location = new URL(opened.headers.get('location')!)
  expect(`${location.origin}${location.pathname}`).toBe(REDIRECT)
  expect(location.searchParams.get('state')).toBe('s')
  expect(location.searchParams.get('code')).toBeNull()
  return location
}

function callMcp(p: OAuthPlatform, token: string, path = '/mcp/everything') {
  return fetch(`${p.base}${path}`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } } }),
  })
}

function expectInvalidToken(response: Response) {
  expect(response.status).toBe(401)
  expect(response.headers.get('www-authenticate')).toContain('error="invalid_token"')
}

async function grantsOf(p: OAuthPlatform, person: Person): Promise<unknown[]> {
  const grants = await p.call('GET', '/api/v1/OAuthGrant', { as: person })
  expect(grants.status).toBe(200)
  return grants.body.data
}

describe('the token endpoint refuses a code presented wrongly', () => {
  test('a wrong PKCE verifier is invalid_grant and spends the code: the right one afterwards revokes the grant', async () => {
    const p = platform()
    const person = await p.person()
    const { clientId, code, verifier } = await approvedCode(p, person)
    const wrong = await exchange(p, { client_id: clientId, code, code_verifier: pkce().verifier })
    expect(wrong.status).toBe(400)
    expect(wrong.body.error).toBe('invalid_grant')
    expect(await grantsOf(p, person)).toHaveLength(1)
    // A code is good for one try (RFC 6749 §4.1.2): whoever guesses verifiers gets one, and the rightful client finds it spent.
    const right = await exchange(p, { client_id: clientId, code, code_verifier: verifier })
    expect(right.status).toBe(400)
    expect(right.body.error).toBe('invalid_grant')
    expect(await grantsOf(p, person)).toEqual([])
  })

  test('a code used a second time is invalid_grant and revokes the tokens the first use issued', async () => {
    const p = platform()
    const person = await p.person()
    const { clientId, code, verifier } = await approvedCode(p, person)
    const first = await exchange(p, { client_id: clientId, code, code_verifier: verifier })
    expect(first.status).toBe(200)
    expect((await callMcp(p, first.body.access_token)).status).toBe(200)
    const again = await exchange(p, { client_id: clientId, code, code_verifier: verifier })
    expect(again.status).toBe(400)
    expect(again.body.error).toBe('invalid_grant')
    // RFC 6749 §4.1.2: the server should revoke all tokens previously issued based on that code.
    expectInvalidToken(await callMcp(p, first.body.access_token))
    const refreshed = await oauthPost(`${p.base}/oauth/token`, { grant_type: 'refresh_token', refresh_token: first.body.refresh_token, client_id: clientId })
    expect(refreshed.body.error).toBe('invalid_grant')
  })

  test('a redirect_uri other than the authorization request’s is invalid_grant', async () => {
    const p = platform()
    const person = await p.person()
    const { clientId, code, verifier } = await approvedCode(p, person)
    // The same loopback path on another port would have been accepted at the authorization endpoint, not here.
    const other = await exchange(p, { client_id: clientId, code, code_verifier: verifier, redirect_uri: 'http://127.0.0.1:40123/callback' })
    expect(other.status).toBe(400)
    expect(other.body.error).toBe('invalid_grant')
  })

  test('a resource other than the granted one is invalid_target', async () => {
    const p = platform()
    const person = await p.person()
    const { clientId, code, verifier } = await approvedCode(p, person)
    const aggregate = await exchange(p, { client_id: clientId, code, code_verifier: verifier, resource: `${p.base}/mcp` })
    expect(aggregate.status).toBe(400)
    expect(aggregate.body.error).toBe('invalid_target')
  })

  test('a body that is not a form is invalid_request; an unknown grant_type is unsupported_grant_type', async () => {
    const p = platform()
    const clientId = await publicClient(p)
    const json = await fetch(`${p.base}/oauth/token`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ grant_type: 'authorization_code', client_id: clientId, code: 'sbac_x', code_verifier: pkce().verifier }),
    })
    expect(json.status).toBe(400)
    expect((await json.json()).error).toBe('invalid_request')
    const password = await oauthPost(`${p.base}/oauth/token`, { grant_type: 'password', client_id: clientId, username: 'someone', password: 'secret' })
    expect(password.status).toBe(400)
    expect(password.body.error).toBe('unsupported_grant_type')
  })
})

describe('the authorization endpoint', () => {
  test('an unregistered redirect_uri is refused on the page itself, never redirected to; a loopback one on another port is accepted', async () => {
    const p = platform()
    const person = await p.person()
    const clientId = await publicClient(p)
    const { challenge } = pkce()
    const elsewhere = 'https://attacker.example/callback'
    // RFC 6749 §4.1.2.1: the browser must not be sent to an address the client did not register.
    const page = await fetch(authorizationUrl(p, clientId, challenge, { redirect_uri: elsewhere }), { headers: { cookie: person.cookie }, redirect: 'manual' })
    expect(page.status).toBe(400)
    expect(page.headers.get('location')).toBeNull()
    expect(await page.text()).toContain('redirect_uri is not one the client registered')
    const api = await p.call('POST', '/api/oauth/authorize', {
      as: person,
      json: { response_type: 'code', client_id: clientId, redirect_uri: elsewhere, code_challenge: challenge, code_challenge_method: 'S256', resource: `${p.base}/mcp/everything`, state: 's' },
    })
    expect(expectProblem(api, 400, 'bad_request').detail).toContain('redirect_uri is not one the client registered')

    // RFC 8252 §7.3: a native app listens on whichever loopback port was free.
    const otherPort = 'http://127.0.0.1:40123/callback'
    const { clientId: same, code, verifier } = await approvedCode(p, person, { redirect_uri: otherPort }, clientId)
    const issued = await exchange(p, { client_id: same, code, code_verifier: verifier, redirect_uri: otherPort })
    expect(issued.status).toBe(200)
  })

  test('an error for a client the person never approved is shown on the page, never redirected: no open redirect', async () => {
    const p = platform()
    const person = await p.person()
    const phish = 'https://evil.example/phish'
    const clientId = await publicClient(p, phish)
    const { challenge } = pkce()
    const asks: Array<Record<string, string | undefined>> = [
      { response_type: 'token' },
      { code_challenge_method: 'plain' },
      { code_challenge: undefined },
      { resource: 'https://elsewhere.example/mcp/everything' },
      { scope: 'admin' },
    ]
    for (const changes of asks) {
      const page = await fetch(authorizationUrl(p, clientId, challenge, { redirect_uri: phish, ...changes }), { headers: { cookie: person.cookie }, redirect: 'manual' })
      expect(page.status, JSON.stringify(changes)).toBe(400)
      expect(page.headers.get('location')).toBeNull()
      expect(await page.text()).toContain('This sign-in request cannot be used')
    }
    // Signed out, the browser goes to the sign-in page of this origin, not to the client.
    const signedOut = await fetch(authorizationUrl(p, clientId, challenge, { redirect_uri: phish, response_type: 'token' }), { redirect: 'manual' })
    expect(signedOut.headers.get('location')).toStartWith('/login?')
    expect(await grantsOf(p, person)).toEqual([])
  })

  test('the consent page for a client never approved names where the answer sends the browser; once approved, it does not warn', async () => {
    const p = platform()
    const person = await p.person()
    const clientId = await publicClient(p)
    const first = await fetch(authorizationUrl(p, clientId, pkce().challenge), { headers: { cookie: person.cookie } })
    expect(first.status).toBe(200)
    const warned = await first.text()
    expect(warned).toContain('You have not allowed this application before')
    expect(warned).toContain('<strong>127.0.0.1:33418</strong>')
    await approvedCode(p, person, {}, clientId)
    const again = await fetch(authorizationUrl(p, clientId, pkce().challenge), { headers: { cookie: person.cookie } })
    expect(await again.text()).not.toContain('You have not allowed this application before')
  })

  test('without PKCE, or with the plain method, the browser goes back to a client the person approved before with invalid_request', async () => {
    const p = platform()
    const person = await p.person()
    const clientId = await publicClient(p)
    await approvedCode(p, person, {}, clientId)
    const granted = await grantsOf(p, person)
    const { verifier, challenge } = pkce()
    const missing = await sentBack(authorizationUrl(p, clientId, challenge, { code_challenge: undefined, code_challenge_method: undefined }), person)
    expect(missing.searchParams.get('error')).toBe('invalid_request')
    expect(missing.searchParams.get('iss')).toBe(p.base)
    const plain = await sentBack(authorizationUrl(p, clientId, verifier, { code_challenge_method: 'plain' }), person)
    expect(plain.searchParams.get('error')).toBe('invalid_request')
    expect(await grantsOf(p, person)).toEqual(granted)
  })

  test('a resource of another host, or a server that does not exist, goes back to a client approved before with invalid_target', async () => {
    const p = platform()
    const person = await p.person()
    const clientId = await publicClient(p)
    await approvedCode(p, person, {}, clientId)
    const granted = await grantsOf(p, person)
    const { challenge } = pkce()
    const foreign = await sentBack(authorizationUrl(p, clientId, challenge, { resource: 'https://elsewhere.example/mcp/everything' }), person)
    expect(foreign.searchParams.get('error')).toBe('invalid_target')
    // Everyone may use `everything` (the platform's company-wide rule); nobody may use a server there is not.
    const missing = await sentBack(authorizationUrl(p, clientId, challenge, { resource: `${p.base}/mcp/no-such-server` }), person)
    expect(missing.searchParams.get('error')).toBe('invalid_target')
    expect(await grantsOf(p, person)).toEqual(granted)
  })

  test('a denied consent goes back to the client with access_denied and its state, and grants nothing', async () => {
    const p = platform()
    const person = await p.person()
    const clientId = await publicClient(p)
    const { location } = await consentInBrowser(authorizationUrl(p, clientId, pkce().challenge), person.cookie, 'deny')
    expect(`${location.origin}${location.pathname}`).toBe(REDIRECT)
    expect(location.searchParams.get('error')).toBe('access_denied')
    expect(location.searchParams.get('state')).toBe('s')
    expect(location.searchParams.get('code')).toBeNull()
    expect(await grantsOf(p, person)).toEqual([])
  })

  test('a client metadata document naming another client_id than its URL is refused on the page, never redirected to', async () => {
    const p = platform()
    const person = await p.person()
    const tls = Bun.serve({
      hostname: '127.0.0.1',
      port: 0,
      tls: { cert: Bun.file(TLS_CERT), key: Bun.file(TLS_KEY) },
      fetch: (): Response => Response.json({ client_id: `https://localhost:${tls.port}/impersonated/client.json`, client_name: 'Impostor', redirect_uris: [REDIRECT], token_endpoint_auth_method: 'none' }),
    })
    try {
      const documentUrl = `https://localhost:${tls.port}/host/client.json`
      const page = await fetch(authorizationUrl(p, documentUrl, pkce().challenge), { headers: { cookie: person.cookie }, redirect: 'manual' })
      expect(page.status).toBe(400)
      expect(page.headers.get('location')).toBeNull()
      expect(await page.text()).toContain('names a different client_id')
      const stored = await p.store.db.selectFrom('oauth_clients').select('id').where('client_id', '=', documentUrl).execute()
      expect(stored).toEqual([])
    } finally {
      await tls.stop(true)
    }
  })
})

describe('the protected resources', () => {
  test('a token for one MCP server is invalid_token at the aggregate and at the API', async () => {
    const p = platform()
    const person = await p.person()
    const { access_token } = await issuedTokens(p, person)
    expect((await callMcp(p, access_token)).status).toBe(200)
    expectInvalidToken(await callMcp(p, access_token, '/mcp'))
    expectInvalidToken(await fetch(`${p.base}/api/v1/AgentConfigRecord`, { headers: { authorization: `Bearer ${access_token}` } }))
  })

  test('an expired access token is invalid_token', async () => {
    const p = platform()
    const person = await p.person()
    // Not used before the clock moves: nothing about it is cached that could outlive its expiry.
    const { access_token } = await issuedTokens(p, person)
    p.skew.ms = 2 * 60 * 60 * 1000
    try {
      expectInvalidToken(await callMcp(p, access_token))
    } finally {
      p.skew.ms = 0
    }
  })

  test('no OAuth access token may approve grants: one for an MCP server is refused, one for the API with scope api is forbidden', async () => {
    const p = platform()
    const person = await p.person()
    const clientId = await publicClient(p)
    const approve = { response_type: 'code', client_id: clientId, redirect_uri: REDIRECT, code_challenge: pkce().challenge, code_challenge_method: 'S256', resource: `${p.base}/mcp/everything`, decision: 'approve' }
    const mcp = await issuedTokens(p, person)
    const withMcp = await p.call('POST', '/api/oauth/authorize', { headers: { authorization: `Bearer ${mcp.access_token}` }, json: approve })
    expect(withMcp.status).toBe(401)
    expect(withMcp.headers.get('www-authenticate')).toContain('error="invalid_token"')

    const api = await issuedTokens(p, person, { resource: p.base, scope: 'api' })
    expect(api.scope).toBe('api')
    const withApi = await p.call('POST', '/api/oauth/authorize', { headers: { authorization: `Bearer ${api.access_token}` }, json: approve })
    expectProblem(withApi, 403, 'forbidden')
    // Only the two grants the person approved on the page exist: neither token made a third.
    expect(await grantsOf(p, person)).toHaveLength(2)
  })
})

describe('what an OAuth access token may not make', () => {
  test('no credential, nor a change to how the account signs in: the grant’s revocation leaves nothing of the host behind', async () => {
    const p = platform()
    const person = await p.person()
    const api = await issuedTokens(p, person, { resource: p.base, scope: 'api' })
    const bearer = { authorization: `Bearer ${api.access_token}` }
    // What the token may do it still does: it is a working API token for the person.
    expect((await p.call('GET', '/api/v1/ApiToken', { as: null, headers: bearer })).status).toBe(200)

    const doors: Array<[string, string, unknown]> = [
      ['POST', '/api/v1/ApiToken', { name: 'kept after revocation' }],
      ['PATCH', `/api/v1/ApiToken/${crypto.randomUUID()}`, { expires_at: null }],
      ['POST', '/api/v1/User', { email: 'minted@example.com', username: `minted-${Date.now()}`, password: 'chosen-by-the-host' }],
      ['PATCH', `/api/v1/User/${person.userId}`, { email: 'host@example.com' }],
      ['POST', '/api/v1/UserPlatform', { user_id: person.userId, platform: 'telegram', platform_user_id: '424242' }],
      ['POST', '/api/me/channel-links', undefined],
      ['POST', '/api/me/password', { current_password: 'oauth-person-password', new_password: 'chosen-by-the-host' }],
      ['POST', `/api/users/${person.userId}/password-reset`, {}],
    ]
    for (const [method, path, json] of doors) {
      const refused = await p.call(method, path, { as: null, headers: bearer, json })
      expect(refused.status, `${method} ${path}`).toBe(403)
      expect(expectProblem(refused, 403, 'forbidden').detail, `${method} ${path}`).toContain('may not create credentials')
    }
    const tokens = await p.call('GET', '/api/v1/ApiToken', { as: person })
    expect(tokens.body.data.map((t: { name: string }) => t.name)).toEqual(['tests'])
    const links = await p.store.db.selectFrom('channel_link_codes').select('user_id').where('user_id', '=', person.userId).execute()
    expect(links).toEqual([])
    expect((await p.store.db.selectFrom('users').select('id').where('email', '=', 'minted@example.com').execute())).toEqual([])

    // Revoked, the grant leaves the host nothing that works.
    for (const grant of (await grantsOf(p, person)) as Array<{ id: string }>) expect((await p.call('DELETE', `/api/v1/OAuthGrant/${grant.id}`, { as: person })).status).toBe(204)
    expect((await p.call('GET', '/api/v1/ApiToken', { as: null, headers: bearer })).status).toBe(401)
  })
})

describe('clients', () => {
  test('a confidential client without its secret, or with a wrong Basic one, is invalid_client; the code survives both', async () => {
    const p = platform()
    const person = await p.person()
    const registered = await register(p, { client_name: 'Confidential Host', redirect_uris: [REDIRECT] })
    expect(registered.status).toBe(201)
    const { client_id: clientId, client_secret: secret, token_endpoint_auth_method: method } = registered.body
    // RFC 7591 §2: a client that names no method authenticates with a secret, over Basic.
    expect(method).toBe('client_secret_basic')
    expect(secret).toStartWith('sbs_')
    const { code, verifier } = await approvedCode(p, person, {}, clientId)
    const form = { grant_type: 'authorization_code', code, code_verifier: verifier, redirect_uri: REDIRECT }

    const without = await exchange(p, { client_id: clientId, code, code_verifier: verifier })
    expect(without.status).toBe(401)
    expect(without.body.error).toBe('invalid_client')
    const basic = (password: string) =>
      fetch(`${p.base}/oauth/token`, {
        method: 'POST',
        headers: { 'content-type': 'application/x-www-form-urlencoded', authorization: `Basic ${btoa(`${clientId}:${password}`)}` },
        body: new URLSearchParams(form),
      })
    const wrong = await basic('sbs_not-the-secret')
    expect(wrong.status).toBe(401)
    expect((await wrong.json()).error).toBe('invalid_client')
    // RFC 6749 §5.2: a client that authenticated through the Authorization header is told the scheme it used.
    expect(wrong.headers.get('www-authenticate')).toStartWith('Basic')
    // The client's own failures do not spend the code: whoever does not hold the secret cannot burn it.
    expect((await basic(secret)).status).toBe(200)
  })

  test('registration without redirect_uris is invalid_redirect_uri', async () => {
    const p = platform()
    const refused = await register(p, { client_name: 'No Redirects', token_endpoint_auth_method: 'none' })
    expect(refused.status).toBe(400)
    expect(refused.body.error).toBe('invalid_redirect_uri')
  })

  test('registration refuses unsafe redirect URIs, grant types it does not serve, and a body that is not JSON, storing nothing', async () => {
    const p = platform()
    const count = async () => (await p.store.db.selectFrom('oauth_clients').select('id').execute()).length
    const before = await count()
    const refusals: Array<[Record<string, unknown>, string]> = [
      [{ redirect_uris: [], token_endpoint_auth_method: 'none' }, 'invalid_redirect_uri'],
      [{ redirect_uris: ['javascript:alert(1)'], token_endpoint_auth_method: 'none' }, 'invalid_redirect_uri'],
      // RFC 8252 §8.3: plain http only to the loopback interface.
      [{ redirect_uris: ['http://example.com/cb'], token_endpoint_auth_method: 'none' }, 'invalid_redirect_uri'],
      [{ redirect_uris: [REDIRECT], grant_types: ['client_credentials'], token_endpoint_auth_method: 'none' }, 'invalid_client_metadata'],
    ]
    const answers = await Promise.all(
      refusals.map(async ([metadata]) => {
        const refused = await register(p, metadata)
        return [metadata, refused.status, refused.body.error]
      }),
    )
    expect(answers).toEqual(refusals.map(([metadata, error]) => [metadata, 400, error]))
    const notJson = await fetch(`${p.base}/oauth/register`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: `redirect_uris=${REDIRECT}` })
    expect(notJson.status).toBe(400)
    expect((await notJson.json()).error).toBe('invalid_client_metadata')
    expect(await count()).toBe(before)
  })
})

describe('attacks on the flow', () => {
  test('a redirect_uri that only looks like the registered one is refused on the page, never redirected to', async () => {
    const p = platform()
    const person = await p.person()
    const app = 'https://app.example/cb'
    const registered = await register(p, { client_name: 'Web Host', redirect_uris: [app, REDIRECT], token_endpoint_auth_method: 'none' })
    expect(registered.status).toBe(201)
    const { challenge } = pkce()
    const lookalikes = [
      'https://app.example/cbx',
      'https://app.example/cb/',
      'https://app.example/cb/../evil',
      'https://app.example/cb/%2e%2e/evil',
      'https://app.example/CB',
      'https://app.example/cb?next=https://evil.example',
      'https://app.example/cb#fragment',
      'https://app.example:8443/cb',
      'http://app.example/cb',
      'https://app.example.evil.example/cb',
      'https://app.example@evil.example/cb',
      'https://evil.example/cb?https://app.example/cb',
      'https://evil.example#https://app.example/cb',
      // A loopback redirect may change its port, nothing else: not its host, path, query, fragment or user.
      'http://127.0.0.1:33418/callback/',
      'http://127.0.0.1:33418/callback?x=1',
      'http://127.0.0.1:33418/callback#x',
      'http://attacker@127.0.0.1:40123/callback',
      'http://localhost:33418/callback',
      'http://127.0.0.1.evil.example:33418/callback',
      'https://127.0.0.1:33418/callback',
    ]
    for (const redirect_uri of lookalikes) {
      const page = await fetch(authorizationUrl(p, registered.body.client_id, challenge, { redirect_uri }), { headers: { cookie: person.cookie }, redirect: 'manual' })
      expect(page.status, redirect_uri).toBe(400)
      expect(page.headers.get('location'), redirect_uri).toBeNull()
    }
    // The registered ones themselves are taken.
    for (const redirect_uri of [app, REDIRECT, 'http://127.0.0.1:40123/callback']) {
      const page = await fetch(authorizationUrl(p, registered.body.client_id, challenge, { redirect_uri }), { headers: { cookie: person.cookie }, redirect: 'manual' })
      expect(page.status, redirect_uri).toBe(200)
    }
  })

  test('a code stolen by another client is useless to it, and its rightful client then finds the grant revoked', async () => {
    const p = platform()
    const person = await p.person()
    const { clientId, code, verifier } = await approvedCode(p, person)
    const thief = await publicClient(p)
    const stolen = await exchange(p, { client_id: thief, code, code_verifier: verifier })
    expect(stolen.status).toBe(400)
    expect(stolen.body.error).toBe('invalid_grant')
    expect(stolen.body.access_token).toBeUndefined()
    // The code is spent by the attempt: presented again it reads as stolen, and the grant goes.
    const rightful = await exchange(p, { client_id: clientId, code, code_verifier: verifier })
    expect(rightful.body.error).toBe('invalid_grant')
    expect(await grantsOf(p, person)).toEqual([])
  })

  test('a refresh token presented by another client is refused and stays its own client’s', async () => {
    const p = platform()
    const person = await p.person()
    const { clientId, refresh_token } = await issuedTokens(p, person)
    const thief = await publicClient(p)
    const stolen = await oauthPost(`${p.base}/oauth/token`, { grant_type: 'refresh_token', refresh_token, client_id: thief })
    expect(stolen.status).toBe(400)
    expect(stolen.body.error).toBe('invalid_grant')
    // The thief's attempt neither spent it nor revoked anything: the rightful client refreshes as before.
    const rightful = await oauthPost(`${p.base}/oauth/token`, { grant_type: 'refresh_token', refresh_token, client_id: clientId })
    expect(rightful.status).toBe(200)
    expect((await callMcp(p, rightful.body.access_token)).status).toBe(200)
  })

  test('a refresh cannot widen the scope or move the grant to another resource', async () => {
    const p = platform()
    const person = await p.person()
    const { clientId, refresh_token, scope } = await issuedTokens(p, person)
    expect(scope).toBe('mcp')
    const wider = await oauthPost(`${p.base}/oauth/token`, { grant_type: 'refresh_token', refresh_token, client_id: clientId, scope: 'mcp api' })
    expect(wider.status).toBe(400)
    expect(wider.body.error).toBe('invalid_scope')
    const elsewhere = await oauthPost(`${p.base}/oauth/token`, { grant_type: 'refresh_token', refresh_token, client_id: clientId, resource: p.base })
    expect(elsewhere.status).toBe(400)
    expect(elsewhere.body.error).toBe('invalid_target')
    // Both refusals left the refresh token unspent.
    expect((await oauthPost(`${p.base}/oauth/token`, { grant_type: 'refresh_token', refresh_token, client_id: clientId })).status).toBe(200)
  })

  test('a client metadata document on an internal address is never fetched', async () => {
    const p = platform()
    const person = await p.person()
    // The suite allows loopback (its servers live there); every other private range stays refused.
    for (const documentUrl of ['https://10.0.0.1/client.json', 'https://169.254.169.254/latest/meta-data/client.json', 'https://[fd00::1]/client.json', 'https://192.168.1.1:8443/client.json']) {
      const page = await fetch(authorizationUrl(p, documentUrl, pkce().challenge), { headers: { cookie: person.cookie }, redirect: 'manual' })
      expect(page.status, documentUrl).toBe(400)
      expect(page.headers.get('location')).toBeNull()
      // Refused by the address policy before any connection, not after a connection attempt failed.
      expect(await page.text(), documentUrl).toMatch(/The client metadata document at .* could not be fetched \(.* resolves to .*, a (private|link-local|unique-local)[^;]*; the platform does not connect to/)
    }
  })

  test('the consent page cannot be framed, and its form is refused from another site', async () => {
    const p = platform()
    const person = await p.person()
    const clientId = await publicClient(p)
    const url = authorizationUrl(p, clientId, pkce().challenge)
    const opened = await fetch(url, { headers: { cookie: person.cookie } })
    expect(opened.status).toBe(200)
    expect(opened.headers.get('content-security-policy')).toContain("frame-ancestors 'none'")
    const form = consentForm(await opened.text())
    form.set('decision', 'approve')
    const post = (headers: Record<string, string>, body = form) =>
      fetch(new URL('/oauth/authorize', url), { method: 'POST', headers: { cookie: person.cookie, 'content-type': 'application/x-www-form-urlencoded', ...headers }, body, redirect: 'manual' })
    // Another site's page posting the form with the person's cookie: its Origin gives it away.
    expect((await post({ origin: 'https://evil.example' })).status).toBe(403)
    expect((await post({ origin: 'null' })).status).toBe(403)
    expect((await post({ 'sec-fetch-site': 'cross-site' })).status).toBe(403)
    expect(await grantsOf(p, person)).toEqual([])
    // The same form from the page itself is taken.
    expect((await post({ origin: url.origin })).status).toBe(303)
    expect(await grantsOf(p, person)).toHaveLength(1)
  })
})
