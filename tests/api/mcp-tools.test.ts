import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { sql } from 'kysely'
import { EVERYTHING_STDIO, freePort, NOTES_PLUGIN, startMcpPlatform, type McpTestPlatform } from '../helpers/mcp.ts'
import type { Principal } from '../helpers/platform.ts'
import { expectProblem } from '../helpers/problem.ts'

// The catalogue and the connection test, against the real server-everything (stdio, sandboxed where bubblewrap is
// installed), the fixture plugin `notes` (built-in tools whoami and add-note) and loopback servers that misbehave.

const SECRET = 'LEAK-hunter2'
/** Answers every request 500 with a body that must never reach a caller. */
const failing = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: () => new Response(`${SECRET}: stack trace`, { status: 500 }) })
/** Speaks JSON-RPC, but answers initialize with an error whose message must never reach a caller either. */
const refusing = Bun.serve({
  hostname: '127.0.0.1',
  port: 0,
  async fetch(request) {
    const message = (await request.json().catch(() => ({}))) as { id?: unknown }
    return Response.json({ jsonrpc: '2.0', id: message.id ?? null, error: { code: -32603, message: `${SECRET} in the upstream` } })
  },
})
/** Accepts the connection and never answers. */
const silent = Bun.serve({ hostname: '127.0.0.1', port: 0, idleTimeout: 0, fetch: () => new Promise<Response>(() => {}) })
const url = (server: { port?: number }) => `http://127.0.0.1:${server.port}/mcp`

let p: McpTestPlatform
let ids: Record<string, string>
let admin: Principal
let ann: Principal
let bob: Principal
let stranger: Principal

beforeAll(async () => {
  p = await startMcpPlatform({
    env: { ...NOTES_PLUGIN, SWITCHBOARD_MCP_BREAKER_FAILURES: '2' },
    servers: [
      EVERYTHING_STDIO,
      // Nothing listens there: the connection is refused.
      { name: 'nowhere', transport: 'streamable-http', url: `http://127.0.0.1:${freePort()}/mcp` },
      { name: 'failing', transport: 'streamable-http', url: url(failing) },
      { name: 'refusing', transport: 'streamable-http', url: url(refusing) },
      { name: 'silent', transport: 'streamable-http', url: url(silent) },
      { name: 'switched-off', transport: 'streamable-http', url: url(failing), enabled: false },
    ],
    // The company's default: everyone may use the plugin's tools, nothing else.
    rules: [{ server: 'notes', tool: '*', effect: 'allow' }],
  })
  const servers = (await p.call('GET', '/api/v1/McpServer?limit=500')).body.data as Array<{ id: string; name: string }>
  ids = Object.fromEntries(servers.map((s) => [s.name, s.id]))
  admin = await p.createUser({ role: 'admin' })
  ann = await p.createUser()
  bob = await p.createUser()
  stranger = await p.createUser({ companyId: await p.createCompany(), role: 'owner' })
  // Ann has rules of her own for everything: echo only. For notes she falls back to the company's default.
  expect((await p.call('POST', '/api/v1/McpPermission', { json: { user_id: ann.userId, server: 'everything', tool: 'echo', effect: 'allow' } })).status).toBe(201)
})

afterAll(async () => {
  // The silent server first: a connection still waiting on it would hold the platform's shutdown.
  silent.stop(true)
  await p.close()
  failing.stop(true)
  refusing.stop(true)
})

type Entry = { name: string; kind: string; id: string | null; enabled: boolean; allowed?: boolean; tools: Array<{ name: string; description: string; allowed?: boolean }>; error?: string; breaker: string | null }
const byName = (data: Entry[]) => Object.fromEntries(data.map((e) => [e.name, e]))
const catalogue = async (as: Principal, query = '') => {
  const reply = await p.call('GET', `/api/mcp/tools${query}`, { as })
  expect(reply.status, JSON.stringify(reply.body)).toBe(200)
  return reply.body as { user_id: string | null; data: Entry[] }
}

