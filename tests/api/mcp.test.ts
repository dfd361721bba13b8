import { afterAll, beforeAll, expect, test } from 'bun:test'
import type { Client } from '@modelcontextprotocol/sdk/client/index.js'
import type { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { childProcesses, connectMcp, EVERYTHING, EVERYTHING_PROGRAM, freePort, startMcpPlatform, type McpTestPlatform } from '../helpers/mcp.ts'
import type { Principal } from '../helpers/platform.ts'
import { expectProblem } from '../helpers/problem.ts'
import { until } from '../helpers/until.ts'

// A real MCP server from npm, run over stdio by the gateway; the MCP SDK's client is the host.
let p: McpTestPlatform
let base: string

beforeAll(async () => {
  p = await startMcpPlatform({
    servers: [
      {
        name: 'everything',
        transport: 'stdio',
        program: { ...EVERYTHING_PROGRAM, variables: ['GREETING', 'PLAIN'] },
        env: { GREETING: { secret: 'everything/greeting' }, PLAIN: { value: 'given' } },
      },
      // The same program allowed to read a company secret from the vault while it runs.
      { name: 'keyed', transport: 'stdio', program: { ...EVERYTHING_PROGRAM, name: 'everything-keyed' }, vault_secrets: ['keyed/secret'] },
    ],
    // Everyone may use the server, except one tool; some users below are judged by rules of their own.
    rules: [
      { server: 'everything', tool: '*', effect: 'allow' },
      { server: 'everything', tool: 'get-sum', effect: 'deny' },
      { server: 'keyed', tool: '*', effect: 'allow' },
    ],
  })
  base = p.base
  await p.services.vault.set({ scope: 'company', ownerId: p.root.companyId, name: 'everything/greeting' }, 'from-the-vault')
})
afterAll(() => p.close())

const connect = (as: Principal, server = 'everything') => connectMcp(base, as, server)

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

test('a member who reads the subprocess’s vault token (get-env) cannot spend it on the public API', async () => {
  await p.services.vault.set({ scope: 'company', ownerId: p.root.companyId, name: 'keyed/secret' }, 'the-company-secret')
  const member = await p.createUser()
  const client = await connect(member, 'keyed')
  try {
    const env = JSON.parse((((await client.callTool({ name: 'get-env', arguments: {} })).content as Array<{ text: string }>)[0]!.text)) as Record<string, string>
    const token = env.SWITCHBOARD_VAULT_TOKEN!
    expect(token).toStartWith('sbv_')
    // The subprocess is told of a socket, not of an address on the network.
    expect(env.SWITCHBOARD_VAULT_SOCKET).toBeString()
    expect(JSON.stringify(env)).not.toContain(base)
    const stolen = await fetch(`${base}/api/vault/get`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' }, body: JSON.stringify({ name: 'keyed/secret' }) })
    expect(stolen.status).toBe(403)
    expect(await stolen.text()).not.toContain('the-company-secret')
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

test('an open session is judged again at each request: 403 once the caller may no longer use the server, 404 once it is gone', async () => {
  const erin = await p.createUser()
  const program = await p.store.db.selectFrom('mcp_commands').select('id').where('name', '=', EVERYTHING_PROGRAM.name).executeTakeFirstOrThrow()
  // A server of this test's own, so that deleting it leaves the other tests theirs.
  const server = await p.call('POST', '/api/v1/McpServer', { json: { name: 'passing', transport: 'stdio', command_id: program.id } })
  expect(server.status).toBe(201)
  expect((await p.call('POST', '/api/v1/McpPermission', { json: { server: 'passing', tool: '*', effect: 'allow' } })).status).toBe(201)
  const client = await connect(erin, 'passing')
  const headers = { 'mcp-session-id': (client.transport as StreamableHTTPClientTransport).sessionId!, accept: 'application/json, text/event-stream' }
  const call = { jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'echo', arguments: { message: 'still mine?' } } }
  const answered = await p.call('POST', '/mcp/passing', { as: erin, headers, json: call })
  expect(answered.status).toBe(200)
  expect(answered.body).toMatchObject({ id: 7, result: { content: [{ text: 'Echo: still mine?' }] } })

  expect((await p.call('POST', '/api/v1/McpPermission', { json: { user_id: erin.userId, server: 'passing', tool: '*', effect: 'deny' } })).status).toBe(201)
  // A lone call, which the gateway answers itself, and the same call in a batch, which the SDK's server answers.
  expectProblem(await p.call('POST', '/mcp/passing', { as: erin, headers, json: call }), 403, 'forbidden')
  expectProblem(await p.call('POST', '/mcp/passing', { as: erin, headers, json: [call] }), 403, 'forbidden')

  expect((await p.call('DELETE', `/api/v1/McpServer/${server.body.id}`)).status).toBe(204)
  expectProblem(await p.call('POST', '/mcp/passing', { as: erin, headers, json: call }), 404, 'not_found')
  await client.close()
})

test('a browser host from any origin may call the gateway and read the session id and the challenge', async () => {
  const initialize = { jsonrpc: '2.0', id: 1, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'browser', version: '1' } } }
  const origin = { origin: 'https://inspector.example', accept: 'application/json, text/event-stream' }
  const opened = await p.call('POST', '/mcp/everything', { headers: origin, json: initialize })
  expect(opened.status).toBe(200)
  expect(opened.headers.get('mcp-session-id')).toBeTruthy()
  expect(opened.headers.get('access-control-allow-origin')).toBe('*')
  expect(opened.headers.get('access-control-expose-headers')?.split(',')).toEqual(['mcp-session-id', 'www-authenticate'])
  // The security headers are there as well: the answer was added to, not replaced.
  expect(opened.headers.get('x-content-type-options')).toBe('nosniff')
  // So is the bucket's state, which a host paces itself by.
  expect(opened.headers.get('ratelimit-policy')).toMatch(/^"mcp";q=\d+;w=\d+$/)
  expect(opened.headers.get('ratelimit')).toMatch(/^"mcp";r=\d+;t=\d+$/)
  expect(opened.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/)
  // A refusal too, or the browser would hide why from the host.
  const refused = await p.call('POST', '/mcp/everything', { as: null, headers: { ...origin, authorization: 'Bearer sb_not-a-token' }, json: initialize })
  expect(refused.status).toBe(401)
  expect(refused.headers.get('access-control-allow-origin')).toBe('*')
  expect(refused.headers.get('www-authenticate')).toContain('Bearer')
  const preflight = await fetch(`${base}/mcp/everything`, {
    method: 'OPTIONS',
    headers: { origin: 'https://inspector.example', 'access-control-request-method': 'DELETE', 'access-control-request-headers': 'authorization, mcp-session-id' },
  })
  expect(preflight.status).toBe(204)
  expect(preflight.headers.get('access-control-allow-methods')).toContain('DELETE')
  expect(preflight.headers.get('access-control-allow-headers')).toContain('mcp-session-id')
  await p.call('DELETE', '/mcp/everything', { headers: { 'mcp-session-id': opened.headers.get('mcp-session-id')! } })
  // The aggregate gateway answers browsers as well.
  const aggregate = await p.call('POST', '/mcp', { headers: origin, json: initialize })
  expect(aggregate.status).toBe(200)
  expect(aggregate.headers.get('access-control-allow-origin')).toBe('*')
  const aggregatePreflight = await fetch(`${base}/mcp`, { method: 'OPTIONS', headers: { origin: 'https://inspector.example', 'access-control-request-method': 'POST' } })
  expect(aggregatePreflight.status).toBe(204)
  expect(aggregatePreflight.headers.get('access-control-allow-methods')).toContain('POST')
  await p.call('DELETE', '/mcp', { headers: { 'mcp-session-id': aggregate.headers.get('mcp-session-id')! } })
})

test('sessions live in the store: no standalone stream (405), a bad id is a 404, DELETE ends one, a second initialize is refused', async () => {
  const client = await connect(p.root)
  const sessionId = (client.transport as StreamableHTTPClientTransport).sessionId!
  const headers = { 'mcp-session-id': sessionId, accept: 'application/json, text/event-stream' }
  expect((await p.call('GET', '/mcp/everything', { headers: { ...headers, accept: 'text/event-stream' } })).status).toBe(405)
  const stored = await p.store.db.selectFrom('mcp_sessions').select(['user_id', 'server']).where('id', '=', sessionId).executeTakeFirst()
  expect(stored).toEqual({ user_id: p.root.userId, server: 'everything' })
  const again = await p.call('POST', '/mcp/everything', {
    headers,
    json: { jsonrpc: '2.0', id: 9, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'x', version: '1' } } },
  })
  expect(again.status).toBe(400)
  expectProblem(await p.call('POST', '/mcp/everything', { headers: { ...headers, 'mcp-session-id': 'not-a-uuid' }, json: { jsonrpc: '2.0', id: 1, method: 'ping' } }), 404, 'not_found')
  await (client.transport as StreamableHTTPClientTransport).terminateSession()
  await client.close()
  expect(await p.store.db.selectFrom('mcp_sessions').select('id').where('id', '=', sessionId).executeTakeFirst()).toBeUndefined()
  expectProblem(await p.call('POST', '/mcp/everything', { headers, json: { jsonrpc: '2.0', id: 1, method: 'ping' } }), 404, 'not_found')
})

