/** @jsxImportSource hono/jsx */
import type { Context, Hono } from 'hono'
import { isUuid } from '../../models/fields.ts'
import { refusedHere, problemText, type Answer, type ApiClient, type Schema } from '../api-client.ts'
import type { AdminEnv } from '../context.ts'
import { Alert, Notice } from '../components/feedback.tsx'
import { Table } from '../components/table.tsx'
import { Time } from '../components/time.tsx'

type Ctx = Context<AdminEnv>

type Connection = Answer<'get', '/api/mcp/connections'>['data'][number]
type Grant = Schema<'OAuthGrant'>


const BADGE: Record<Connection['status'], { text: string; className: string }> = {
  connected: { text: 'Connected', className: 'badge badge-ok' },
  expired: { text: 'Expired', className: 'badge badge-warning' },
  not_connected: { text: 'Not connected', className: 'badge' },
}

/**
 * On to the server's sign-in page. Not by redirecting the form's POST: the page's CSP lets forms go only to this
 * origin, and a browser holds a form's redirects to that too. A navigation of the page's own is no form's, and the
 * person sees where it goes. Only http(s): the address comes from the server's own metadata.
 */
function signInElsewhere(c: Ctx, authorizationUrl: string, server: string) {
  const url = URL.canParse(authorizationUrl) ? new URL(authorizationUrl) : undefined
  if (!url || (url.protocol !== 'https:' && url.protocol !== 'http:')) return c.text(`The server ${server} gave a sign-in address that is not a web page.`, 502)
  c.header('cache-control', 'no-store')
  return c.html(
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta http-equiv="refresh" content={`0;url=${url.href}`} />
        <title>Sign in at {url.host}</title>
      </head>
      <body>
        <p>
          To connect your account on {server}, sign in at <a href={url.href}>{url.host}</a>.
        </p>
      </body>
    </html>,
  )
}

function ConnectionsSection({ connections }: { connections: Connection[] }) {
  return (
    <section id="accounts" class="card portal-wide" aria-labelledby="accounts-title">
      <h2 id="accounts-title">Your accounts on MCP servers</h2>
      <p>These servers sign each person in with their own account. Until you connect, their tools are not available to you or your agents.</p>
      {connections.length === 0 ? (
        <p>No MCP server of your company asks you to connect an account.</p>
      ) : (
        <Table caption="Your connections" headers={['Server', 'Status', 'Since']} actions>
          {connections.map((c) => (
            <tr id={`connection-${c.server}`}>
              <td>{c.server}</td>
              <td>
                <span class={BADGE[c.status].className}>{BADGE[c.status].text}</span>
                {c.status === 'expired' ? <span class="visually-hidden">: the server refused your sign-in; reconnect.</span> : null}
              </td>
              <td>
                <Time iso={c.changed_at} />
              </td>
              <td class="actions">
                <form method="post" action={`/me/connections/${encodeURIComponent(c.server)}/connect`} class="inline-form">
                  <button type="submit">{c.status === 'not_connected' ? 'Connect' : 'Reconnect'}</button>
                </form>
                {c.status === 'not_connected' ? null : (
                  <form method="post" action={`/me/connections/${encodeURIComponent(c.server)}/disconnect`} class="inline-form">
                    <button type="submit" aria-label={`Disconnect ${c.server}`}>
                      Disconnect
                    </button>
                  </form>
                )}
              </td>
            </tr>
          ))}
        </Table>
      )}
    </section>
  )
}

function GrantsSection({ grants, me }: { grants: Grant[]; me: string }) {
  return (
    <section id="grants" class="card portal-wide" aria-labelledby="grants-title">
      <h2 id="grants-title">Apps with access to your account</h2>
      <p>MCP hosts (Claude, Cursor, VS Code…) you allowed to act as you. Revoking one ends its access at once.</p>
      {grants.length === 0 ? (
        <p>No application has access.</p>
      ) : (
        <Table caption="Applications with access" headers={['Application', 'Resource', 'Scope', 'Allowed', 'Last used']} actions>
          {grants.map((g) => (
            <tr id={`grant-${g.id}`}>
              <td>
                {g.client_name || 'Unnamed application'} <small>({g.client_id})</small>
                {g.user_id === me ? null : <small> — someone else’s</small>}
              </td>
              <td>
                <code>{g.resource}</code>
              </td>
              <td>{g.scope}</td>
              <td>
                <Time iso={g.created_at} never="never" />
              </td>
              <td>
                <Time iso={g.last_used_at} never="never" />
              </td>
              <td class="actions">
                <form method="post" action={`/me/grants/${g.id}/revoke`} class="inline-form">
                  <button type="submit" aria-label={`Revoke ${g.client_name || 'this application'}`}>
                    Revoke
                  </button>
                </form>
              </td>
            </tr>
          ))}
        </Table>
      )}
    </section>
  )
}

