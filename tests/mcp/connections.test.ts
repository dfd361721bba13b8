import { expect, test } from 'bun:test'
import { startOAuthRemote } from '../fixtures/mcp/oauth-remote.ts'
import { startOAuthPlatform } from '../helpers/oauth.ts'
import { useStarted } from '../helpers/platform.ts'

const remote = useStarted(() => startOAuthRemote(), 'the OAuth MCP server')
const platform = useStarted(async () => {
  const p = await startOAuthPlatform()
  const made = await p.call('POST', '/api/v1/McpServer', { json: { name: 'remote', transport: 'streamable-http', url: remote().url, oauth: true } })
  expect(made.status, JSON.stringify(made.body)).toBe(201)
  expect((await p.call('POST', '/api/v1/McpPermission', { json: { server: 'remote', tool: '*', effect: 'allow' } })).status).toBe(201)
  return p
})

/** What the person's browser does: the console's Connect button, the remote's authorize (already approved), the console's callback. */
async function connect(adminUrl: string, cookie: string): Promise<Response> {
  const started = await fetch(`${adminUrl}/me/connections/remote/connect`, { method: 'POST', headers: { cookie, origin: adminUrl }, redirect: 'manual' })
  expect(started.status).toBe(200)
  // The page sends the browser on itself (a form may not be redirected to another origin under the page's CSP).
  const onward = /<meta http-equiv="refresh" content="0;url=([^"]+)"/.exec(await started.text())![1]!.replaceAll('&amp;', '&')
  const authorize = await fetch(onward, { redirect: 'manual' })
  expect(authorize.status).toBe(302)
  const back = new URL(authorize.headers.get('location')!)
  expect(`${back.origin}${back.pathname}`).toBe(`${adminUrl}/me/connections/callback`)
  // As a browser comes back from the server's sign-in page: a top-level navigation from another site.
  return fetch(back, { headers: { cookie, ...FROM_ANOTHER_SITE }, redirect: 'manual' })
}

const FROM_ANOTHER_SITE = { 'sec-fetch-site': 'cross-site', 'sec-fetch-mode': 'navigate', 'sec-fetch-dest': 'document' }

const connectionsPage = async (adminUrl: string, cookie: string) => (await fetch(`${adminUrl}/me/connections`, { headers: { cookie } })).text()

test('a person connects their own account, uses its tools; a revoked token marks the connection expired with a badge; reconnecting restores it', async () => {
  const p = platform()
  const person = await p.person()
  // Not connected: the server's tools are absent from the person's catalogue, and the page offers Connect.
  const tools = async () => (await p.services.catalog.providers({ userId: person.userId, companyId: person.companyId })).map((provider) => provider.name)
  expect(await tools()).not.toContain('remote')
  expect(await p.services.catalog.unconnected({ userId: person.userId, companyId: person.companyId })).toEqual([{ name: 'remote', status: 'not_connected' }])
  expect(await connectionsPage(p.adminUrl, person.cookie)).toContain('Not connected')

  const done = await connect(p.adminUrl, person.cookie)
  expect(done.status).toBe(303)
  expect(done.headers.get('location')).toBe('/me/connections?connected=remote')
  expect(await tools()).toContain('remote')
  // The tokens are in the vault under the person, not in the clear anywhere else.
  const stored = await p.services.vault.list('user', person.userId, 'mcp-oauth/')
  expect(stored).toHaveLength(1)

  const call = () => p.services.catalog.provider({ userId: person.userId, companyId: person.companyId }, 'remote').then((provider) => provider!.callTool({ userId: person.userId, companyId: person.companyId }, { name: 'whoami', arguments: {} }))
  const answered = await call()
  expect((answered.content as Array<{ text: string }>)[0]!.text).toStartWith('token-holder:')

  // The remote revokes every token: the next call is refused, the connection is marked expired, and the page shows it.
  remote().revokeAll()
  await expect(call()).rejects.toThrow(/expired/)
  expect((await p.call('GET', '/api/mcp/connections', { as: person })).body.data).toEqual([expect.objectContaining({ server: 'remote', status: 'expired' })])
  expect(await tools()).not.toContain('remote')
  const page = await connectionsPage(p.adminUrl, person.cookie)
  expect(page).toContain('badge-warning')
  expect(page).toContain('Expired')
  expect(page).toContain('Reconnect')

  const again = await connect(p.adminUrl, person.cookie)
  expect(again.status).toBe(303)
  expect((await p.call('GET', '/api/mcp/connections', { as: person })).body.data).toEqual([expect.objectContaining({ status: 'connected' })])
  expect((((await call()).content as Array<{ text: string }>)[0]!.text)).toStartWith('token-holder:')
})

test('a callback whose state was not issued to this person is refused, and connects nothing', async () => {
  const p = platform()
  const person = await p.person()
  const server = (await p.call('GET', '/api/mcp/connections', { as: person })).body.data[0]!
  const forged = await p.call('POST', '/api/mcp/connections/callback', { as: person, json: { code: 'stolen', state: `${server.server_id}.not-the-nonce` } })
  expect(forged.status).toBe(422)
  // Another site sending the person's browser to the callback with its own code gets nowhere without the state.
  const lured = await fetch(`${p.adminUrl}/me/connections/callback?${new URLSearchParams({ code: 'attackers-code', state: `${server.server_id}.guessed` })}`, {
    headers: { cookie: person.cookie, ...FROM_ANOTHER_SITE },
    redirect: 'manual',
  })
  expect(lured.status).toBe(422)
  expect(await lured.text()).toContain('not the one expected')
  expect((await p.call('GET', '/api/mcp/connections', { as: person })).body.data[0]!.status).toBe('not_connected')
  // A server that does not sign people in cannot be connected.
  expect((await p.call('POST', '/api/mcp/connections/everything/connect', { as: person })).status).toBe(422)
  expect((await p.call('POST', '/api/mcp/connections/nothing-here/connect', { as: person })).status).toBe(404)
  expect((await p.call('POST', '/api/mcp/connections/remote/connect', { as: null })).status).toBe(401)
})
