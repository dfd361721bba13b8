/**
 * The gateway bench/mcp.ts measures, in a process of its own so that the benchmark's clients do not share its event
 * loop (mcp-proxy has its own process too). A platform as the test suites start it (PGlite, or PostgreSQL when
 * TEST_DATABASE_URL is set) with server-everything as a stdio server everyone may use and the MCP throttle out of
 * the way (every session is the same user). Prints one JSON line (port, token, database), then serves until
 * SIGTERM, which stops the upstreams and the platform.
 */
import { join } from 'node:path'
import { startTestPlatform } from '../tests/helpers/platform.ts'
import { systemClock } from '../src/clock.ts'
import { benchLogger } from './logger.ts'

const EVERYTHING = join(import.meta.dir, '..', 'node_modules', '.bin', 'mcp-server-everything')

const p = await startTestPlatform({ SWITCHBOARD_MCP_RATE_BURST: '1000000000', SWITCHBOARD_MCP_RATE_PER_SECOND: '1000000000' }, systemClock, undefined, benchLogger())
const post = async (path: string, json: Record<string, unknown>) => {
  const reply = await p.call('POST', path, { json })
  if (reply.status !== 201) throw new Error(`POST ${path} failed: ${reply.status} ${JSON.stringify(reply.body)}`)
  return reply.body as { id: string }
}
const program = await post('/api/v1/McpCommand', { name: 'everything', command: EVERYTHING })
await post('/api/v1/McpServer', { name: 'everything', transport: 'stdio', command_id: program.id })
await post('/api/v1/McpPermission', { server: 'everything', tool: '*', effect: 'allow' })

// As src/main.ts: Bun's longest idle timeout, so the clients' idle streams are not cut mid-run.
const http = Bun.serve({ hostname: '127.0.0.1', port: 0, idleTimeout: 255, fetch: (request, server) => p.api.fetch(request, server) })
process.once('SIGTERM', async () => {
  await p.services.upstreams.closeAll()
  http.stop(true)
  await p.close()
  process.exit(0)
})
console.log(JSON.stringify({ port: http.port, token: p.root.token, database: p.store.kind }))