test('a request announces at most 16 cancellations, and none with an overlong id: each is an event to every process', async () => {
  const client = await connect(p.root)
  const announced: unknown[] = []
  const stop = p.services.events.subscribe('mcp.cancel', ({ request_id }) => announced.push(request_id))
  try {
    const headers = { 'mcp-session-id': (client.transport as StreamableHTTPClientTransport).sessionId!, accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-06-18' }
    const cancel = (requestId: unknown) => ({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId } })
    const batch = [cancel('x'.repeat(5_000)), ...Array.from({ length: 40 }, (_, i) => cancel(i))]
    expect((await p.call('POST', '/mcp/everything', { headers, json: batch })).status).toBe(202)
    expect(announced).toEqual(Array.from({ length: 16 }, (_, i) => i))
  } finally {
    stop()
    await client.close()
  }
})

test('two users get separate upstream processes; one killed, the next calls start a new one', async () => {
  const running = () => childProcesses('mcp-server-everything')
  await p.services.upstreams.closeAll()
  await until(() => running().length === 0, { what: 'the upstream processes of earlier tests to exit' })
  const [mine, theirs] = [await connect(p.root), await connect(await p.createUser())]
  try {
    await mine.callTool({ name: 'echo', arguments: { message: 'one' } })
    await theirs.callTool({ name: 'echo', arguments: { message: 'one' } })
    const pids = running()
    expect(pids.length).toBe(2)
    process.kill(pids[0]!, 'SIGKILL')
    // The gateway notices the process end and drops its connection; nobody's next call fails.
    await until(() => p.services.upstreams.size === 1, { what: 'the gateway to drop the killed upstream’s connection' })
    for (const client of [mine, theirs]) {
      expect(await client.callTool({ name: 'echo', arguments: { message: 'two' } })).toMatchObject({ content: [{ text: 'Echo: two' }] })
    }
    const now = running()
    expect(now.length).toBe(2)
    expect(now).not.toContain(pids[0]!)
    expect(now).toContain(pids[1]!)
  } finally {
    await mine.close()
    await theirs.close()
  }
})

