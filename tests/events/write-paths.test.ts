import { afterAll, beforeAll, expect, test } from 'bun:test'
import { join } from 'node:path'
import { SESSION_COOKIE } from '../../src/auth/authenticator.ts'
import { createSession, sessionPolicy } from '../../src/auth/sessions.ts'
import { loadConfig } from '../../src/config.ts'
import type { Store } from '../../src/db/connect.ts'
import type { CacheName } from '../../src/events/bus.ts'
import { createPostgresDatabase, freshStore, openTestStore, TEST_DATABASE_URL } from '../helpers/database.ts'
import { until } from '../helpers/until.ts'
import { bootOn, request, rootWithAgent, tokenFor, toolTurn, type Booted } from '../tasks/helpers.ts'

// One agent written through three doors (the REST API, the console's form, a plugin's tool) and one permission rule
// through two: each write is heard the same way by another process (on PostgreSQL; on the embedded store, by the
// same one), which starts or stops the agent as each write says and flushes the same caches.
const RECORDS_TOOL = join(import.meta.dir, '..', 'fixtures', 'plugins', 'records-tool')
const env = { SWITCHBOARD_PLUGIN_PATHS: RECORDS_TOOL }

let database: Awaited<ReturnType<typeof createPostgresDatabase>> | undefined
const stores: Store[] = []
let writer: Booted
let listener: Booted
let root: Awaited<ReturnType<typeof rootWithAgent>>
/** An agent whose turns may call the records tool. */
let toolAgent: string
/** What the listening process heard, in order. */
const heard: Array<{ agent?: string; caches?: CacheName[] }> = []

beforeAll(async () => {
  if (TEST_DATABASE_URL) {
    database = await createPostgresDatabase()
    stores.push(openTestStore(database), openTestStore(database))
  } else stores.push(await freshStore())
  writer = await bootOn(stores[0]!, undefined, env)
  listener = stores[1] ? await bootOn(stores[1], undefined, env) : writer
  root = await rootWithAgent(stores[0]!, writer)
  toolAgent = (await request(writer, root.token, 'POST', '/api/v1/AgentConfigRecord', { name: 'writer', runner: 'echo', plugins: { enabled: ['records'] } })).body.id
  listener.services.events.subscribe('agent.changed', ({ agent_id }) => void heard.push({ agent: agent_id }))
  listener.services.events.subscribe('cache.flush', ({ caches }) => void heard.push({ caches }))
})
afterAll(async () => {
  for (const platform of new Set([writer, listener])) await platform?.stop()
  for (const store of stores) await store.close()
  await database?.drop()
})

const api = (method: string, path: string, json?: unknown) => request(writer, root.token, method, path, json)
const runsThere = (agentId: string) => listener.services.agents.list().some((i) => i.agentId === agentId)

/**
 * What the listener heard of `write`: events of one process arrive in order, so a marker write made after it is
 * heard after all that `write` caused.
 */
async function heardOf(write: () => Promise<void>): Promise<typeof heard> {
  // Markers on both sides: what earlier writes caused is heard before the first, what `write` caused before the second.
  const from = (await marked()).end + 1
  await write()
  return heard.slice(from, (await marked()).start)
}

/** Writes a marker agent and waits until the listener hears it; answers where what it caused starts and ends in what was heard. */
async function marked(): Promise<{ start: number; end: number }> {
  const marker = (await api('POST', '/api/v1/AgentConfigRecord', { name: `marker-${crypto.randomUUID().slice(0, 8)}`, runner: 'echo' })).body.id
  await until(() => heard.some((h) => h.agent === marker), { what: 'a marker write to reach the other process' })
  const end = heard.findIndex((h) => h.agent === marker)
  // An agent's write drops every process's copy of the agents before the change is announced.
  expect(heard[end - 1]).toEqual({ caches: ['agents'] })
  return { start: end - 1, end }
}

