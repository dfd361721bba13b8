import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { Sandbox, SandboxUnavailable } from '../../src/mcp/sandbox.ts'
import { childProcesses, connectMcp, EVERYTHING_STDIO, listToolsFailure, startMcpPlatform, type McpTestPlatform } from '../helpers/mcp.ts'
import { HAS_BWRAP, type Principal } from '../helpers/platform.ts'
import { expectProblem } from '../helpers/problem.ts'
import { until } from '../helpers/until.ts'

const REPO = join(import.meta.dir, '..', '..')
const INSPECT = join(import.meta.dir, '..', 'fixtures', 'mcp', 'inspect-server.ts')
const INSPECT_PROGRAM = { name: 'inspect', command: process.execPath, args: [INSPECT], variables: ['GIVEN'] }

test('without bubblewrap a stdio server does not start, and the message names the way out and its risk', () => {
  const sandbox = new Sandbox({ mode: 'bwrap', dataDir: '/nonexistent', bwrap: '/nonexistent/bwrap' })
  expect(() => sandbox.wrap('true', [], { network: true })).toThrow(SandboxUnavailable)
  expect(() => sandbox.wrap('true', [], { network: true })).toThrow(/SWITCHBOARD_MCP_SANDBOX=none.*unsandboxed/)
  // The operator's explicit opt-out runs the program as it is.
  expect(new Sandbox({ mode: 'none', dataDir: '/nonexistent' }).wrap('npx', ['x'], { network: true })).toEqual({ command: 'npx', args: ['x'] })
})

describe('the platform catalogue: only a superadmin decides what runs', () => {
  let p: McpTestPlatform
  let admin: Principal
  let program: string
  beforeAll(async () => {
    p = await startMcpPlatform({ servers: [{ name: 'inspect', transport: 'stdio', program: INSPECT_PROGRAM }], rules: [{ server: 'inspect', tool: '*', effect: 'allow' }] })
    admin = await p.createUser({ role: 'admin' })
    program = (await p.call('GET', '/api/v1/McpCommand?name=eq.inspect')).body.data[0]!.id
  })
  afterAll(() => p.close())

  test('a company admin cannot add or change a program, nor give a server a command, arguments or other variables', async () => {
    expectProblem(await p.call('POST', '/api/v1/McpCommand', { as: admin, json: { name: 'shell', command: '/bin/sh', args: ['-c', 'id'] } }), 403, 'forbidden')
    expectProblem(await p.call('PATCH', `/api/v1/McpCommand/${program}`, { as: admin, json: { command: '/bin/sh' } }), 403, 'forbidden')
    expectProblem(await p.call('DELETE', `/api/v1/McpCommand/${program}`, { as: admin }), 403, 'forbidden')
    const own = expectProblem(await p.call('POST', '/api/v1/McpServer', { as: admin, json: { name: 'own', transport: 'stdio', command: '/bin/sh', args: ['-c', 'id'] } }), 422, 'validation_error')
    expect(own.errors).toContainEqual({ path: 'command_id', message: 'a stdio server runs a program of the catalogue (McpCommand)' })
    expect(own.errors).toContainEqual({ path: '(body)', message: 'unknown field(s): command, args' })
    // Variables the program does not declare are refused: NODE_OPTIONS or LD_PRELOAD would run code of their own.
    for (const variable of ['NODE_OPTIONS', 'LD_PRELOAD', 'PATH']) {
      const refused = expectProblem(
        await p.call('POST', '/api/v1/McpServer', { as: admin, json: { name: `v-${variable.toLowerCase().replace('_', '-')}`, transport: 'stdio', command_id: program, env: { [variable]: { value: '--require /tmp/x.js' } } } }),
        422,
        'validation_error',
      )
      expect(refused.errors).toContainEqual(expect.objectContaining({ path: `env.${variable}` }))
    }
    const changed = expectProblem(await p.call('PATCH', `/api/v1/McpServer/${(await p.call('GET', '/api/v1/McpServer?name=eq.inspect')).body.data[0]!.id}`, { as: admin, json: { env: { LD_PRELOAD: { value: 'x' } } } }), 422, 'validation_error')
    expect(changed.errors).toContainEqual(expect.objectContaining({ path: 'env.LD_PRELOAD' }))
  })

  test('a company admin offers a catalogue program, setting only the variables it declares', async () => {
    const created = await p.call('POST', '/api/v1/McpServer', { as: admin, json: { name: 'offered', transport: 'stdio', command_id: program, env: { GIVEN: { secret: 'inspect/given' } } } })
    expect(created.status).toBe(201)
    expect(created.body).toMatchObject({ command_id: program, env: { GIVEN: { secret: 'inspect/given' } } })
    // Company admins read the catalogue to choose from it; members do not.
    expect((await p.call('GET', '/api/v1/McpCommand', { as: admin })).body.data.map((c: { name: string }) => c.name)).toContain('inspect')
    expectProblem(await p.call('GET', '/api/v1/McpCommand', { as: await p.createUser() }), 403, 'forbidden')
  })

  test('a program offered to one company alone is neither seen nor usable by another; programs get no network unless given one', async () => {
    const other = await p.createUser({ companyId: await p.createCompany(), role: 'admin' })
    const theirs = await p.call('POST', '/api/v1/McpCommand', { json: { name: 'acme-db', command: 'psql', args: ['postgresql://acme:secret@db/acme'], company_id: other.companyId } })
    expect(theirs.status).toBe(201)
    expect((await p.call('GET', '/api/v1/McpCommand')).body.data.map((c: { name: string }) => c.name)).toContain('acme-db')
    expect((await p.call('GET', '/api/v1/McpCommand', { as: admin })).body.data.map((c: { name: string }) => c.name)).not.toContain('acme-db')
    expectProblem(await p.call('GET', `/api/v1/McpCommand/${theirs.body.id}`, { as: admin }), 404, 'not_found')
    const borrowed = expectProblem(await p.call('POST', '/api/v1/McpServer', { as: admin, json: { name: 'borrowed', transport: 'stdio', command_id: theirs.body.id } }), 422, 'validation_error')
    expect(borrowed.errors).toContainEqual({ path: 'command_id', message: 'no such record' })
    expect((await p.call('POST', '/api/v1/McpServer', { as: other, json: { name: 'own-db', transport: 'stdio', command_id: theirs.body.id } })).status).toBe(201)
    expect(theirs.body.network).toBe(false)
  })

  test('no ModelAcl override opens the catalogue to companies', async () => {
    expect((await p.call('POST', '/api/v1/ModelAcl', { json: { model: 'McpCommand', verb: 'create', min_role: 'admin' } })).status).toBe(201)
    expectProblem(await p.call('POST', '/api/v1/McpCommand', { as: admin, json: { name: 'shell', command: '/bin/sh' } }), 403, 'forbidden')
  })

  test('a program in use cannot be deleted; a disabled one does not start', async () => {
    expectProblem(await p.call('DELETE', `/api/v1/McpCommand/${program}`), 409, 'conflict')
    expect((await p.call('PATCH', `/api/v1/McpCommand/${program}`, { json: { enabled: false } })).status).toBe(200)
    expect(await listToolsFailure(p.base, p.root, 'inspect')).toContain('the program inspect is disabled in the platform')
    await p.call('PATCH', `/api/v1/McpCommand/${program}`, { json: { enabled: true } })
  })
})