test('resources and prompts are judged like tools: one denied by name is neither listed nor served', async () => {
  const everyone = await connect(p.root)
  const resources = (await everyone.listResources()).resources
  const [hidden, shown] = [resources[0]!.uri, resources[1]!.uri]
  expect((await everyone.listPrompts()).prompts.map((x) => x.name)).toContain('simple-prompt')
  await everyone.close()

  const eve = await p.createUser()
  for (const rule of [
    { tool: '*', effect: 'allow' },
    { tool: `resource:${hidden}`, effect: 'deny' },
    { tool: 'prompt:simple-prompt', effect: 'deny' },
  ]) {
    expect((await p.call('POST', '/api/v1/McpPermission', { json: { user_id: eve.userId, server: 'everything', ...rule } })).status).toBe(201)
  }
  const client = await connect(eve)
  try {
    const uris = (await client.listResources()).resources.map((r) => r.uri)
    expect(uris).toContain(shown)
    expect(uris).not.toContain(hidden)
    await expect(client.readResource({ uri: hidden })).rejects.toThrow(`You may not use the resource ${hidden} on everything.`)
    expect((await client.readResource({ uri: shown })).contents[0]!.uri).toBe(shown)
    const prompts = (await client.listPrompts()).prompts.map((x) => x.name)
    expect(prompts).not.toContain('simple-prompt')
    expect(prompts).toContain('args-prompt')
    await expect(client.getPrompt({ name: 'simple-prompt' })).rejects.toThrow('You may not use the prompt simple-prompt on everything.')
  } finally {
    await client.close()
  }
})

test('a resource rule ending in * keeps a whole family of URIs out, listed or read by name', async () => {
  const gil = await p.createUser()
  for (const rule of [
    { tool: '*', effect: 'allow' },
    { tool: 'resource:demo://resource/static/*', effect: 'deny' },
  ]) {
    expect((await p.call('POST', '/api/v1/McpPermission', { json: { user_id: gil.userId, server: 'everything', ...rule } })).status).toBe(201)
  }
  const root = await connect(p.root)
  const hidden = (await root.listResources()).resources.map((r) => r.uri).filter((uri) => uri.startsWith('demo://resource/static/'))
  await root.close()
  expect(hidden.length).toBeGreaterThan(0)
  const client = await connect(gil)
  try {
    const uris = (await client.listResources()).resources.map((r) => r.uri)
    for (const uri of hidden) {
      expect(uris).not.toContain(uri)
      await expect(client.readResource({ uri })).rejects.toThrow(`You may not use the resource ${uri} on everything.`)
    }
  } finally {
    await client.close()
  }
})

