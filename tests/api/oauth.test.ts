import { describe, expect, test } from 'bun:test'
import { UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { consentInBrowser, HostProvider, oauthPost, startOAuthPlatform, TLS_CERT, TLS_KEY } from '../helpers/oauth.ts'
import { useStarted } from '../helpers/platform.ts'

const REDIRECT = 'http://127.0.0.1:33418/callback'

/** A host, as the SDK's client runs it: the 401 starts its flow; consent goes through the console's real form. */
async function signInHost(p: ReturnType<typeof platform>, host: HostProvider, cookie: string, server = 'everything'): Promise<Client> {
  const url = new URL(`${p.base}/mcp/${server}`)
  const first = new Client({ name: 'test-host', version: '1.0.0' })
  await expect(first.connect(new StreamableHTTPClientTransport(url, { authProvider: host }))).rejects.toBeInstanceOf(UnauthorizedError)
  expect(host.authorizationUrl?.origin).toBe(p.adminUrl)
  const { location } = await consentInBrowser(host.authorizationUrl!, cookie, 'approve')
  expect(`${location.origin}${location.pathname}`).toBe(REDIRECT)
  expect(location.searchParams.get('state')).toBe(host.authorizationUrl!.searchParams.get('state'))
  expect(location.searchParams.get('iss')).toBe(p.base)
  const transport = new StreamableHTTPClientTransport(url, { authProvider: host })
  await transport.finishAuth(location.searchParams.get('code')!)
  const client = new Client({ name: 'test-host', version: '1.0.0' })
  await client.connect(new StreamableHTTPClientTransport(url, { authProvider: host }))
  return client
}

async function echo(client: Client, message: string): Promise<string> {
  const result = await client.callTool({ name: 'echo', arguments: { message } })
  return (result.content as Array<{ text: string }>)[0]!.text
}

const platform = useStarted(() => startOAuthPlatform())

describe('discovery', () => {
  test('a 401 from the gateway points at the resource metadata, which names the platform as authorization server', async () => {
    const p = platform()
    const refused = await fetch(`${p.base}/mcp/everything`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{}' })
    expect(refused.status).toBe(401)
    expect(refused.headers.get('www-authenticate')).toBe(`Bearer realm="switchboard", resource_metadata="${p.base}/.well-known/oauth-protected-resource/mcp/everything"`)
    const resource = await (await fetch(`${p.base}/.well-known/oauth-protected-resource/mcp/everything`)).json()
    expect(resource).toMatchObject({ resource: `${p.base}/mcp/everything`, authorization_servers: [p.base], scopes_supported: ['mcp'] })
    const server = await (await fetch(`${p.base}/.well-known/oauth-authorization-server`)).json()
    expect(server).toMatchObject({
      issuer: p.base,
      authorization_endpoint: `${p.adminUrl}/oauth/authorize`,
      token_endpoint: `${p.base}/oauth/token`,
      code_challenge_methods_supported: ['S256'],
      client_id_metadata_document_supported: true,
    })
    // The aggregate and the API have their own metadata.
    expect((await (await fetch(`${p.base}/.well-known/oauth-protected-resource/mcp`)).json()).resource).toBe(`${p.base}/mcp`)
    expect((await (await fetch(`${p.base}/.well-known/oauth-protected-resource`)).json()).scopes_supported).toEqual(['api', 'mcp'])
  })

  test('browser-based hosts may read the metadata and call the gateway from another origin', async () => {
    const p = platform()
    const preflight = await fetch(`${p.base}/mcp/everything`, {
      method: 'OPTIONS',
      headers: { origin: 'https://inspector.example', 'access-control-request-method': 'POST', 'access-control-request-headers': 'authorization, mcp-session-id' },
    })
    expect(preflight.status).toBe(204)
    expect(preflight.headers.get('access-control-allow-origin')).toBe('*')
    const metadata = await fetch(`${p.base}/.well-known/oauth-authorization-server`, { headers: { origin: 'https://inspector.example' } })
    expect(metadata.headers.get('access-control-allow-origin')).toBe('*')
  })
})

describe('the whole flow with the MCP SDK client', () => {
  test('dynamic registration, PKCE, consent through the form, token, tools/call', async () => {
    const p = platform()
    const person = await p.person()
    const host = new HostProvider(REDIRECT)
    const client = await signInHost(p, host, person.cookie)
    expect(host.client?.client_id).toStartWith('sbc_')
    expect(await echo(client, 'over oauth')).toBe('Echo: over oauth')
    await client.close()
    // The person sees the grant, and the platform stored no token in the clear.
    const grants = await p.call('GET', '/api/v1/OAuthGrant', { as: person })
    expect(grants.body.data).toEqual([expect.objectContaining({ client_name: 'Test Host', resource: `${p.base}/mcp/everything`, scope: 'mcp', user_id: person.userId })])
    const stored = await p.store.db.selectFrom('oauth_tokens').select('token_hash').execute()
    expect(stored.map((t) => t.token_hash)).not.toContain(host.saved!.access_token)
  })

  test('a client metadata document identifies the host without registering it', async () => {
    const p = platform()
    const person = await p.person()
    let fetched = 0
    const tls = Bun.serve({
      hostname: '127.0.0.1',
      port: 0,
      tls: { cert: Bun.file(TLS_CERT), key: Bun.file(TLS_KEY) },
      fetch: (request: Request): Response => {
        fetched += 1
        const id: string = `https://localhost:${new URL(request.url).port}${new URL(request.url).pathname}`
        return Response.json({ client_id: id, client_name: 'Documented Host', redirect_uris: [REDIRECT], token_endpoint_auth_method: 'none' })
      },
    })
    try {
      const documentUrl = `https://localhost:${tls.port}/host/client.json`
      const before = (await p.store.db.selectFrom('oauth_clients').select('id').where('kind', '=', 'dynamic').execute()).length
      const host = new HostProvider(REDIRECT, documentUrl)
      const client = await signInHost(p, host, person.cookie)
      expect(host.client?.client_id).toBe(documentUrl)
      expect(fetched).toBe(1)
      expect(await echo(client, 'documented')).toBe('Echo: documented')
      await client.close()
      expect((await p.store.db.selectFrom('oauth_clients').select('id').where('kind', '=', 'dynamic').execute()).length).toBe(before)
      const row = await p.store.db.selectFrom('oauth_clients').selectAll().where('client_id', '=', documentUrl).executeTakeFirstOrThrow()
      expect(row).toMatchObject({ kind: 'metadata_document', client_name: 'Documented Host' })
    } finally {
      await tls.stop(true)
    }
  })

  test('refresh rotates; a spent refresh token presented again revokes the grant; then everything is refused', async () => {
    const p = platform()
    const person = await p.person()
    const host = new HostProvider(REDIRECT)
    const client = await signInHost(p, host, person.cookie)
    await client.close()
    const first = host.saved!
    const clientId = host.client!.client_id
    const refreshed = await oauthPost(`${p.base}/oauth/token`, { grant_type: 'refresh_token', refresh_token: first.refresh_token!, client_id: clientId })
    expect(refreshed.status).toBe(200)
    expect(refreshed.headers.get('cache-control')).toBe('no-store')
    expect(refreshed.body.refresh_token).not.toBe(first.refresh_token)
    // The new access token works.
    host.saveTokens(refreshed.body)
    const again = new Client({ name: 'test-host', version: '1.0.0' })
    await again.connect(new StreamableHTTPClientTransport(new URL(`${p.base}/mcp/everything`), { authProvider: host }))
    expect(await echo(again, 'refreshed')).toBe('Echo: refreshed')
    await again.close()

    const reused = await oauthPost(`${p.base}/oauth/token`, { grant_type: 'refresh_token', refresh_token: first.refresh_token!, client_id: clientId })
    expect(reused.status).toBe(400)
    expect(reused.body.error).toBe('invalid_grant')
    // The grant is gone: the newest refresh token and the newest access token are refused too.
    const newest = await oauthPost(`${p.base}/oauth/token`, { grant_type: 'refresh_token', refresh_token: refreshed.body.refresh_token, client_id: clientId })
    expect(newest.body.error).toBe('invalid_grant')
    const refused = await fetch(`${p.base}/mcp/everything`, {
      method: 'POST',
      headers: { authorization: `Bearer ${refreshed.body.access_token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' }),
    })
    expect(refused.status).toBe(401)
    expect(refused.headers.get('www-authenticate')).toContain('error="invalid_token"')
    expect((await p.call('GET', '/api/v1/OAuthGrant', { as: person })).body.data).toEqual([])
  })

  test('revoking the refresh token (RFC 7009) ends the grant; revoking an access token ends just it', async () => {
    const p = platform()
    const person = await p.person()
    const host = new HostProvider(REDIRECT)
    ;(await signInHost(p, host, person.cookie)).close()
    const clientId = host.client!.client_id
    const tokens = host.saved!
    const callWith = (token: string) =>
      fetch(`${p.base}/mcp/everything`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } } }),
      })
    expect((await callWith(tokens.access_token)).status).toBe(200)
    // Someone else's client cannot revoke it: the answer is the same, and nothing happens.
    const other = await oauthPost(`${p.base}/oauth/register`, {} as never).catch(() => undefined)
    expect(other?.status).not.toBe(201)
    const registered = await fetch(`${p.base}/oauth/register`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ redirect_uris: [REDIRECT], token_endpoint_auth_method: 'none' }) })
    const stranger = (await registered.json()).client_id
    expect((await oauthPost(`${p.base}/oauth/revoke`, { token: tokens.access_token, client_id: stranger })).status).toBe(200)
    expect((await callWith(tokens.access_token)).status).toBe(200)

    expect((await oauthPost(`${p.base}/oauth/revoke`, { token: tokens.access_token, client_id: clientId })).status).toBe(200)
    expect((await callWith(tokens.access_token)).status).toBe(401)
    // The refresh token still works, until it is revoked: then the grant and all it issued go.
    const refreshed = await oauthPost(`${p.base}/oauth/token`, { grant_type: 'refresh_token', refresh_token: tokens.refresh_token!, client_id: clientId })
    expect(refreshed.status).toBe(200)
    expect((await oauthPost(`${p.base}/oauth/revoke`, { token: refreshed.body.refresh_token, client_id: clientId, token_type_hint: 'refresh_token' })).status).toBe(200)
    expect((await callWith(refreshed.body.access_token)).status).toBe(401)
    expect((await oauthPost(`${p.base}/oauth/token`, { grant_type: 'refresh_token', refresh_token: refreshed.body.refresh_token, client_id: clientId })).body.error).toBe('invalid_grant')

    // The audit trail holds the grant (made by the person, with what was granted) and its revocation, once each.
    const events = await p.store.db.selectFrom('audit_events').selectAll().where('model', '=', 'OAuthGrant').where('company_id', '=', person.companyId).orderBy('created_at').execute()
    const grant = events.filter((e) => e.action === 'oauth_grant' && e.actor_id === person.userId)
    expect(grant).toHaveLength(1)
    expect(grant[0]!.changes).toMatchObject({ resource: `${p.base}/mcp/everything`, scope: 'mcp' })
    expect(grant[0]!.address).toBe('127.0.0.1')
    const revoked = events.filter((e) => e.action === 'oauth_revoke' && e.record_id === grant[0]!.record_id)
    expect(revoked).toHaveLength(1)
    expect(revoked[0]!.changes).toMatchObject({ reason: 'the client revoked its refresh token' })
    // Tokens never reach the trail.
    expect(JSON.stringify(events)).not.toContain(tokens.refresh_token!)
  })
})
