/**
 * A server bench/crud.ts or bench/auth.ts measures, run in a process of its own so that neither the bench nor wrk
 * shares its event loop. Prints its port on stdout, then serves until killed.
 *
 *   DATABASE_URL=postgres://… BENCH_POOL=10 bun bench/crud-server.ts switchboard
 *   DATABASE_URL=postgres://… BENCH_POOL=10 bun bench/crud-server.ts open
 *   DATABASE_URL=postgres://… BENCH_POOL=10 bun bench/crud-server.ts baseline <company-id> <token-sha256>
 *   DATABASE_URL=postgres://… bun bench/crud-server.ts chat-floor <agent-id> <provider-url>
 *
 * `switchboard` is the api app built as src/main.ts builds it, configured by the SWITCHBOARD_* environment.
 * `open` is the same platform with the same CRUD routes and error handler, but none of the api app's middleware
 * (request id, body limit, origin guard, credential resolution, throttle): every request acts as the seeded
 * superadmin, owner of the seeded company. Its handlers still run the (cached) per-verb ACL check and every query
 * still goes through the tenant-scoped builder.
 * `baseline` answers the two benchmarked requests with Bun.serve and postgres.js alone: it checks the bearer
 * token, runs the SQL the api runs, and returns the same JSON.
 * `chat-floor` is the least a chat turn can be (bench/chat.ts): see chatFloor.
 */
import { OpenAPIHono } from '@hono/zod-openapi'
import postgres from 'postgres'
import type { ApiEnv } from '../src/http/env.ts'
import { mountCrud } from '../src/api/crud/index.ts'
import { apiDefaultHook, renderProblems } from '../src/api/hooks.ts'
import type { Actor } from '../src/auth/actor.ts'
import { loadConfig } from '../src/config.ts'
import { openPostgres } from '../src/db/connect.ts'
import { createPlatform } from '../src/platform.ts'
import { benchLogger } from './logger.ts'

// As src/main.ts: Bun's longest idle timeout, so only wrk decides when a connection closes.
const IDLE_TIMEOUT_SECONDS = 255

async function switchboard(pool: number) {
  const config = loadConfig()
  if (!config.databaseUrl) throw new Error('DATABASE_URL is not set')
  const { api } = await createPlatform(config, openPostgres(config.databaseUrl, pool), benchLogger())
  return Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: api.fetch, idleTimeout: IDLE_TIMEOUT_SECONDS })
}

/** Authentication off: the CRUD routes on a bare app, acting as a fixed actor. */
async function open(pool: number) {
  const config = loadConfig()
  if (!config.databaseUrl) throw new Error('DATABASE_URL is not set')
  const { services } = await createPlatform(config, openPostgres(config.databaseUrl, pool), benchLogger())
  const superadmin = await services.db
    .selectFrom('users as u')
    .innerJoin('company_users as m', 'm.user_id', 'u.id')
    .select(['u.id', 'm.company_id'])
    .where('u.is_superadmin', '=', true)
    .orderBy('m.created_at')
    .limit(1)
    .executeTakeFirstOrThrow()
  const actor: Actor = { userId: superadmin.id, companyId: superadmin.company_id, role: 'owner', isSuperadmin: true }
  const app = new OpenAPIHono<ApiEnv>({ defaultHook: apiDefaultHook })
  app.use(async (c, next) => {
    c.set('services', services)
    c.set('actor', actor)
    await next()
  })
  mountCrud(app, services.models.values())
  app.onError(renderProblems(services))
  return Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: app.fetch, idleTimeout: IDLE_TIMEOUT_SECONDS })
}

const SELECT = `SELECT id, company_id, name, description, enabled, personality, runner, model, timeout_seconds, channels,
  voice, email, mcp_permissions, plugins, context_options, starter_prompts, avatar, created_at, updated_at, version FROM agent_configs`
const BY_ID = `${SELECT} WHERE company_id = $1 AND id = $2`
const LIST = `${SELECT} WHERE company_id = $1 AND enabled = $2 ORDER BY id ASC LIMIT $3 OFFSET $4`
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

function withoutVersion({ version: _, ...record }: postgres.Row): postgres.Row {
  return record
}

/** A whole number from 0 to max, or `fallback` when absent; undefined when the text is not one. */
function bound(text: string | null, fallback: number, max: number): number | undefined {
  if (text === null) return fallback
  return /^\d{1,10}$/.test(text) && Number(text) <= max ? Number(text) : undefined
}

/**
 * No framework: the runtime's router, one prepared statement per request, JSON.stringify for the body. Like the
 * api it stores only the token's hash, so it hashes what it is sent.
 */