// The sandbox itself, probed from inside by a hostile program.
describe.skipIf(!HAS_BWRAP)('stdio servers run in a bubblewrap sandbox', () => {
  let p: McpTestPlatform
  // In the install folder, as the default ./data is: the sandbox shows that folder, so it must hide this one.
  const dataDir = mkdtempSync(join(REPO, '.sandbox-test-data-'))
  const envFile = join(REPO, '.env.sandbox-test')
  let report: any

  beforeAll(async () => {
    writeFileSync(envFile, 'OPERATOR_SECRET=kept-next-to-the-program\n')
    p = await startMcpPlatform({
      env: { SWITCHBOARD_DATA_DIR: dataDir, INTERNAL_API_SECRET: 'internal-secret-for-tests' },
      servers: [{ name: 'inspect', transport: 'stdio', program: INSPECT_PROGRAM, env: { GIVEN: { value: 'declared' } }, vault_secrets: ['inspect/key'] }, EVERYTHING_STDIO],
      rules: [{ server: '*', tool: '*', effect: 'allow' }],
    })
    expect(existsSync(join(dataDir, 'master.key'))).toBe(true)
    const client = await connectMcp(p.base, p.root, 'inspect')
    const result = await client.callTool({
      name: 'inspect',
      arguments: {
        read: [`/proc/${process.pid}/environ`, `/proc/${process.pid}/cmdline`, join(dataDir, 'master.key'), '/etc/shadow', envFile],
        list: [dataDir, '/root', '/home', '/var', join(REPO, '.git')],
        // kernel.hostname is the sandbox's own (uts namespace): a harmless probe of whether /proc/sys is writable.
        write: [join(REPO, 'sandbox-write-probe'), '/usr/sandbox-write-probe', '/tmp/probe', '/proc/sys/kernel/hostname'],
      },
    })
    await client.close()
    report = JSON.parse((result.content as Array<{ text: string }>)[0]!.text)
  })
  afterAll(async () => {
    await p.close()
    rmSync(dataDir, { recursive: true, force: true })
    rmSync(envFile, { force: true })
  })

  test('server-everything works through /mcp/everything from inside its sandbox', async () => {
    const client = await connectMcp(p.base, p.root, 'everything')
    try {
      expect(await client.callTool({ name: 'echo', arguments: { message: 'sandboxed' } })).toMatchObject({ content: [{ type: 'text', text: 'Echo: sandboxed' }] })
      // The platform's child is bubblewrap, which runs the server.
      expect(childProcesses('bwrap .*mcp-server-everything')).toHaveLength(1)
    } finally {
      await client.close()
    }
  })

  test('it cannot see the platform’s processes or read their environment', () => {
    expect(report.pids).not.toContain(process.pid)
    // Its own pid namespace: it is one of the first few processes there.
    expect(report.pid).toBeLessThan(10)
    expect(report.read[`/proc/${process.pid}/environ`]).toStartWith('refused')
    expect(report.read[`/proc/${process.pid}/cmdline`]).toStartWith('refused')
    expect(report.hostname).toBe('mcp-sandbox')
  })

  test('it cannot read the data directory, the key file, the operator’s .env or the host’s private files', () => {
    expect(report.read[join(dataDir, 'master.key')]).toStartWith('refused')
    expect(report.list[dataDir]).toBe('ok: ')
    expect(report.read['/etc/shadow']).toStartWith('refused')
    expect(report.read[envFile]).not.toContain('kept-next-to-the-program')
    expect(report.list['/root']).toStartWith('refused')
    expect(report.list['/home']).toStartWith('refused')
    // The repository's configuration (a deploy token in a remote's URL) is hidden where it exists.
    if (existsSync(join(REPO, '.git'))) expect(report.list[join(REPO, '.git')]).toBe('ok: ')
  })

  test('system and program folders are read-only; its /tmp is its own', () => {
    expect(report.write[join(REPO, 'sandbox-write-probe')]).toStartWith('refused')
    expect(report.write['/usr/sandbox-write-probe']).toStartWith('refused')
    expect(report.write['/tmp/probe']).toStartWith('ok')
    // Root without capabilities could still write kernel settings (kernel.core_pattern runs a program on the host).
    expect(report.write['/proc/sys/kernel/hostname']).toBe('refused: EROFS')
    expect(existsSync('/tmp/probe')).toBe(false)
  })

  test('its environment is its declared variables, its vault token and the basics, nothing of the platform’s', () => {
    const names = Object.keys(report.env).sort()
    expect(report.env.GIVEN).toBe('declared')
    expect(report.env.SWITCHBOARD_VAULT_TOKEN).toBeString()
    const allowed = new Set(['GIVEN', 'SWITCHBOARD_VAULT_SOCKET', 'SWITCHBOARD_VAULT_TOKEN', 'PATH', 'HOME', 'PWD', 'LOGNAME', 'USER', 'SHELL', 'TERM'])
    expect(names.filter((name) => !allowed.has(name))).toEqual([])
    expect(JSON.stringify(report.env)).not.toContain('internal-secret-for-tests')
    expect(report.env.HOME).toBe('/tmp')
  })
})

