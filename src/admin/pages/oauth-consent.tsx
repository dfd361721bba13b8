/** @jsxImportSource hono/jsx */
import type { Context, Hono } from 'hono'
import { cspHeader, PAGE_POLICY } from '../../http/security-headers.ts'
import { problemOf, type ApiClient, type Schema } from '../api-client.ts'
import type { AdminEnv } from '../context.ts'
import { PageRefusal } from '../console/routes.tsx'
import { Alert } from '../components/feedback.tsx'

/** The parameters of an authorization request the page carries from the query to its form, and to the API. */
const PARAMS = ['response_type', 'client_id', 'redirect_uri', 'code_challenge', 'code_challenge_method', 'resource', 'scope', 'state'] as const

type Consent = Schema<'OAuthConsent'>
/** What an authorization request carries, as the API takes it (the query of /oauth/authorize). */
type AuthorizationRequest = Schema<'OAuthAuthorizationRequest'>

const SCOPE_TEXT: Record<string, string> = {
  mcp: 'Use the MCP tools, resources and prompts you may use, as you.',
  api: 'Call the Switchboard API as you: read and change what you may read and change.',
}

function ConsentPage({ consent, request, person }: { consent: Consent; request: Record<string, string>; person: string }) {
  const name = consent.client.name || 'An application'
  return (
    <section class="card consent" aria-labelledby="consent-title">
      <h1 id="consent-title">
        Allow {name} to use {consent.resource_name}?
      </h1>
      <p>
        <strong>{name}</strong> at <strong>{consent.client.origin}</strong> asks to act as you ({person}) on <code>{consent.resource}</code>. It will be able to:
      </p>
      <ul>
        {consent.scopes.map((scope) => (
          <li>{SCOPE_TEXT[scope] ?? scope}</li>
        ))}
      </ul>
      {consent.approved_before ? null : (
        <Alert>
          You have not allowed this application before. Your answer sends your browser to <strong>{consent.redirect_host}</strong>: go on only if that is where you
          expect to go.
        </Alert>
      )}
      {consent.client.verified ? null : (
        <p class="problem" role="note">
          This application registered itself: its name is only what it claims. Allow it only if you started this from an application you trust at {consent.client.origin}.
        </p>
      )}
      <p>
        After you answer, your browser goes back to <code>{consent.redirect_uri}</code>. You can revoke this access at any time under <a href="/me/connections">My connections</a>.
      </p>
      <form method="post" action="/oauth/authorize">
        {PARAMS.filter((key) => request[key] !== undefined).map((key) => (
          <input type="hidden" name={key} value={request[key]} />
        ))}
        <button type="submit" name="decision" value="approve">
          Allow
        </button>{' '}
        <button type="submit" name="decision" value="deny">
          Deny
        </button>
      </form>
    </section>
  )
}

/** Where the consent form may send the browser on: this origin, and the client's redirect URI (CSP form-action covers redirects). */
function formTargets(redirectUri: string): string {
  const url = new URL(redirectUri)
  const target = url.protocol === 'http:' || url.protocol === 'https:' ? url.origin : url.protocol
  return cspHeader({ ...PAGE_POLICY, 'form-action': ["'self'", target] })
}

function requestOf(source: Record<string, unknown>): AuthorizationRequest {
  return Object.fromEntries(PARAMS.flatMap((key) => (typeof source[key] === 'string' ? [[key, source[key] as string]] : [])))
}

/**
 * The authorization endpoint of the platform's OAuth server, on the console: the person signs in (the console's
 * own redirect), sees which application asks for what, and allows or denies it. Checking and deciding are the
 * public API's (POST /api/oauth/authorize), as the signed-in person.
 */
export function mountOAuthConsent(app: Hono<AdminEnv>, api: ApiClient): void {
  const ask = async (c: Context<AdminEnv>, request: AuthorizationRequest, decision?: 'approve' | 'deny') => {
    const { data, error, response } = await api.as(c).POST('/api/oauth/authorize', { body: { ...request, ...(decision ? { decision } : {}) } })
    if (!data) throw new PageRefusal(response.status, `This sign-in request cannot be used: ${problemOf(error).detail ?? `the API answered ${response.status}`}`)
    return data
  }

  app.get('/oauth/authorize', async (c) => {
    const request = requestOf(c.req.query())
    const answer = await ask(c, request)
    if (answer.redirect_to) return c.redirect(answer.redirect_to, 302)
    const consent = answer.consent!
    const me = c.get('me')
    c.header('content-security-policy', formTargets(consent.redirect_uri))
    c.header('cache-control', 'no-store')
    return c.render(<ConsentPage consent={consent} request={request} person={me.user.display_name || me.user.username} />, { title: 'Allow access?' })
  })

  app.post('/oauth/authorize', async (c) => {
    const form = await c.req.parseBody()
    const decision = form.decision === 'approve' ? 'approve' : 'deny'
    const answer = await ask(c, requestOf(form), decision)
    return c.redirect(answer.redirect_to!, 303)
  })
}
