import { afterAll, beforeAll, expect, test } from 'bun:test'
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { manualClock } from '../../src/clock.ts'
import { childProcesses, connectMcp, FLAKY, startMcpPlatform, type McpTestPlatform } from '../helpers/mcp.ts'
import { expectProblem } from '../helpers/problem.ts'
import type { Principal } from '../helpers/platform.ts'
import { until } from '../helpers/until.ts'
import { overVaultSocket } from '../helpers/vault.ts'

// The gateway's upstream connections against a real stdio server that counts its starts and can be made to fail.
const clock = manualClock()
const dir = mkdtempSync(join(tmpdir(), 'switchboard-flaky-'))
let p: McpTestPlatform

const lines = (file: string) => (existsSync(join(dir, file)) ? readFileSync(join(dir, file), 'utf8').split('\n').filter(Boolean).length : 0)
const starts = () => lines('starts')
/** How many calls of the fixture's `slow` tool have begun, in any of its processes. */
const slowCalls = () => lines('slow-calls')
const text = (result: Awaited<ReturnType<Client['callTool']>>) => (result.content as Array<{ text: string }>)[0]!.text

beforeAll(async () => {
  writeFileSync(join(dir, 'starts'), '')
  p = await startMcpPlatform({
    // The fixture reports its starts in a folder of this test's; a sandbox would give it a private /tmp instead
    // (tests/mcp/sandbox.test.ts proves the sandbox).
    // The public base URL leads nowhere, as behind a balancer it may lead to another process: subprocesses must call
    // their own process back over loopback.
    env: {
      SWITCHBOARD_MCP_BREAKER_FAILURES: '3',
      SWITCHBOARD_MCP_BREAKER_COOLDOWN_SECONDS: '30',
      SWITCHBOARD_MCP_IDLE_SECONDS: '60',
      SWITCHBOARD_MCP_SANDBOX: 'none',
      SWITCHBOARD_BASE_URL: 'http://switchboard.invalid',
    },
    clock,
    servers: [
      {
        name: 'flaky',
        transport: 'stdio',
        program: { name: 'flaky', command: process.execPath, args: [FLAKY], variables: ['FLAKY_DIR'] },
        env: { FLAKY_DIR: { value: dir } },
        vault_secrets: ['shared/key', 'personal/key'],
      },
    ],
    rules: [{ server: 'flaky', tool: '*', effect: 'allow' }],
  })
})
afterAll(async () => {
  await p.close()
  rmSync(dir, { recursive: true, force: true })
})

const connect = (as: Principal = p.root) => connectMcp(p.base, as, 'flaky')

test('repeated upstream failures open the breaker: quick errors, no upstream call; after the cool-down one probe closes it', async () => {
  const before = starts()
  writeFileSync(join(dir, 'down'), '')
  const client = await connect()
  try {
    for (let i = 0; i < 3; i++) await expect(client.listTools()).rejects.toThrow()
    expect(starts()).toBe(before + 3)
    await expect(client.listTools()).rejects.toThrow('The upstream is failing; calls are held back for 30 s.')
    expect(starts()).toBe(before + 3)

    const breakers = await p.call('GET', '/api/mcp/breakers?server=flaky')
    expect(breakers.status).toBe(200)
    expect(breakers.body.data).toEqual([
      { server: 'flaky', user_id: p.root.userId, delegated: false, state: 'open', failures: 3, opened_at: new Date(clock.now()).toISOString(), retry_at: new Date(clock.now() + 30_000).toISOString() },
    ])
    // A member sees their own breakers only (none yet); another company's admin sees none of these; nobody gets a 401.
    expect((await p.call('GET', '/api/mcp/breakers', { as: await p.createUser() })).body.data).toEqual([])
    const otherAdmin = await p.createUser({ companyId: await p.createCompany(), role: 'admin' })
    expect((await p.call('GET', '/api/mcp/breakers', { as: otherAdmin })).body.data).toEqual([])
    expectProblem(await p.call('GET', '/api/mcp/breakers', { as: null }), 401, 'unauthorized')

    clock.advance(30_000)
    expect((await p.call('GET', '/api/mcp/breakers?server=flaky')).body.data[0]!.state).toBe('half-open')
    rmSync(join(dir, 'down'))
    const outcomes = await Promise.allSettled([client.listTools(), client.listTools(), client.listTools()])
    expect(outcomes.filter((o) => o.status === 'fulfilled').length).toBe(1)
    expect(starts()).toBe(before + 4)
    expect((await p.call('GET', '/api/mcp/breakers?server=flaky')).body.data[0]).toMatchObject({ state: 'closed', failures: 0 })
    expect(text(await client.callTool({ name: 'hello', arguments: {} }))).toStartWith('hello from')
    expect(starts()).toBe(before + 4)
  } finally {
    rmSync(join(dir, 'down'), { force: true })
    await client.close()
  }
})