// A catalogue program reaching out: to the network it was not given, and past the end of its session.
describe.skipIf(!HAS_BWRAP)('a sandboxed program cannot reach the network or outlive its server', () => {
  let p: McpTestPlatform
  // A server on the host's loopback: what a program without network must not reach (the platform's own ports are
  // on the same loopback).
  const host = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: () => new Response('host reached') })
  const hostUrl = `http://127.0.0.1:${host.port}/`
  const marker = `sandbox-linger-${crypto.randomUUID()}`
  const lingering = () => Bun.spawnSync(['pgrep', '-f', marker]).stdout.toString().trim().split('\n').filter(Boolean)

  beforeAll(async () => {
    p = await startMcpPlatform({
      servers: [
        { name: 'offline', transport: 'stdio', program: { ...INSPECT_PROGRAM, name: 'inspect-offline' } },
        { name: 'online', transport: 'stdio', program: { ...INSPECT_PROGRAM, name: 'inspect-online', network: true } },
      ],
      rules: [{ server: '*', tool: '*', effect: 'allow' }],
    })
  })
  afterAll(async () => {
    await p.close()
    host.stop(true)
    for (const pid of lingering()) process.kill(Number(pid), 'SIGKILL')
  })

  async function probe(server: string, args: Record<string, unknown>) {
    const client = await connectMcp(p.base, p.root, server)
    try {
      const result = await client.callTool({ name: 'inspect', arguments: { read: [], list: [], write: [], ...args } })
      return JSON.parse((result.content as Array<{ text: string }>)[0]!.text)
    } finally {
      await client.close()
    }
  }

  test('without network: true the host’s loopback and the platform’s API are out of reach; with it, they are reached', async () => {
    const offline = await probe('offline', { fetch: [hostUrl, `${p.base}/api/openapi.json`] })
    expect(offline.fetch[hostUrl]).toStartWith('refused')
    expect(offline.fetch[`${p.base}/api/openapi.json`]).toStartWith('refused')
    // The same probe given the network reaches the host, so the refusal above is the sandbox's doing.
    const online = await probe('online', { fetch: [hostUrl] })
    expect(online.fetch[hostUrl]).toBe('ok: 200 host reached')
  })

  test('a process it starts in a session of its own ends with the server', async () => {
    await probe('offline', { linger: marker })
    expect(lingering().length).toBeGreaterThan(0)
    await p.services.upstreams.closeAll()
    await until(() => lingering().length === 0, { what: 'the lingering process gone with its server' })
  })
})