function baseline(pool: number, companyId: string, tokenHash: string) {
  const url = process.env.DATABASE_URL
  if (!url) throw new Error('DATABASE_URL is not set')
  const sql = postgres(url, { max: pool })
  const problem = (status: number, detail: string) => Response.json({ detail }, { status })
  const authorized = (req: Request) =>
    new Bun.CryptoHasher('sha256').update(req.headers.get('authorization')?.replace(/^Bearer /, '') ?? '').digest('hex') === tokenHash

  return Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    idleTimeout: IDLE_TIMEOUT_SECONDS,
    routes: {
      '/api/v1/AgentConfigRecord': {
        async GET(req) {
          if (!authorized(req)) return problem(401, 'Send a bearer token.')
          const params = new URL(req.url).searchParams
          const enabled = params.get('enabled')
          const limit = bound(params.get('limit'), 50, 500)
          const offset = bound(params.get('offset'), 0, 1_000_000_000)
          if (enabled !== 'eq.true' && enabled !== 'eq.false') return problem(400, 'enabled must be eq.true or eq.false')
          if (limit === undefined || limit < 1 || offset === undefined) return problem(400, 'limit or offset is not valid')
          const rows = await sql.unsafe(LIST, [companyId, enabled === 'eq.true', limit, offset], { prepare: true })
          return Response.json({ data: rows.map(withoutVersion), limit, offset })
        },
      },
      '/api/v1/AgentConfigRecord/:id': {
        async GET(req) {
          if (!authorized(req)) return problem(401, 'Send a bearer token.')
          const id = req.params.id
          if (!UUID.test(id)) return problem(404, `No AgentConfigRecord with id ${id}.`)
          const [row] = await sql.unsafe(BY_ID, [companyId, id.toLowerCase()], { prepare: true })
          if (!row) return problem(404, `No AgentConfigRecord with id ${id}.`)
          return Response.json(withoutVersion(row), { headers: { ETag: `"${row.version}"` } })
        },
      },
    },
    fetch: () => problem(404, 'Not found.'),
  })
}

/**
 * The least a chat turn can add over its provider on this machine, whatever serves it: per POST /api/chat, one
 * PostgreSQL round trip for what a turn must read before it asks the model (the agent and the conversation so far,
 * pipelined on one connection), the streamed request through the OpenAI SDK, and each piece out as an NDJSON line as
 * it arrives. No sign-in, no lock, nothing stored, no feed.
 */
// The history a turn sends the model, as src/chat/messages.ts reads it.
const HISTORY = `SELECT role, text FROM webchat_messages WHERE conversation_id = $1 AND status = 'complete' AND role <> 'system'
  AND superseded_at IS NULL ORDER BY id DESC LIMIT 50`

async function chatFloor(agentId: string, providerUrl: string) {
  const url = process.env.DATABASE_URL
  if (!url) throw new Error('DATABASE_URL is not set')
  const sql = postgres(url, { max: 1 })
  const { default: OpenAI } = await import('openai')
  const openai = new OpenAI({ baseURL: providerUrl, apiKey: 'bench', maxRetries: 0 })
  const encoder = new TextEncoder()
  const line = (event: Record<string, unknown>) => encoder.encode(`${JSON.stringify(event)}\n`)
  return Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    idleTimeout: IDLE_TIMEOUT_SECONDS,
    routes: {
      '/api/chat': {
        async POST(req) {
          const { text, conversation_id: conversationId = crypto.randomUUID() } = (await req.json()) as { text: string; conversation_id?: string }
          const [[agent], earlier] = await Promise.all([
            sql.unsafe('SELECT personality FROM agent_configs WHERE id = $1', [agentId], { prepare: true }),
            sql.unsafe(HISTORY, [conversationId], { prepare: true }),
          ])
          const messages = [
            ...(agent?.personality ? [{ role: 'system' as const, content: String(agent.personality) }] : []),
            ...earlier.reverse().map((m) => ({ role: m.role === 'agent' ? ('assistant' as const) : ('user' as const), content: String(m.text) })),
            { role: 'user' as const, content: text },
          ]
          const chunks = await openai.chat.completions.create({ model: 'bench-model', stream: true, messages })
          return new Response(
            new ReadableStream<Uint8Array>({
              async start(controller) {
                controller.enqueue(line({ type: 'conversation', conversation_id: conversationId }))
                let answer = ''
                for await (const chunk of chunks) {
                  const piece = chunk.choices[0]?.delta?.content
                  if (!piece) continue
                  answer += piece
                  controller.enqueue(line({ type: 'stream', text: piece }))
                }
                controller.enqueue(line({ type: 'stream_end' }))
                controller.enqueue(line({ type: 'message', text: answer }))
                controller.close()
              },
            }),
            { headers: { 'content-type': 'application/x-ndjson' } },
          )
        },
      },
    },
    fetch: () => Response.json({ detail: 'Not found.' }, { status: 404 }),
  })
}

const [mode, ...args] = process.argv.slice(2)
const pool = Number(process.env.BENCH_POOL ?? 10)
let server: Bun.Server<undefined>
if (mode === 'switchboard') server = await switchboard(pool)
else if (mode === 'open') server = await open(pool)
else if (mode === 'baseline' && args.length === 2) server = baseline(pool, args[0]!, args[1]!)
else if (mode === 'chat-floor' && args.length === 2) server = await chatFloor(args[0]!, args[1]!)
else {
  console.error('usage: bun bench/crud-server.ts switchboard | open | baseline <company-id> <token-sha256> | chat-floor <agent-id> <provider-url>')
  process.exit(2)
}
// Ends cleanly when the benchmark stops it, so a CPU profile asked for (BENCH_CPU_PROF_DIR) is written.
process.once('SIGTERM', () => process.exit(0))
console.log(server.port)