test('an upstream unused for the idle time is closed and its process ends; the next call starts a new one', async () => {
  const client = await connect()
  try {
    const first = text(await client.callTool({ name: 'hello', arguments: {} }))
    const pid = Number(first.replace('hello from ', ''))
    expect(childProcesses('flaky-server')).toContain(pid)
    clock.advance(59_000)
    expect(await p.services.upstreams.reapIdle()).toBe(0)
    clock.advance(1_000)
    expect(await p.services.upstreams.reapIdle()).toBe(1)
    await until(() => !childProcesses('flaky-server').includes(pid), { what: `the reaped upstream's process (pid ${pid}) to end` })
    // Its breaker, closed and clean, is forgotten with it.
    expect((await p.call('GET', '/api/mcp/breakers?server=flaky')).body.data).toEqual([])
    const second = text(await client.callTool({ name: 'hello', arguments: {} }))
    expect(second).not.toBe(first)
  } finally {
    await client.close()
  }
})

test('a subprocess reads the secrets it was granted with its own vault token, and nothing else', async () => {
  const company = p.root.companyId
  await p.services.vault.set({ scope: 'company', ownerId: company, name: 'shared/key' }, 'company-value')
  await p.services.vault.set({ scope: 'company', ownerId: company, name: 'personal/key' }, 'company-default')
  await p.services.vault.set({ scope: 'user', ownerId: p.root.userId, name: 'personal/key' }, 'root-own')
  await p.services.vault.set({ scope: 'company', ownerId: company, name: 'other/key' }, 'outside-the-grant')
  const client = await connect()
  try {
    const read = async (name: string) => text(await client.callTool({ name: 'vault-read', arguments: { name } }))
    expect(await read('shared/key')).toBe('200 {"name":"shared/key","value":"company-value"}')
    // The user's own secret of a name comes before the company's.
    expect(await read('personal/key')).toBe('200 {"name":"personal/key","value":"root-own"}')
    expect(await read('other/key')).toStartWith('404 ')

    const token = text(await client.callTool({ name: 'vault-token', arguments: {} }))
    expect(token).toStartWith('sbv_')
    const listed = await overVaultSocket(p, '/api/vault/list', token, { prefix: '' })
    expect(listed.body).toEqual({ names: ['personal/key', 'shared/key'] })
    // The token dies with its process.
    clock.advance(60_000)
    await p.services.upstreams.reapIdle()
    const after = await overVaultSocket(p, '/api/vault/get', token, { name: 'shared/key' })
    expect(after.status).toBe(401)
  } finally {
    await client.close()
  }
})

test('a cancelled call and the upstream’s own error replies neither cost the connection nor count against the breaker', async () => {
  const client = await connect()
  try {
    const pid = text(await client.callTool({ name: 'hello', arguments: {} }))
    for (let i = 0; i < 4; i++) {
      await expect(client.callTool({ name: 'slow', arguments: { ms: 2_000 } }, undefined, { signal: AbortSignal.timeout(50) })).rejects.toThrow()
      // The upstream has no resources: it answers with an error (method not found).
      await expect(client.readResource({ uri: 'demo://nothing' })).rejects.toThrow()
    }
    expect(text(await client.callTool({ name: 'hello', arguments: {} }))).toBe(pid)
    expect((await p.call('GET', '/api/mcp/breakers?server=flaky')).body.data[0]).toMatchObject({ state: 'closed', failures: 0 })
  } finally {
    await client.close()
  }
})

