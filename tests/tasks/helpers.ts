import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { TOKEN_PREFIX } from '../../src/auth/authenticator.ts'
import { hashSecret, newSecret } from '../../src/auth/secrets.ts'
import type { Clock } from '../../src/clock.ts'
import { loadConfig } from '../../src/config.ts'
import type { Store } from '../../src/db/connect.ts'
import type { Db } from '../../src/db/schema.ts'
import { silentLogger } from '../../src/logger.ts'
import { createPlatform, type Platform } from '../../src/platform.ts'
import { ADMIN_PASSWORD } from '../helpers/platform.ts'

/** The fixture plugin `slow`: a tool `wait` the test finishes (see its index.ts), and a tool `fail`. */
export const SLOW_PLUGINS = join(import.meta.dir, '..', 'fixtures', 'plugins', 'slow-tools')
export { finish, started, stopped } from '../fixtures/plugins/slow-tools/slow/index.ts'

export type Event = Record<string, any> & { type: string }

/** Something that answers API requests with a bearer token: a whole platform, or its api app alone. */
export interface ApiHost {
  api: Platform['api']
}

export async function request(host: ApiHost, token: string | null, method: string, path: string, json?: unknown) {
  const headers: Record<string, string> = token ? { authorization: `Bearer ${token}` } : {}
  if (json !== undefined) headers['content-type'] = 'application/json'
  const response = await host.api.request(path, { method, headers, body: json === undefined ? undefined : JSON.stringify(json) }, { requestIP: () => ({ address: '192.0.2.1' }) })
  const text = await response.text()
  return { status: response.status, headers: response.headers, body: text && /json/.test(response.headers.get('content-type') ?? '') ? JSON.parse(text) : text }
}

/** One whole chat turn over POST /api/chat: its NDJSON events. */
export async function turn(host: ApiHost, token: string, json: Record<string, unknown>): Promise<Event[]> {
  const response = await host.api.request('/api/chat', {
    method: 'POST',
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    body: JSON.stringify(json),
  })
  if (response.status !== 200) throw new Error(`POST /api/chat answered ${response.status}: ${await response.text()}`)
  return (await response.text())
    .split('\n')
    .filter(Boolean)
    .map((line) => JSON.parse(line))
}

/** What a turn's tool call answered, and its conversation. */
export async function toolTurn(host: ApiHost, token: string, json: Record<string, unknown>): Promise<{ result: string; conversation: string; events: Event[] }> {
  const events = await turn(host, token, json)
  const result = events.find((e) => e.type === 'tool_result')?.result
  if (typeof result !== 'string') throw new Error(`the turn called no tool: ${JSON.stringify(events)}`)
  return { result, conversation: events[0]!.conversation_id, events }
}

/** The task id async_run_tool answered with. */
export function taskIdIn(result: string): string {
  const id = /background task ([0-9a-f-]{36})/i.exec(result)?.[1]
  if (!id) throw new Error(`no task id in: ${result}`)
  return id
}

/** A conversation's stored messages, oldest first. */
export function messagesOf(db: Db, conversationId: string) {
  return db.selectFrom('webchat_messages').select(['role', 'text', 'agent_id', 'status']).where('conversation_id', '=', conversationId).orderBy('id').execute()
}

export async function tokenFor(db: Db, userId: string): Promise<string> {
  const token = newSecret(TOKEN_PREFIX)
  await db.insertInto('api_tokens').values({ id: Bun.randomUUIDv7(), user_id: userId, name: 'tests', token_hash: hashSecret(token), prefix: token.slice(0, 10), expires_at: null, last_used_at: null }).execute()
  return token
}

/** A platform on a store someone else owns (so closing it leaves the store open): one process of several, or one run of a restarted server. */
export interface Booted extends Platform {
  /** Closes the platform (not the store) and its data directory. */
  stop(): Promise<void>
}

export async function bootOn(store: Store, clock?: Clock, env: Record<string, string> = {}): Promise<Booted> {
  const dataDir = mkdtempSync(join(tmpdir(), 'switchboard-tasks-'))
  const config = loadConfig({
    SWITCHBOARD_DATA_DIR: dataDir,
    SWITCHBOARD_ADMIN_PASSWORD: ADMIN_PASSWORD,
    // Every run and every process must open the same vault.
    SWITCHBOARD_MASTER_KEY: 'b'.repeat(64),
    SWITCHBOARD_MCP_SANDBOX: 'none',
    SWITCHBOARD_PLUGIN_PATHS: SLOW_PLUGINS,
    SWITCHBOARD_API_RATE_BURST: '100000',
    SWITCHBOARD_API_RATE_PER_SECOND: '100000',
    ...env,
  })
  const platform = await createPlatform(config, store, silentLogger, { clock })
  return {
    ...platform,
    async stop() {
      try {
        await platform.close()
      } finally {
        rmSync(dataDir, { recursive: true, force: true })
      }
    },
  }
}

/** The seeded superadmin of a store, with a fresh token, and an agent of theirs that may run background tasks. */
export async function rootWithAgent(store: Store, host: ApiHost): Promise<{ token: string; userId: string; companyId: string; agentId: string }> {
  const admin = await store.db
    .selectFrom('users')
    .innerJoin('company_users', 'company_users.user_id', 'users.id')
    .select(['users.id', 'company_users.company_id'])
    .where('users.is_superadmin', '=', true)
    .executeTakeFirstOrThrow()
  const token = await tokenFor(store.db, admin.id)
  const rule = await request(host, token, 'POST', '/api/v1/McpPermission', { server: '*', tool: '*', effect: 'allow' })
  if (rule.status !== 201) throw new Error(`allowing tools: ${rule.status} ${JSON.stringify(rule.body)}`)
  const agent = await request(host, token, 'POST', '/api/v1/AgentConfigRecord', { name: `batch-${crypto.randomUUID().slice(0, 8)}`, runner: 'echo', plugins: { enabled: ['mcp-tasks', 'slow'] } })
  if (agent.status !== 201) throw new Error(`making the agent: ${agent.status} ${JSON.stringify(agent.body)}`)
  return { token, userId: admin.id, companyId: admin.company_id, agentId: agent.body.id }
}
