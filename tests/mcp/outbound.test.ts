import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { sql } from 'kysely'
import { listToolsFailure, startMcpPlatform, type McpTestPlatform } from '../helpers/mcp.ts'
import { expectProblem } from '../helpers/problem.ts'

// A loopback server standing for something inside the platform's network: it counts every request it gets and
// answers with text that must never reach a tenant.
let hits = 0
const inside = Bun.serve({
  hostname: '127.0.0.1',
  port: 0,
  fetch: () => {
    hits += 1
    return new Response('INTERNAL-BODY: db password is hunter2', { status: 500, headers: { 'content-type': 'text/plain' } })
  },
})
afterAll(() => inside.stop(true))
const insideUrl = `http://127.0.0.1:${inside.port}/mcp`

describe('outbound addresses a tenant sets are refused when they reach inside', () => {
  let p: McpTestPlatform
  beforeAll(async () => {
    // No allowance: the policy as it stands on a fresh install.
    p = await startMcpPlatform({ env: { SWITCHBOARD_OUTBOUND_ALLOW: '' }, rules: [{ server: '*', tool: '*', effect: 'allow' }] })
  })
  afterAll(() => p.close())

  test('at save: loopback, private, link-local and unique-local URLs are refused, saying why', async () => {
    const urls = [insideUrl, 'http://localhost:8000/mcp', 'http://169.254.169.254/latest/meta-data', 'http://10.0.0.1/mcp', 'http://[::1]:8000/mcp', 'http://[fd00::1]/mcp', 'http://0x7f000001/mcp']
    for (const url of urls) {
      const refused = expectProblem(await p.call('POST', '/api/v1/McpServer', { json: { name: 'remote', transport: 'streamable-http', url } }), 422, 'validation_error')
      expect(refused.errors, url).toContainEqual({ path: 'url', message: expect.stringMatching(/loopback|private|link-local|unique-local/) })
    }
    const patched = await p.call('POST', '/api/v1/McpServer', { json: { name: 'remote', transport: 'streamable-http', url: 'http://93.184.215.14/mcp' } })
    expect(patched.status).toBe(201)
    const moved = expectProblem(await p.call('PATCH', `/api/v1/McpServer/${patched.body.id}`, { json: { url: insideUrl } }), 422, 'validation_error')
    expect(moved.errors).toContainEqual(expect.objectContaining({ path: 'url' }))
    expect(hits).toBe(0)
  })

  test('at connect: an address that reaches inside now (a name rebound, a policy tightened) is refused without a request', async () => {
    // As if the name resolved to a public address when saved and to loopback now.
    await p.store.db
      .insertInto('mcp_servers')
      .values({ id: Bun.randomUUIDv7(), company_id: p.root.companyId!, name: 'rebound', transport: 'streamable-http', command_id: null, url: insideUrl, env: sql`'{}'::jsonb`, headers: sql`'{}'::jsonb`, vault_secrets: sql`'[]'::jsonb` })
      .execute()
    await p.services.caches.flush('mcp')
    expect(await listToolsFailure(p.base, p.root, 'rebound')).toContain('loopback')
    expect(hits).toBe(0)
  })
})

describe('an upstream’s answer body never reaches the caller', () => {
  let p: McpTestPlatform
  beforeAll(async () => {
    p = await startMcpPlatform({
      env: { SWITCHBOARD_OUTBOUND_ALLOW: '127.0.0.0/8' },
      servers: [{ name: 'inside', transport: 'streamable-http', url: insideUrl }],
      rules: [{ server: '*', tool: '*', effect: 'allow' }],
    })
  })
  afterAll(() => p.close())

  test('a failing upstream is reported by its status alone', async () => {
    const before = hits
    const message = await listToolsFailure(p.base, p.root, 'inside')
    expect(hits).toBeGreaterThan(before)
    expect(message).toContain('500')
    expect(message).not.toContain('INTERNAL-BODY')
    expect(message).not.toContain('hunter2')
  })
})