test('a newer definition gets a new process; a call running on the old one still finishes, then the old one ends', async () => {
  const client = await connect()
  try {
    const before = text(await client.callTool({ name: 'hello', arguments: {} })).replace('hello from ', '')
    const begun = slowCalls()
    const slow = client.callTool({ name: 'slow', arguments: { ms: 600 } })
    // The edit must find the call running on the old process.
    await until(() => slowCalls() > begun, { what: 'the slow call to reach the upstream' })
    const server = (await p.call('GET', '/api/v1/McpServer?name=eq.flaky')).body.data[0]!
    expect((await p.call('PATCH', `/api/v1/McpServer/${server.id}`, { json: { description: 'edited' } })).status).toBe(200)
    const after = text(await client.callTool({ name: 'hello', arguments: {} })).replace('hello from ', '')
    expect(after).not.toBe(before)
    expect(childProcesses('flaky-server')).toContain(Number(before))
    expect(text(await slow)).toBe(`slow from ${before}`)
    // Closing asks the process to end, and kills it if it takes more than a moment.
    await until(() => !childProcesses('flaky-server').includes(Number(before)), { what: `the retired upstream's process (pid ${before}) to end once its call was done` })
  } finally {
    await client.close()
  }
})

test('a killed subprocess’s vault token stops working at once', async () => {
  const client = await connect()
  try {
    const token = text(await client.callTool({ name: 'vault-token', arguments: {} }))
    const pid = Number(text(await client.callTool({ name: 'hello', arguments: {} })).replace('hello from ', ''))
    const read = () => overVaultSocket(p, '/api/vault/get', token, { name: 'shared/key' })
    expect((await read()).status).toBe(200)
    const open = p.services.upstreams.size
    process.kill(pid, 'SIGKILL')
    await until(() => p.services.upstreams.size === open - 1, { what: 'the gateway to drop the killed upstream’s connection' })
    expect((await read()).status).toBe(401)
  } finally {
    await client.close()
  }
})

test('acting as an agent’s service account, a subprocess gets the company’s secrets, never the account’s own', async () => {
  const server = (await p.services.mcpDirectory.server(p.root.companyId!, 'flaky'))!
  const read = async (delegated: boolean) => {
    const result = await p.services.upstreams.call({ userId: p.root.userId, delegated }, server, (c) => c.callTool({ name: 'vault-read', arguments: { name: 'personal/key' } }))
    return (result.content as Array<{ text: string }>)[0]!.text
  }
  expect(await read(false)).toBe('200 {"name":"personal/key","value":"root-own"}')
  expect(await read(true)).toBe('200 {"name":"personal/key","value":"company-default"}')
})

test('disabling a server ends its processes at the next sweep', async () => {
  const client = await connect()
  const pid = Number(text(await client.callTool({ name: 'hello', arguments: {} })).replace('hello from ', ''))
  await client.close()
  const server = (await p.call('GET', '/api/v1/McpServer?name=eq.flaky')).body.data[0]!
  expect(await p.services.upstreams.reapIdle()).toBe(0)
  expect((await p.call('PATCH', `/api/v1/McpServer/${server.id}`, { json: { enabled: false } })).status).toBe(200)
  try {
    const open = p.services.upstreams.size
    expect(open).toBeGreaterThan(0)
    expect(await p.services.upstreams.reapIdle()).toBe(open)
    expect(p.services.upstreams.size).toBe(0)
    expect(childProcesses('flaky-server')).not.toContain(pid)
  } finally {
    await p.call('PATCH', `/api/v1/McpServer/${server.id}`, { json: { enabled: true } })
  }
})
