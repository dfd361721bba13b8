import { join } from 'node:path'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { expect } from 'bun:test'
import type { Clock } from '../../src/clock.ts'
import type { Store } from '../../src/db/connect.ts'
import { startTestPlatform, type Principal, type TestPlatform } from './platform.ts'

/** Real MCP servers: server-everything from npm, and a small fixture that counts its starts. */
export const EVERYTHING = join(import.meta.dir, '..', '..', 'node_modules', '.bin', 'mcp-server-everything')
export const FLAKY = join(import.meta.dir, '..', 'fixtures', 'mcp', 'flaky-server.ts')
/** server-everything as a program of the platform's catalogue (a McpCommand body). */
export const EVERYTHING_PROGRAM = { name: 'everything', command: EVERYTHING }
/** server-everything run over stdio: a McpServer body whose `program` the helper puts into the catalogue first. */
export const EVERYTHING_STDIO = { name: 'everything', transport: 'stdio', program: EVERYTHING_PROGRAM }

/** Puts a program into the catalogue (as the superadmin) and answers its id. */
export async function addProgram(p: TestPlatform, program: Record<string, unknown>): Promise<string> {
  const reply = await p.call('POST', '/api/v1/McpCommand', { json: program })
  if (reply.status !== 201) throw new Error(`adding the program ${String(program.name)}: ${reply.status} ${JSON.stringify(reply.body)}`)
  return reply.body.id
}
/** Loads the fixture mcp plugin `notes` (tools whoami and add-note). */
export const NOTES_PLUGIN = { SWITCHBOARD_PLUGIN_PATHS: join(import.meta.dir, '..', 'fixtures', 'plugins', 'tools') }

/**
 * A loopback HTTP server for the platform's api app, started before the platform so that its address can be the
 * platform's base URL (which stdio subprocesses call back, for the vault). `attach` hands it the platform.
 */
export function loopbackApi() {
  let platform: TestPlatform | undefined
  const http = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    idleTimeout: 60,
    fetch: (request, server) => (platform ? platform.api.fetch(request, server) : new Response('starting', { status: 503 })),
  })
  return {
    base: `http://127.0.0.1:${http.port}`,
    attach(p: TestPlatform) {
      platform = p
      p.services.self.listening(http.port!)
    },
    stop: () => http.stop(true),
  }
}

/** The MCP SDK's client, as a host, connected to /mcp/{server} as `as`. */
export async function connectMcp(base: string, as: Principal, server: string): Promise<Client> {
  const client = new Client({ name: 'test-host', version: '1.0.0' })
  await client.connect(new StreamableHTTPClientTransport(new URL(`${base}/mcp/${server}`), { requestInit: { headers: { authorization: `Bearer ${as.token}` } } }))
  return client
}

/** What listing a server's tools as `as` answers when it fails ('listed' when it does not), the session closed after. */
export async function listToolsFailure(base: string, as: Principal, server: string): Promise<string> {
  const client = await connectMcp(base, as, server)
  try {
    return await client.listTools().then(
      () => 'listed',
      (error: Error) => error.message,
    )
  } finally {
    await client.close()
  }
}

/** This process's children running `pattern`: other programs on the machine may run the same servers. */
export function childProcesses(pattern: string): number[] {
  return Bun.spawnSync(['pgrep', '-P', String(process.pid), '-f', pattern]).stdout.toString().trim().split('\n').filter(Boolean).map(Number)
}

export { freePort } from './ports.ts'

export interface McpTestPlatform extends TestPlatform {
  /** Where the api app answers over HTTP (MCP hosts and subprocesses call it here). */
  base: string
}

/**
 * A platform served on loopback with MCP servers and permission rules made through the api; close() also ends the
 * upstreams and the HTTP server.
 */
export async function startMcpPlatform(setup: {
  env?: Record<string, string>
  clock?: Clock
  servers?: Array<Record<string, unknown>>
  rules?: Array<Record<string, unknown>>
  /** A store of its own by default; a shared one makes it one of several processes on a database. */
  store?: Store
}): Promise<McpTestPlatform> {
  const http = loopbackApi()
  // The suites' remote servers listen on loopback, which the outbound-address policy refuses unless allowed.
  const p = await startTestPlatform({ SWITCHBOARD_BASE_URL: http.base, SWITCHBOARD_OUTBOUND_ALLOW: '127.0.0.0/8,::1/128', ...setup.env }, setup.clock, setup.store)
  http.attach(p)
  for (const { program, ...server } of setup.servers ?? []) {
    const json = program ? { ...server, command_id: await addProgram(p, program as Record<string, unknown>) } : server
    const reply = await p.call('POST', '/api/v1/McpServer', { json })
    expect(reply.status, JSON.stringify(reply.body)).toBe(201)
  }
  for (const json of setup.rules ?? []) expect((await p.call('POST', '/api/v1/McpPermission', { json })).status).toBe(201)
  return {
    ...p,
    base: http.base,
    async close() {
      await p.services.upstreams.closeAll()
      http.stop()
      await p.close()
    },
  }
}
