import { afterAll, beforeAll, expect, test } from 'bun:test'
import { join } from 'node:path'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { startTestPlatform, type Principal, type TestPlatform } from '../helpers/platform.ts'
import { expectProblem } from '../helpers/problem.ts'

// A real MCP server from npm, run over stdio by the gateway; the MCP SDK's client is the host.
const EVERYTHING = join(import.meta.dir, '..', '..', 'node_modules', '.bin', 'mcp-server-everything')
let p: TestPlatform
let http: ReturnType<typeof Bun.serve>
let base: string

beforeAll(async () => {
  p = await startTestPlatform()
  http = Bun.serve({ hostname: '127.0.0.1', port: 0, idleTimeout: 60, fetch: (request, server) => p.api.fetch(request, server) })
  base = `http://127.0.0.1:${http.port}`
  await p.services.vault.set({ scope: 'company', ownerId: p.root.companyId, name: 'everything/greeting' }, 'from-the-vault')
  const server = await p.call('POST', '/api/v1/McpServer', {
    json: { name: 'everything', transport: 'stdio', command: EVERYTHING, env: { GREETING: { secret: 'everything/greeting' }, PLAIN: { value: 'given' } } },
  })
  expect(server.status).toBe(201)
  // Everyone may use the server, except one tool; one user is judged by rules of their own.
  for (const rule of [
    { server: 'everything', tool: '*', effect: 'allow' },
    { server: 'everything', tool: 'get-sum', effect: 'deny' },
  ]) {
    expect((await p.call('POST', '/api/v1/McpPermission', { json: rule })).status).toBe(201)
  }
})
afterAll(async () => {
  await p.services.upstreams.closeAll()
  http.stop(true)
  await p.close()
})

async function connect(as: Principal, server = 'everything') {
  const client = new Client({ name: 'test-host', version: '1.0.0' })
  await client.connect(new StreamableHTTPClientTransport(new URL(`${base}/mcp/${server}`), { requestInit: { headers: { authorization: `Bearer ${as.token}` } } }))
  return client
}

test('the SDK client lists and calls the upstream’s tools through /mcp/everything; a denied tool is neither listed nor callable', async () => {
  const client = await connect(p.root)
  try {
    const names = (await client.listTools()).tools.map((t) => t.name)
    expect(names).toContain('echo')
    expect(names).toContain('get-env')
    expect(names).not.toContain('get-sum')
    expect(await client.callTool({ name: 'echo', arguments: { message: 'through the gateway' } })).toMatchObject({ content: [{ type: 'text', text: 'Echo: through the gateway' }] })
    const refused = await client.callTool({ name: 'get-sum', arguments: { a: 1, b: 2 } })
    expect(refused).toMatchObject({ isError: true, content: [{ text: 'You may not use the tool get-sum on everything.' }] })
  } finally {
    await client.close()
  }
})

test('the subprocess gets its environment from the server definition and the vault, not the platform’s', async () => {
  const client = await connect(p.root)
  try {
    const env = JSON.stringify(await client.callTool({ name: 'get-env', arguments: {} }))
    expect(env).toContain('from-the-vault')
    expect(env).toContain('given')
    expect(env).not.toContain('SWITCHBOARD_')
  } finally {
    await client.close()
  }
})

test('a user with no rules of their own gets the default; rules of their own replace it', async () => {
  const ann = await p.createUser()
  const annClient = await connect(ann)
  expect((await annClient.listTools()).tools.map((t) => t.name)).not.toContain('get-sum')
  await annClient.close()

  const bob = await p.createUser()
  await p.call('POST', '/api/v1/McpPermission', { json: { user_id: bob.userId, server: 'everything', tool: 'echo', effect: 'allow' } })
  const bobClient = await connect(bob)
  expect((await bobClient.listTools()).tools.map((t) => t.name)).toEqual(['echo'])
  await bobClient.close()
})

test('401 without credentials, 404 for an unknown server, 403 when no tool of it is allowed, 404 for another user’s session', async () => {
  expectProblem(await p.call('POST', '/mcp/everything', { as: null, json: {} }), 401, 'unauthorized')
  expectProblem(await p.call('POST', '/mcp/nothing-here', { json: {} }), 404, 'not_found')
  const carl = await p.createUser()
  await p.call('POST', '/api/v1/McpPermission', { json: { user_id: carl.userId, server: 'everything', tool: '*', effect: 'deny' } })
  expectProblem(await p.call('POST', '/mcp/everything', { as: carl, json: {} }), 403, 'forbidden')
  const client = await connect(p.root)
  const sessionId = (client.transport as StreamableHTTPClientTransport).sessionId!
  const dee = await p.createUser()
  const hijack = await p.call('POST', '/mcp/everything', { as: dee, json: { jsonrpc: '2.0', id: 1, method: 'tools/list' }, headers: { 'mcp-session-id': sessionId, accept: 'application/json, text/event-stream' } })
  expectProblem(hijack, 404, 'not_found')
  await client.close()
})

test('two users get separate upstream processes; one killed, the next call recovers', async () => {
  const running = () => Bun.spawnSync(['pgrep', '-f', 'mcp-server-everything']).stdout.toString().trim().split('\n').filter(Boolean)
  await p.services.upstreams.closeAll()
  await Bun.sleep(200)
  const [mine, theirs] = [await connect(p.root), await connect(await p.createUser())]
  try {
    await mine.callTool({ name: 'echo', arguments: { message: 'one' } })
    await theirs.callTool({ name: 'echo', arguments: { message: 'one' } })
    const pids = running()
    expect(pids.length).toBe(2)
    process.kill(Number(pids[0]), 'SIGKILL')
    await Bun.sleep(200)
    // Whichever of the two lost its process: its next call fails, the one after recovers.
    const outcomes = await Promise.allSettled([mine.callTool({ name: 'echo', arguments: { message: 'two' } }), theirs.callTool({ name: 'echo', arguments: { message: 'two' } })])
    expect(outcomes.filter((o) => o.status === 'rejected').length).toBe(1)
    for (const client of [mine, theirs]) {
      expect(await client.callTool({ name: 'echo', arguments: { message: 'three' } })).toMatchObject({ content: [{ text: 'Echo: three' }] })
    }
    expect(running().length).toBe(2)
  } finally {
    await mine.close()
    await theirs.close()
  }
})
