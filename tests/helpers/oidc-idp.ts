/**
 * A real OpenID Connect provider on loopback for the sign-in tests: the npm `oidc-provider` package (discovery, JWKS,
 * authorization code with PKCE, ID tokens signed with a key made here), behind a small proxy that is its issuer
 * address. The proxy lets a test play a provider gone wrong: the ID token of a token response re-signed with the
 * provider's own key but with claims changed (another audience, issuer or nonce, expired), or signed with a key
 * the provider never published. People sign in without a form: the interaction logs in whoever `loginAs` names.
 */
import { createServer, type IncomingMessage, type ServerResponse } from 'node:http'
import { exportJWK, generateKeyPair, SignJWT, decodeJwt, decodeProtectedHeader, type JWK } from 'jose'
import Provider from 'oidc-provider'
import { freePort } from './ports.ts'

export interface IdpAccount {
  email?: string
  email_verified?: boolean
  name?: string
  preferred_username?: string
  groups?: string[]
}

export interface IdpClient {
  client_id: string
  client_secret: string
  redirect_uris: string[]
  post_logout_redirect_uris?: string[]
}

/** The issuer address of a test provider listening on `port` (known before it starts, for the client settings). */
export const idpIssuer = (port: number) => `http://127.0.0.1:${port}`

export async function startTestIdp(clients: IdpClient[], proxyPort = freePort()) {
  const { privateKey } = await generateKeyPair('RS256', { extractable: true })
  const jwk: JWK = { ...(await exportJWK(privateKey)), kid: 'test-key-1', alg: 'RS256', use: 'sig' }
  const accounts = new Map<string, IdpAccount>()
  const state = {
    /** Who the next sign-in at the provider is (the subject). */
    loginAs: '',
    /** Changes the ID token of the next token responses (re-signed with the provider's key unless `foreignKey`). */
    tamper: null as null | ((claims: Record<string, unknown>) => Record<string, unknown>),
    foreignKey: false,
  }

  const issuer = idpIssuer(proxyPort)
  const provider = new Provider(issuer, {
    clients: clients.map((c) => ({ ...c, response_types: ['code'], grant_types: ['authorization_code'], token_endpoint_auth_method: 'client_secret_basic' })),
    jwks: { keys: [jwk as never] },
    pkce: { required: () => true },
    features: { devInteractions: { enabled: false } },
    scopes: ['openid', 'email', 'profile', 'groups'],
    claims: { openid: ['sub'], email: ['email', 'email_verified'], profile: ['name', 'preferred_username'], groups: ['groups'] },
    // The claims of the scopes asked for go in the ID token itself, as most providers' defaults do.
    conformIdTokenClaims: false,
    findAccount: async (_ctx: unknown, id: string) => (accounts.has(id) ? { accountId: id, claims: async () => ({ sub: id, ...accounts.get(id) }) } : undefined),
    cookies: { keys: ['test-cookie-key-0123456789'] },
  } as never)

  // The interaction is a login nobody types: the current `loginAs`, with every scope asked for granted.
  async function interaction(req: IncomingMessage, res: ServerResponse) {
    const details = await provider.interactionDetails(req, res)
    const accountId = state.loginAs
    const grant = new provider.Grant({ accountId, clientId: String(details.params.client_id) })
    grant.addOIDCScope(String(details.params.scope))
    const grantId = await grant.save()
    await provider.interactionFinished(req, res, { login: { accountId }, consent: { grantId } }, { mergeWithLastSubmission: false })
  }
  const handle = provider.callback()
  const inner = createServer((req, res) => {
    if (req.url?.startsWith('/interaction/')) {
      interaction(req, res).catch((error) => {
        res.statusCode = 500
        res.end(String(error))
      })
      return
    }
    handle(req, res)
  })
  const innerPort = freePort()
  await new Promise<void>((resolve) => inner.listen(innerPort, '127.0.0.1', resolve))

  async function resign(body: Record<string, unknown>): Promise<Record<string, unknown>> {
    if (!state.tamper || typeof body.id_token !== 'string') return body
    const header = decodeProtectedHeader(body.id_token)
    const claims = state.tamper(decodeJwt(body.id_token) as Record<string, unknown>)
    const key = state.foreignKey ? (await generateKeyPair('RS256')).privateKey : privateKey
    const idToken = await new SignJWT(claims).setProtectedHeader({ alg: 'RS256', kid: header.kid ?? jwk.kid, typ: 'JWT' }).sign(key)
    return { ...body, id_token: idToken }
  }

  // The issuer's address: forwards everything, and rewrites token responses when a test asks.
  const proxy = Bun.serve({
    hostname: '127.0.0.1',
    port: proxyPort,
    async fetch(req) {
      const url = new URL(req.url)
      const headers = new Headers(req.headers)
      headers.set('host', `127.0.0.1:${proxyPort}`)
      const forwarded = await fetch(`http://127.0.0.1:${innerPort}${url.pathname}${url.search}`, {
        method: req.method,
        headers,
        body: req.method === 'GET' || req.method === 'HEAD' ? undefined : await req.arrayBuffer(),
        redirect: 'manual',
      })
      const out = new Headers(forwarded.headers)
      out.delete('content-length')
      out.delete('content-encoding')
      if (url.pathname === '/token' && forwarded.ok && state.tamper) {
        const body = await resign((await forwarded.json()) as Record<string, unknown>)
        return Response.json(body, { status: forwarded.status, headers: out })
      }
      return new Response(await forwarded.arrayBuffer(), { status: forwarded.status, headers: out })
    },
  })

  return {
    issuer,
    accounts,
    state,
    async stop() {
      proxy.stop(true)
      await new Promise<void>((resolve) => inner.close(() => resolve()))
    },
  }
}

export type TestIdp = Awaited<ReturnType<typeof startTestIdp>>

/**
 * A browser's trip through the provider without a browser: follows the provider's redirects with its cookies until
 * it is sent back to `redirectUri`, and answers that address (with the code and state), or the last response when
 * the provider stops elsewhere.
 */
export async function throughProvider(authorizationUrl: string, redirectUri: string): Promise<URL> {
  const jar = new Map<string, string>()
  let url = authorizationUrl
  for (let hop = 0; hop < 10; hop++) {
    if (url.startsWith(redirectUri)) return new URL(url)
    const response = await fetch(url, { redirect: 'manual', headers: { cookie: [...jar].map(([k, v]) => `${k}=${v}`).join('; ') } })
    for (const cookie of response.headers.getSetCookie()) {
      const [pair] = cookie.split(';')
      const at = pair!.indexOf('=')
      jar.set(pair!.slice(0, at), pair!.slice(at + 1))
    }
    const location = response.headers.get('location')
    if (!location) throw new Error(`The provider stopped at ${url} with ${response.status}: ${(await response.text()).slice(0, 300)}`)
    url = new URL(location, url).href
  }
  throw new Error('The provider redirected more than ten times.')
}