describe('GET /api/mcp/tools', () => {
  test('lists every server of the company and every plugin provider, by the names agent configurations use', async () => {
    const started = Date.now()
    const { user_id, data } = await catalogue(admin)
    // The silent server is given 10 s and the rest are listed alongside it, not after it.
    expect(Date.now() - started).toBeLessThan(15_000)
    expect(user_id).toBeNull()
    const entries = byName(data)
    expect(Object.keys(entries).sort()).toEqual(['everything', 'failing', 'mcp-artifacts', 'mcp-planning', 'mcp-tasks', 'notes', 'nowhere', 'refusing', 'silent', 'switched-off'])

    const everything = entries.everything!
    expect(everything).toMatchObject({ kind: 'server', id: ids.everything, enabled: true, breaker: 'closed' })
    expect(everything.error).toBeUndefined()
    const echo = everything.tools.find((t) => t.name === 'echo')
    expect(echo?.description.length).toBeGreaterThan(0)
    expect(everything.tools.map((t) => t.name)).toContain('get-sum')
    // Without user_id nobody's permissions are judged.
    expect('allowed' in everything).toBe(false)
    expect('allowed' in echo!).toBe(false)

    expect(entries.notes).toMatchObject({ kind: 'plugin', id: null, enabled: true, breaker: null })
    expect(entries.notes!.tools.map((t) => t.name).sort()).toEqual(['add-note', 'whoami'])
    expect(entries.notes!.tools.find((t) => t.name === 'whoami')?.description).toBe('The user the tool runs for.')

    // What could not be listed is there all the same, with no tools, a short reason and its breaker.
    expect(entries.nowhere).toMatchObject({ kind: 'server', id: ids.nowhere, tools: [], error: expect.stringContaining('refused') })
    expect(['closed', 'open', 'half-open']).toContain(entries.nowhere!.breaker!)
    expect(entries.silent).toMatchObject({ tools: [], error: 'The server did not list its tools within 10 s.' })
    expect(entries.failing).toMatchObject({ tools: [], error: 'The server answered HTTP 500.' })
    expect(entries.refusing).toMatchObject({ tools: [], error: 'The server answered with an MCP error (code -32603).' })
    expect(entries['switched-off']).toMatchObject({ enabled: false, tools: [], error: expect.stringContaining('disabled') })
    expect(JSON.stringify(data)).not.toContain(SECRET)
    for (const entry of data) expect(entry.error?.length ?? 0).toBeLessThan(200)
    // The other cases need not wait on it again.
    expect((await p.call('PATCH', `/api/v1/McpServer/${ids.silent}`, { json: { enabled: false } })).status).toBe(200)
  }, 30_000)

  test('previewing a user: their own rule allows echo and nothing else of everything; the default allows the plugin', async () => {
    const { user_id, data } = await catalogue(admin, `?user_id=${ann.userId.toUpperCase()}`)
    expect(user_id).toBe(ann.userId)
    const entries = byName(data)
    const everything = entries.everything!
    expect(everything.allowed).toBe(true)
    const allowed = Object.fromEntries(everything.tools.map((t) => [t.name, t.allowed]))
    expect(allowed.echo).toBe(true)
    expect(allowed['get-sum']).toBe(false)
    expect(everything.tools.filter((t) => t.allowed).map((t) => t.name)).toEqual(['echo'])
    expect(entries.notes).toMatchObject({ allowed: true, tools: expect.arrayContaining([{ name: 'whoami', description: expect.any(String), allowed: true }]) })
    // No rule reaches the remote servers: no rule is a deny.
    expect(entries.nowhere!.allowed).toBe(false)
    expect(entries['switched-off']!.allowed).toBe(false)
  }, 30_000)

  test('previewing someone with no rules of their own judges by the company defaults', async () => {
    const entries = byName((await catalogue(p.root, `?user_id=${bob.userId}`)).data)
    expect(entries.everything!.allowed).toBe(false)
    expect(entries.everything!.tools.length).toBeGreaterThan(0)
    expect(entries.everything!.tools.every((t) => t.allowed === false)).toBe(true)
    expect(entries.notes!.allowed).toBe(true)
  }, 30_000)

  test('a member sees only what they may use, may preview themselves, and not someone else (403)', async () => {
    const own = await catalogue(ann, `?user_id=${ann.userId}`)
    expect(own.data.map((e) => e.name).sort()).toEqual(['everything', 'notes'])
    expect(byName(own.data).everything!.tools.find((t) => t.name === 'echo')?.allowed).toBe(true)
    expect((await catalogue(bob)).data.map((e) => e.name)).toEqual(['notes'])

    const other = expectProblem(await p.call('GET', `/api/mcp/tools?user_id=${bob.userId}`, { as: ann }), 403, 'forbidden')
    expect(other.detail).toContain('admins')
  }, 30_000)

  test('a user of another company is not there to preview (404), for admins and members alike', async () => {
    expectProblem(await p.call('GET', `/api/mcp/tools?user_id=${stranger.userId}`, { as: admin }), 404, 'not_found')
    expectProblem(await p.call('GET', `/api/mcp/tools?user_id=${stranger.userId}`, { as: ann }), 404, 'not_found')
    expectProblem(await p.call('GET', '/api/mcp/tools?user_id=01936f3e-6d2a-7c41-9b1e-000000000000', { as: admin }), 404, 'not_found')
    // And the other company's admin sees none of this company's servers, nor previews its people.
    const theirs = await catalogue(stranger)
    expect(theirs.data.filter((e) => e.kind === 'server')).toEqual([])
    expectProblem(await p.call('GET', `/api/mcp/tools?user_id=${ann.userId}`, { as: stranger }), 404, 'not_found')
  })

  test('401 without credentials; 422 for a user_id that is not a UUID', async () => {
    expectProblem(await p.call('GET', '/api/mcp/tools', { as: null }), 401, 'unauthorized')
    for (const bad of ['not-a-uuid', "' OR 1=1 --", '1']) {
      const invalid = expectProblem(await p.call('GET', `/api/mcp/tools?user_id=${encodeURIComponent(bad)}`, { as: admin }), 422, 'validation_error')
      expect(invalid.errors).toEqual([{ path: 'query.user_id', message: expect.any(String) }])
    }
  })
})

