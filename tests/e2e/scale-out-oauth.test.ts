import { expect, test } from 'bun:test'
import { CLUSTER_NEEDS_POSTGRES, useCluster } from '../helpers/cluster.ts'
import { TEST_DATABASE_URL } from '../helpers/database.ts'
import { NOTES_PLUGIN } from '../helpers/mcp.ts'
import { oauthPost } from '../helpers/oauth.ts'
import { freePort } from '../helpers/ports.ts'

// An MCP host's OAuth tokens on a platform of several processes: issued by one, used on another, and refused on
// every one of them as soon as the person revokes the grant anywhere.

// Every process names the same public address, as behind a load balancer, so a token for a resource there is good
// on all of them. Nothing listens on it: the tests call each process directly.
const PUBLIC_BASE = `http://127.0.0.1:${freePort()}`
const cluster = useCluster({ processes: 2, env: { ...NOTES_PLUGIN, SWITCHBOARD_BASE_URL: PUBLIC_BASE } })
const clusterTest = test.skipIf(!TEST_DATABASE_URL)
if (!TEST_DATABASE_URL) console.warn(`Skipped: ${CLUSTER_NEEDS_POSTGRES}.`)

const REDIRECT = 'http://127.0.0.1:33418/callback'

function callNotes(api: string, token: string) {
  return fetch(`${api}/mcp/notes`, {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } } }),
  })
}

clusterTest('a grant revoked on one process leaves its tokens refused on every process at once', async () => {
  const c = cluster()
  const [a, b] = c.processes
  const member = await c.addMember()
  expect((await c.call(a!.api, 'POST', '/api/v1/McpPermission', { json: { server: 'notes', tool: '*', effect: 'allow' } })).status).toBe(201)
  const registered = await fetch(`${a!.api}/oauth/register`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ client_name: 'Cluster Host', redirect_uris: [REDIRECT], token_endpoint_auth_method: 'none' }),
  })
  expect(registered.status).toBe(201)
  const { client_id } = await registered.json()
  const verifier = Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString('base64url')
  const challenge = new Bun.CryptoHasher('sha256').update(verifier).digest('base64url')

  // The person approves on A; the host redeems the code on B.
  const approved = await c.call(a!.api, 'POST', '/api/oauth/authorize', {
    as: member,
    json: { response_type: 'code', client_id, redirect_uri: REDIRECT, code_challenge: challenge, code_challenge_method: 'S256', resource: `${PUBLIC_BASE}/mcp/notes`, state: 's', decision: 'approve' },
  })
  expect(approved.status, JSON.stringify(approved.body)).toBe(200)
  const code = new URL(approved.body.redirect_to!).searchParams.get('code')!
  const issued = await oauthPost(`${b!.api}/oauth/token`, { grant_type: 'authorization_code', client_id, code, code_verifier: verifier, redirect_uri: REDIRECT })
  expect(issued.status).toBe(200)
  const { access_token, refresh_token } = issued.body

  // Used on both, so each may hold what it knows of the token.
  for (const p of c.processes) expect((await callNotes(p.api, access_token)).status).toBe(200)

  const grants = await c.call(a!.api, 'GET', '/api/v1/OAuthGrant', { as: member })
  expect(grants.body.data).toHaveLength(1)
  expect((await c.call(a!.api, 'DELETE', `/api/v1/OAuthGrant/${grants.body.data[0]!.id}`, { as: member })).status).toBe(204)

  // The very next calls, no pause, on every process.
  for (const p of c.processes) {
    const refused = await callNotes(p.api, access_token)
    expect(refused.status, p.api).toBe(401)
    expect(refused.headers.get('www-authenticate')).toContain('error="invalid_token"')
    const refreshed = await oauthPost(`${p.api}/oauth/token`, { grant_type: 'refresh_token', refresh_token, client_id })
    expect(refreshed.body.error, p.api).toBe('invalid_grant')
  }
})