/**
 * /me/connections: the person's own accounts on MCP servers that sign each person in (connect, reconnect when
 * expired, disconnect), and the MCP hosts they allowed to act as them (revoke). All through the public API.
 */
export function mountConnections(app: Hono<AdminEnv>, api: ApiClient): void {
  const page = async (c: Ctx, outcome: { notice?: string; problem?: string } = {}, status = 200) => {
    const [connections, grants] = await Promise.all([
      api.as(c).GET('/api/mcp/connections'),
      api.as(c).GET('/api/v1/OAuthGrant', { params: { query: { order: 'created_at.desc', limit: '100' } } }),
    ])
    c.status(status as 200)
    return c.render(
      <div class="portal">
        <h1>My connections</h1>
        <Notice text={outcome.notice} />
        <Alert text={outcome.problem} />
        <ConnectionsSection connections={connections.data?.data ?? []} />
        <GrantsSection grants={grants.data?.data ?? []} me={c.get('me').user.id} />
      </div>,
      { title: 'My connections', assets: { styles: ['/static/css/portal.css'] } },
    )
  }

  app.get('/me/connections', (c) => page(c, { notice: c.req.query('connected') ? `Connected to ${c.req.query('connected')}.` : undefined }))

  app.post('/me/connections/:server/connect', async (c) => {
    const server = c.req.param('server')
    const { data, error, response } = await api.as(c).POST('/api/mcp/connections/{server}/connect', { params: { path: { server } } })
    if (!data) return page(c, { problem: problemText({ response, error }, 'Connecting') }, response.status === 404 ? 404 : 422)
    if (data.authorization_url) return signInElsewhere(c, data.authorization_url, server)
    return page(c, { notice: `Connected to ${server}.` })
  })

  // Where the server's authorization server sends the browser back.
  app.get('/me/connections/callback', async (c) => {
    const { code, state, error, error_description } = c.req.query()
    if (error) return page(c, { problem: `The server did not connect your account: ${error}${error_description ? ` (${error_description.slice(0, 200)})` : ''}.` }, 400)
    if (!code || !state) return page(c, { problem: 'This address is where a server sends you back after you sign in; it came without an answer.' }, 400)
    // The browser comes back from the server's sign-in page, another site, so its request says so (Sec-Fetch-Site);
    // passed on, that would make the API's CSRF guard refuse the call made for it. The state the API checks was
    // issued to this person for this flow and works once: it is the proof a request forged elsewhere lacks.
    const { headers, address } = api.credentials(c)
    const connected = await api.asWho({ headers: headers.cookie ? { cookie: headers.cookie } : {}, address }).POST('/api/mcp/connections/callback', { body: { code, state } })
    if (!connected.data) return page(c, { problem: problemText(connected, 'Connecting') }, 422)
    return c.redirect(`/me/connections?connected=${encodeURIComponent(connected.data.server)}`, 303)
  })

  app.post('/me/connections/:server/disconnect', async (c) => {
    const server = c.req.param('server')
    const { error, response } = await api.as(c).DELETE('/api/mcp/connections/{server}', { params: { path: { server } } })
    if (response.status !== 204) return page(c, { problem: problemText({ response, error }, 'Disconnecting') }, response.status === 404 ? 404 : 422)
    return page(c, { notice: `Disconnected from ${server}.` })
  })

  app.post('/me/grants/:id/revoke', async (c) => {
    const id = c.req.param('id')
    const { error, response } = isUuid(id) ? await api.as(c).DELETE('/api/v1/OAuthGrant/{id}', { params: { path: { id } } }) : refusedHere(404, 'No such grant.')
    if (response.status !== 204) return page(c, { problem: problemText({ response, error }, 'Revoking') }, response.status === 404 ? 404 : 422)
    return page(c, { notice: 'The application’s access is revoked.' })
  })
}
