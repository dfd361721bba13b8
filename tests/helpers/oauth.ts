import { join } from 'node:path'
import type { OAuthClientProvider } from '@modelcontextprotocol/sdk/client/auth.js'
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from '@modelcontextprotocol/sdk/shared/auth.js'
import { EVERYTHING_STDIO, startMcpPlatform, type McpTestPlatform } from './mcp.ts'
import type { Principal } from './platform.ts'
import { freePort } from './ports.ts'
import { signIn } from './web-chat.ts'

export const TLS_CERT = join(import.meta.dir, '..', 'fixtures', 'tls', 'localhost.crt')
export const TLS_KEY = join(import.meta.dir, '..', 'fixtures', 'tls', 'localhost.key')

export interface OAuthPlatform extends McpTestPlatform {
  /** The console, really served: the consent page is there. */
  adminUrl: string
  /** Someone of the root company who signed in on the console (a browser's cookie). */
  person(): Promise<Principal & { cookie: string }>
  /** A clock skew the platform's clock adds, to let tokens expire without waiting. */
  skew: { ms: number }
}

/** The platform with the `everything` MCP server, its api and console served on loopback, and a movable clock. */
export async function startOAuthPlatform(env: Record<string, string> = {}): Promise<OAuthPlatform> {
  const adminPort = freePort()
  const skew = { ms: 0 }
  const p = await startMcpPlatform({
    env: { SWITCHBOARD_ADMIN_PORT: String(adminPort), SWITCHBOARD_OUTBOUND_CA_FILE: TLS_CERT, ...env },
    clock: { now: () => Date.now() + skew.ms },
    servers: [EVERYTHING_STDIO],
    rules: [{ server: 'everything', tool: '*', effect: 'allow' }],
  })
  const admin = Bun.serve({ hostname: '127.0.0.1', port: adminPort, fetch: p.admin.fetch, idleTimeout: 60 })
  const adminUrl = `http://127.0.0.1:${adminPort}`
  return {
    ...p,
    adminUrl,
    skew,
    async person() {
      const password = 'oauth-person-password'
      const made = await p.createUser({ password })
      return { ...made, cookie: await signIn(adminUrl, made.username, password) }
    },
    async close() {
      await admin.stop(true)
      await p.close()
    },
  }
}

const decode = (text: string) => text.replace(/&quot;/g, '"').replace(/&#39;/g, "'").replace(/&lt;/g, '<').replace(/&gt;/g, '>').replace(/&amp;/g, '&')

/** The hidden inputs of the page's consent form, as a browser would submit them. */
export function consentForm(html: string): URLSearchParams {
  const form = /<form method="post" action="\/oauth\/authorize">([\s\S]*?)<\/form>/.exec(html)
  if (!form) throw new Error(`no consent form on the page:\n${html.slice(0, 2000)}`)
  const fields = new URLSearchParams()
  for (const input of form[1]!.matchAll(/<input type="hidden" name="([^"]+)" value="([^"]*)"\/?>/g)) fields.append(input[1]!, decode(input[2]!))
  return fields
}

/**
 * What a person's browser does with an authorization URL: opens the consent page signed in, submits its form with
 * the button chosen, and ends at the client's redirect URI, whose address is returned.
 */
export async function consentInBrowser(authorizationUrl: URL, cookie: string, decision: 'approve' | 'deny'): Promise<{ page: string; location: URL }> {
  const opened = await fetch(authorizationUrl, { headers: { cookie }, redirect: 'manual' })
  const page = await opened.text()
  if (opened.status !== 200) throw new Error(`the consent page answered ${opened.status}: ${opened.headers.get("location") ?? page.slice(0, 500)}`)
  const form = consentForm(page)
  form.set('decision', decision)
  const answered = await fetch(new URL('/oauth/authorize', authorizationUrl), {
    method: 'POST',
    headers: { cookie, origin: authorizationUrl.origin, 'content-type': 'application/x-www-form-urlencoded' },
    body: form,
    redirect: 'manual',
  })
  if (answered.status !== 303) throw new Error(`submitting consent answered ${answered.status}: ${(await answered.text()).slice(0, 500)}`)
  return { page, location: new URL(answered.headers.get('location')!) }
}

/**
 * An MCP host's OAuth client state, in memory, as the SDK's client keeps it through the provider: it registers
 * dynamically, or names its metadata document when `clientMetadataUrl` is given. The browser step is the test's.
 */
export class HostProvider implements OAuthClientProvider {
  client?: OAuthClientInformationMixed
  saved?: OAuthTokens
  verifier = ''
  /** Where the host sent the person: the authorization URL of the last redirect. */
  authorizationUrl?: URL

  constructor(
    readonly redirectUrl: string,
    readonly clientMetadataUrl?: string,
    readonly name = 'Test Host',
  ) {}

  get clientMetadata(): OAuthClientMetadata {
    return { client_name: this.name, redirect_uris: [this.redirectUrl], grant_types: ['authorization_code', 'refresh_token'], response_types: ['code'], token_endpoint_auth_method: 'none' }
  }
  clientInformation() {
    return this.client
  }
  saveClientInformation(info: OAuthClientInformationMixed) {
    this.client = info
  }
  tokens() {
    return this.saved
  }
  saveTokens(tokens: OAuthTokens) {
    this.saved = tokens
  }
  redirectToAuthorization(url: URL) {
    this.authorizationUrl = url
  }
  saveCodeVerifier(verifier: string) {
    this.verifier = verifier
  }
  codeVerifier() {
    return this.verifier
  }
  state() {
    return 'state-' + crypto.randomUUID()
  }
}

/** A form post to the platform's token or revocation endpoint, answered as parsed JSON (or null for an empty body). */
export async function oauthPost(url: string, form: Record<string, string>): Promise<{ status: number; body: any; headers: Headers }> {
  const response = await fetch(url, { method: 'POST', headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: new URLSearchParams(form) })
  const text = await response.text()
  return { status: response.status, body: text ? JSON.parse(text) : null, headers: response.headers }
}