describe('POST /api/mcp/servers/{id}/test', () => {
  const testServer = (id: string, as: Principal | null = admin) => p.call('POST', `/api/mcp/servers/${id}/test`, { as })

  test('connects through the caller’s own connection and lists the tools', async () => {
    const reply = await testServer(ids.everything!)
    expect(reply.status).toBe(200)
    if (!reply.body.ok) throw new Error(`the test failed: ${reply.body.error}`)
    expect(reply.body).toMatchObject({ ok: true, breaker: 'closed' })
    expect(reply.body.tools).toContainEqual({ name: 'echo', description: expect.any(String) })
    expect(p.services.upstreams.breakers(p.root.companyId!, admin.userId).map((b) => b.server)).toContain('everything')
  }, 30_000)

  test('an unreachable server answers ok: false with a short reason, and its breaker opens after repeated failures', async () => {
    const tester = await p.createUser({ role: 'admin' })
    const first = await testServer(ids.nowhere!, tester)
    expect(first.status).toBe(200)
    expect(first.body).toEqual({ ok: false, error: 'The connection was refused: nothing listens at the server’s address.', breaker: 'closed' })
    // Two failures open the breaker (SWITCHBOARD_MCP_BREAKER_FAILURES=2); then calls are held back without trying.
    expect((await testServer(ids.nowhere!, tester)).body.breaker).toBe('open')
    const held = await testServer(ids.nowhere!, tester)
    expect(held.body).toMatchObject({ ok: false, breaker: 'open', error: expect.stringContaining('held back') })
  })

  test('what the upstream said never reaches the caller', async () => {
    // Someone whose breakers have not opened yet: the catalogue's listings above counted against the admin's.
    const tester = await p.createUser({ role: 'admin' })
    expect((await testServer(ids.failing!, tester)).body).toEqual({ ok: false, error: 'The server answered HTTP 500.', breaker: 'closed' })
    const refused = await testServer(ids.refusing!, tester)
    expect(refused.body).toMatchObject({ ok: false, error: 'The server answered with an MCP error (code -32603).' })
    expect(JSON.stringify(refused.body)).not.toContain(SECRET)
  })

  test('the outbound-address policy applies at connect time: an address that points inside is refused, not reached', async () => {
    // As if a saved name resolved to the cloud metadata address now; the policy here allows loopback only.
    const id = Bun.randomUUIDv7()
    await p.store.db
      .insertInto('mcp_servers')
      .values({ id, company_id: p.root.companyId!, name: 'rebound', transport: 'streamable-http', command_id: null, url: 'http://169.254.169.254/mcp', env: sql`'{}'::jsonb`, headers: sql`'{}'::jsonb`, vault_secrets: sql`'[]'::jsonb` })
      .execute()
    await p.services.caches.flush('mcp')
    const reply = await testServer(id)
    expect(reply.body).toMatchObject({ ok: false, error: expect.stringMatching(/^http:\/\/169\.254\.169\.254\/mcp resolves to 169\.254\.169\.254, .*link-local/i) })
  })

  test('a disabled server is not started', async () => {
    expect((await testServer(ids['switched-off']!)).body).toEqual({ ok: false, error: 'The server is disabled; enable it to test it.', breaker: 'closed' })
  })

  test('401 without credentials, 403 for a member, 404 for an unknown, malformed or another company’s id', async () => {
    expectProblem(await testServer(ids.everything!, null), 401, 'unauthorized')
    expectProblem(await testServer(ids.everything!, ann), 403, 'forbidden')
    expectProblem(await testServer('01936f3e-6d2a-7c41-9b1e-000000000000'), 404, 'not_found')
    expectProblem(await testServer('not-an-id'), 404, 'not_found')
    expectProblem(await testServer(ids.everything!, stranger), 404, 'not_found')
    // The stranger's attempt started nothing under their name.
    expect(p.services.upstreams.breakers(p.root.companyId!, stranger.userId)).toEqual([])
  })
})
