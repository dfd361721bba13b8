import { afterAll, beforeAll, expect, spyOn, test } from 'bun:test'
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { Server } from '@modelcontextprotocol/sdk/server/index.js'
import { EVERYTHING_PROGRAM, FLAKY, startMcpPlatform, type McpTestPlatform } from '../helpers/mcp.ts'
import { until } from '../helpers/until.ts'

// The gateway answers a lone tools/call itself instead of through an MCP server of the SDK's made for the request:
// the answer must be the one the SDK would give, and the transport's rules and the host's cancellations must hold
// all the same.
const dir = mkdtempSync(join(tmpdir(), 'switchboard-gateway-'))
const lines = (file: string) => (existsSync(join(dir, file)) ? readFileSync(join(dir, file), 'utf8').split('\n').filter(Boolean).length : 0)
let p: McpTestPlatform

beforeAll(async () => {
  p = await startMcpPlatform({
    // The fixture writes into this test's folder, which a sandbox would hide from it (tests/mcp/sandbox.test.ts proves the sandbox).
    env: { SWITCHBOARD_MCP_SANDBOX: 'none' },
    servers: [
      { name: 'everything', transport: 'stdio', program: EVERYTHING_PROGRAM },
      { name: 'flaky', transport: 'stdio', program: { name: 'flaky', command: process.execPath, args: [FLAKY], variables: ['FLAKY_DIR'] }, env: { FLAKY_DIR: { value: dir } } },
    ],
    rules: [
      { server: 'everything', tool: '*', effect: 'allow' },
      { server: 'everything', tool: 'get-sum', effect: 'deny' },
      { server: 'flaky', tool: '*', effect: 'allow' },
    ],
  })
})
afterAll(async () => {
  await p.close()
  rmSync(dir, { recursive: true, force: true })
})

const ACCEPT = 'application/json, text/event-stream'
const VERSION = '2025-06-18'

/** A session of `server` opened as a host opens one; answers its id. */
async function session(server: string): Promise<string> {
  const opened = await p.call('POST', `/mcp/${server}`, {
    headers: { accept: ACCEPT },
    json: { jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: VERSION, capabilities: {}, clientInfo: { name: 'raw-host', version: '1' } } },
  })
  expect(opened.status).toBe(200)
  const id = opened.headers.get('mcp-session-id')!
  expect((await p.call('POST', `/mcp/${server}`, { headers: { accept: ACCEPT, 'mcp-session-id': id, 'mcp-protocol-version': VERSION }, json: { jsonrpc: '2.0', method: 'notifications/initialized' } })).status).toBe(202)
  return id
}

const call = (id: number | string, name: string, args: Record<string, unknown>) => ({ jsonrpc: '2.0', id, method: 'tools/call', params: { name, arguments: args } })

/** POSTs `json` to the session as a host does; `headers` overrides the host's. */
function post(server: string, sessionId: string, json: unknown, headers: Record<string, string> = {}) {
  return p.call('POST', `/mcp/${server}`, { headers: { accept: ACCEPT, 'mcp-session-id': sessionId, 'mcp-protocol-version': VERSION, ...headers }, json })
}

test('a lone tools/call gets the answer the SDK gives the same call in a batch, without a server of its own', async () => {
  const id = await session('everything')
  const servers = spyOn(Server.prototype, 'connect')
  try {
    for (const [name, args] of [
      ['echo', { message: 'straight' }], // a result
      ['get-sum', { a: 1, b: 2 }], // refused by the rules: a result saying so
      ['no-such-tool', {}], // the upstream's error
      ['echo', { message: 42 }], // arguments the tool refuses
    ] as const) {
      servers.mockClear()
      const alone = await post('everything', id, call(7, name, args))
      expect(alone.status).toBe(200)
      expect(alone.headers.get('content-type')).toBe('application/json')
      // Answered here: no MCP server was made for it.
      expect(servers).not.toHaveBeenCalled()
      const batched = await post('everything', id, [call(7, name, args)])
      expect(servers).toHaveBeenCalledTimes(1)
      expect(alone.body).toEqual(batched.body)
    }
  } finally {
    servers.mockRestore()
  }
  const answered = await post('everything', id, call('a-string-id', 'echo', { message: 'hi' }))
  expect(answered.body).toEqual({ jsonrpc: '2.0', id: 'a-string-id', result: { content: [{ type: 'text', text: 'Echo: hi' }] } })
})

test('the transport’s rules hold for a lone tools/call: what it accepts, what it is sent, the protocol it speaks', async () => {
  const id = await session('everything')
  const refused = async (headers: Record<string, string>, status: number, says: string) => {
    const reply = await post('everything', id, call(1, 'echo', { message: 'x' }), headers)
    expect(reply.status).toBe(status)
    expect(JSON.stringify(reply.body)).toContain(says)
  }
  await refused({ accept: 'application/json' }, 406, 'Not Acceptable')
  await refused({ 'mcp-protocol-version': '1999-01-01' }, 400, 'Unsupported protocol version')
  const asText = await p.call('POST', '/mcp/everything', {
    headers: { accept: ACCEPT, 'mcp-session-id': id, 'mcp-protocol-version': VERSION, 'content-type': 'text/plain' },
    body: JSON.stringify(call(1, 'echo', { message: 'x' })),
  })
  expect(asText.status).toBe(415)
  // Not a request the SDK's schemas take as it stands (an id that is not an integer, a field of no request's): the
  // SDK answers it, as it always did.
  expect((await post('everything', id, { ...call(1.5, 'echo', { message: 'x' }) })).status).toBe(400)
  const odd = await post('everything', id, { ...call(2, 'echo', { message: 'x' }), extra: true })
  expect(odd.status).toBeLessThan(500)
})

test('a host that hangs up on a lone tools/call has it cancelled upstream', async () => {
  const id = await session('flaky')
  const [calls, cancelled] = [lines('slow-calls'), lines('slow-cancelled')]
  const hangUp = new AbortController()
  const slow = fetch(`${p.base}/mcp/flaky`, {
    method: 'POST',
    headers: { authorization: `Bearer ${p.root.token}`, 'content-type': 'application/json', accept: ACCEPT, 'mcp-session-id': id, 'mcp-protocol-version': VERSION },
    body: JSON.stringify(call(42, 'slow', { ms: 30_000 })),
    signal: hangUp.signal,
  }).catch((error: Error) => error)
  await until(() => lines('slow-calls') > calls, { what: 'the call to be running upstream' })
  hangUp.abort()
  expect(await slow).toBeInstanceOf(Error)
  await until(() => lines('slow-cancelled') > cancelled, { what: 'the upstream to hear the call cancelled' })
})

test('a host’s cancellation stops a lone tools/call at once and reaches the upstream', async () => {
  const id = await session('flaky')
  const [calls, cancelled] = [lines('slow-calls'), lines('slow-cancelled')]
  const started = Date.now()
  const slow = post('flaky', id, call(41, 'slow', { ms: 30_000 }))
  await until(() => lines('slow-calls') > calls, { what: 'the call to be running upstream' })
  const cancel = { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 41, reason: 'the person stopped it' } }
  expect((await post('flaky', id, cancel)).status).toBe(202)
  const answer = await slow
  expect(Date.now() - started).toBeLessThan(15_000)
  expect(answer.body).toMatchObject({ jsonrpc: '2.0', id: 41, error: { message: expect.any(String) } })
  await until(() => lines('slow-cancelled') > cancelled, { what: 'the upstream to hear the call cancelled' })
})