test('a Streamable HTTP upstream (server-everything over HTTP) is served through the gateway, with its headers from the vault', async () => {
  const port = freePort()
  const stops: Array<() => void> = []
  const upstream = Bun.spawn([EVERYTHING, 'streamableHttp'], { env: { ...process.env, PORT: String(port) }, stdout: 'ignore', stderr: 'pipe' })
  try {
    // It says so on stderr once it listens.
    const reader = upstream.stderr.getReader()
    for (let seen = ''; !seen.includes('listening'); ) seen += new TextDecoder().decode((await reader.read()).value)
    reader.releaseLock()
    // A relay in front of it notes the headers the gateway sends.
    const seen: string[] = []
    const relay = Bun.serve({
      hostname: '127.0.0.1',
      port: 0,
      idleTimeout: 60,
      fetch(request) {
        seen.push(request.headers.get('x-token') ?? '')
        const url = new URL(request.url)
        return fetch(`http://127.0.0.1:${port}${url.pathname}`, { method: request.method, headers: request.headers, body: request.body })
      },
    })
    stops.push(() => relay.stop(true))
    await p.services.vault.set({ scope: 'company', ownerId: p.root.companyId, name: 'remote/token' }, 'remote-secret')
    const created = await p.call('POST', '/api/v1/McpServer', {
      json: { name: 'remote', transport: 'streamable-http', url: `http://127.0.0.1:${relay.port}/mcp`, headers: { 'X-Token': { secret: 'remote/token' } } },
    })
    expect(created.status).toBe(201)
    await p.call('POST', '/api/v1/McpPermission', { json: { server: 'remote', tool: 'echo', effect: 'allow' } })
    const client = await connect(p.root, 'remote')
    try {
      expect((await client.listTools()).tools.map((t) => t.name)).toEqual(['echo'])
      expect(await client.callTool({ name: 'echo', arguments: { message: 'over http' } })).toMatchObject({ content: [{ text: 'Echo: over http' }] })
      expect(await client.callTool({ name: 'get-sum', arguments: { a: 1, b: 2 } })).toMatchObject({ isError: true })
      expect(seen.length).toBeGreaterThan(0)
      expect(seen.every((token) => token === 'remote-secret')).toBe(true)
    } finally {
      await client.close()
    }
  } finally {
    upstream.kill()
    for (const stop of stops) stop()
  }
})

test('the upstream’s progress notifications reach the host during a long tool call', async () => {
  const client = await connect(p.root)
  try {
    const progress: number[] = []
    const result = await client.callTool({ name: 'trigger-long-running-operation', arguments: { duration: 0.3, steps: 3 } }, undefined, {
      onprogress: (update) => progress.push(update.progress),
    })
    expect(result.isError).toBeFalsy()
    // The SDK's clients (ours upstream, the host's here) may drop a progress notification that arrives together
    // with the response (modelcontextprotocol/typescript-sdk#2580); the ones before it always arrive, in order.
    expect(progress.slice(0, 2)).toEqual([1, 2])
    expect([1, 2, 3].slice(0, progress.length)).toEqual(progress)
  } finally {
    await client.close()
  }
})

test('an answer is one JSON body, unless the request asks for progress: then an event stream carries the notifications too', async () => {
  const client = await connect(p.root)
  try {
    const session = (client.transport as StreamableHTTPClientTransport).sessionId!
    const ask = (params: Record<string, unknown>) =>
      p.call('POST', '/mcp/everything', {
        json: { jsonrpc: '2.0', id: 7, method: 'tools/call', params: { name: 'echo', arguments: { message: 'hi' }, ...params } },
        headers: { 'mcp-session-id': session, accept: 'application/json, text/event-stream', 'mcp-protocol-version': '2025-06-18' },
      })
    const plain = await ask({})
    expect(plain.headers.get('content-type')).toStartWith('application/json')
    expect(plain.body).toMatchObject({ jsonrpc: '2.0', id: 7, result: { content: [{ type: 'text', text: 'Echo: hi' }] } })
    const streamed = await ask({ _meta: { progressToken: 'p1' } })
    expect(streamed.headers.get('content-type')).toStartWith('text/event-stream')
    expect(String(streamed.body)).toContain('"text":"Echo: hi"')
  } finally {
    await client.close()
  }
})

test('a user holds at most 32 sessions: opening one more closes their least recently used', async () => {
  const fay = await p.createUser()
  const clients: Client[] = []
  for (let i = 0; i < 33; i++) clients.push(await connect(fay))
  try {
    const sessionOf = (client: Client) => (client.transport as StreamableHTTPClientTransport).sessionId!
    const probe = (client: Client) =>
      p.call('POST', '/mcp/everything', { as: fay, json: { jsonrpc: '2.0', id: 1, method: 'ping' }, headers: { 'mcp-session-id': sessionOf(client), accept: 'application/json, text/event-stream' } })
    expectProblem(await probe(clients[0]!), 404, 'not_found')
    expect((await probe(clients[1]!)).status).toBe(200)
    expect((await probe(clients[32]!)).status).toBe(200)
  } finally {
    await Promise.all(clients.map((c) => c.close()))
  }
})