test('an agent written through the API, the console and a plugin’s tool is followed the same way everywhere', async () => {
  const agent = (await api('POST', '/api/v1/AgentConfigRecord', { name: 'target', runner: 'echo' })).body.id
  await until(() => runsThere(agent), { what: 'the agent to start on the other process' })

  const session = await createSession(stores[0]!.db, root.userId, sessionPolicy(loadConfig({})), Date.now())
  const cookie = `${SESSION_COOKIE}=${session.token}`
  const doors: Record<string, () => Promise<void>> = {
    async api() {
      expect((await api('PATCH', `/api/v1/AgentConfigRecord/${agent}`, { description: 'by the API', enabled: false })).status).toBe(200)
    },
    async console() {
      const form = await writer.admin.request(`/agents/${agent}`, { headers: { cookie } })
      const version = /name="_version" value="(\d+)"/.exec(await form.text())![1]!
      const fields = { _version: version, name: 'target', runner: 'echo', timeout_seconds: '120', channels: '{}', description: 'by the console', enabled: 'on' }
      const saved = await writer.admin.request(`/agents/${agent}`, {
        method: 'POST',
        headers: { cookie, origin: new URL(writer.services.config.adminBaseUrl).origin, 'content-type': 'application/x-www-form-urlencoded' },
        body: new URLSearchParams(fields),
      })
      expect(saved.status).toBe(200)
    },
    async tool() {
      const { result } = await toolTurn(writer, root.token, {
        agent_id: toolAgent,
        text: `/tool records__patch ${JSON.stringify({ model: 'AgentConfigRecord', id: agent, patch: { description: 'by a tool', enabled: false } })}`,
      })
      expect(JSON.parse(result)).toMatchObject({ id: agent, description: 'by a tool' })
    },
  }
  // The API switches it off, the console on again, the tool off.
  for (const [door, write] of Object.entries(doors)) {
    const during = await heardOf(write)
    // The agents turns read dropped everywhere, then one change announced.
    expect(during, door).toEqual([{ caches: ['agents'] }, { agent }])
    expect(runsThere(agent), door).toBe(door === 'console')
    const stored = await request(listener, root.token, 'GET', `/api/v1/AgentConfigRecord/${agent}`)
    expect(stored.body.description, door).toBe(`by ${door === 'api' ? 'the API' : door === 'console' ? 'the console' : 'a tool'}`)
  }
})

test('a permission rule written through the API or a plugin’s tool flushes the same caches everywhere', async () => {
  const rule = (await api('POST', '/api/v1/McpPermission', { server: 'nowhere', tool: 'x', effect: 'deny' })).body.id
  const byApi = await heardOf(async () => {
    expect((await api('PATCH', `/api/v1/McpPermission/${rule}`, { tool: 'y' })).status).toBe(200)
  })
  const byTool = await heardOf(async () => {
    const { result } = await toolTurn(writer, root.token, { agent_id: toolAgent, text: `/tool records__patch ${JSON.stringify({ model: 'McpPermission', id: rule, patch: { tool: 'z' } })}` })
    expect(JSON.parse(result)).toMatchObject({ id: rule, tool: 'z' })
  })
  expect(byApi).toEqual([{ caches: ['identities', 'acl', 'mcp'] }])
  expect(byTool).toEqual(byApi)
})

test('a tool writes only what its person may: a member patching an agent is refused as the API refuses them', async () => {
  const member = await api('POST', '/api/v1/User', { username: `m-${crypto.randomUUID().slice(0, 6)}`, email: `m-${crypto.randomUUID().slice(0, 6)}@example.com`, password: 'member-password-1' })
  expect(member.status).toBe(201)
  // A user made by an admin joins the admin's company as a member.
  const token = await tokenFor(stores[0]!.db, member.body.id)
  const target = (await api('POST', '/api/v1/AgentConfigRecord', { name: 'guarded', runner: 'echo' })).body.id
  const byApi = await request(writer, token, 'PATCH', `/api/v1/AgentConfigRecord/${target}`, { description: 'mine now' })
  expect(byApi.status).toBe(403)
  const { result } = await toolTurn(writer, token, { agent_id: toolAgent, text: `/tool records__patch ${JSON.stringify({ model: 'AgentConfigRecord', id: target, patch: { description: 'mine now' } })}` })
  expect(result).toBe(`Error: ${byApi.body.detail}`)
  expect((await api('GET', `/api/v1/AgentConfigRecord/${target}`)).body.description).toBe('')
})
