import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { chatTurn } from '../helpers/chat.ts'
import { NOTES_PLUGIN } from '../helpers/mcp.ts'
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts'
import { systemClock } from '../../src/clock.ts'
import { createPostgresDatabase, openTestStore, TEST_DATABASE_URL } from '../helpers/database.ts'
import { CLUSTER_NEEDS_POSTGRES } from '../helpers/cluster.ts'
import { until } from '../helpers/until.ts'
import { expectProblem } from '../helpers/problem.ts'
import { parsePrometheus, seriesKey } from '../helpers/prometheus.ts'

const METRICS_TOKEN = 'metrics-token-for-the-tests-0123456789'

describe('probes', () => {
  let p: TestPlatform
  beforeAll(async () => {
    p = await startTestPlatform()
  })
  afterAll(() => p.close())

  test('/healthz answers that the process is alive, to anyone', async () => {
    const reply = await p.call('GET', '/healthz', { as: null })
    expect(reply.status).toBe(200)
    expect(reply.body).toEqual({ status: 'ok' })
  })

  test('/readyz says the store answers, every migration is applied, the event bus listens and the process is not draining', async () => {
    const reply = await p.call('GET', '/readyz', { as: null })
    expect(reply.status).toBe(200)
    expect(reply.body).toEqual({ status: 'ready', checks: { store: true, migrations: true, events: true, serving: true } })
  })

  test('/readyz is 503 once the store is gone', async () => {
    const doomed = await startTestPlatform()
    try {
      await doomed.store.close()
      const reply = await doomed.call('GET', '/readyz', { as: null })
      expect(reply.status).toBe(503)
      expect(reply.body).toMatchObject({ status: 'not ready', checks: { store: false, migrations: false } })
    } finally {
      await doomed.close().catch(() => {})
    }
  })

  test('without SWITCHBOARD_METRICS_TOKEN there is no /metrics: 404, whoever asks', async () => {
    expectProblem(await p.call('GET', '/metrics', { as: null }), 404, 'not_found')
    expectProblem(await p.call('GET', '/metrics'), 404, 'not_found')
  })
})

describe('/metrics', () => {
  let p: TestPlatform
  beforeAll(async () => {
    p = await startTestPlatform({ ...NOTES_PLUGIN, SWITCHBOARD_METRICS_TOKEN: METRICS_TOKEN })
    // Everyone may use the notes plugin's tools.
    expect((await p.call('POST', '/api/v1/McpPermission', { json: { server: 'notes', tool: '*', effect: 'allow' } })).status).toBe(201)
  })
  afterAll(() => p.close())

  const scrape = async () => {
    const reply = await p.call('GET', '/metrics', { as: null, headers: { authorization: `Bearer ${METRICS_TOKEN}` } })
    expect(reply.status).toBe(200)
    expect(reply.headers.get('content-type')).toStartWith('text/plain; version=0.0.4')
    return parsePrometheus(String(reply.body))
  }

  test('answers only the metrics token: a missing, wrong or platform token is 401', async () => {
    for (const authorization of [undefined, 'Bearer wrong', `Bearer ${p.root.token}`]) {
      const reply = await p.call('GET', '/metrics', { as: null, headers: authorization ? { authorization } : {} })
      expectProblem(reply, 401, 'unauthorized')
    }
  })

  test('a turn with a tool call and a refused request move the counters by exactly what happened', async () => {
    const agent = (await p.call('POST', '/api/v1/AgentConfigRecord', { json: { name: 'counted', runner: 'echo', model: 'echo-1', plugins: { enabled: ['notes'] } } })).body
    const before = await scrape()
    const events = await chatTurn(p, { agent_id: agent.id, text: '/tool notes__whoami' })
    expect(events.at(-1)).toMatchObject({ type: 'message' })
    expectProblem(await p.call('GET', '/api/v1/AgentConfigRecord', { as: null }), 401, 'unauthorized')
    const after = await scrape()
    const moved = (key: string) => (after.get(key) ?? 0) - (before.get(key) ?? 0)

    expect(moved(seriesKey("switchboard_chat_turns_total", { agent: agent.id, runner: 'echo', model: agent.model, outcome: 'complete' }))).toBe(1)
    expect(moved(seriesKey('switchboard_chat_turn_duration_seconds_count', { runner: 'echo', model: agent.model, outcome: 'complete' }))).toBe(1)
    expect(moved(seriesKey('switchboard_chat_turn_first_token_seconds_count', { runner: 'echo', model: agent.model }))).toBe(1)
    expect(moved(seriesKey('switchboard_mcp_tool_calls_total', { server: 'notes', tool: 'whoami', outcome: 'ok' }))).toBe(1)
    expect(moved(seriesKey('switchboard_http_requests_total', { route: '/api/chat', method: 'POST', status: '200' }))).toBe(1)
    expect(moved(seriesKey('switchboard_http_requests_total', { route: '/api/v1/AgentConfigRecord', method: 'GET', status: '401' }))).toBe(1)
    // The first scrape is counted too, under its route: nothing else moved the request counters.
    const requests = [...after.keys()].filter((key) => key.startsWith('switchboard_http_requests_total{'))
    expect(requests.reduce((sum, key) => sum + moved(key), 0)).toBe(3)
    // Process figures come with it.
    expect(after.get('switchboard_process_resident_memory_bytes')).toBeGreaterThan(0)
  })

  test('labels carry route templates, never the paths as sent', async () => {
    const id = crypto.randomUUID()
    expectProblem(await p.call('GET', `/api/v1/AgentConfigRecord/${id}`), 404, 'not_found')
    expectProblem(await p.call('GET', `/no/such/${id}`), 404, 'not_found')
    const text = await p.call('GET', '/metrics', { as: null, headers: { authorization: `Bearer ${METRICS_TOKEN}` } })
    expect(String(text.body)).not.toContain(id)
    const after = parsePrometheus(String(text.body))
    expect(after.get(seriesKey('switchboard_http_requests_total', { route: '/api/v1/AgentConfigRecord/:id', method: 'GET', status: '404' }))).toBeGreaterThanOrEqual(1)
    expect(after.get(seriesKey('switchboard_http_requests_total', { route: 'unmatched', method: 'GET', status: '404' }))).toBeGreaterThanOrEqual(1)
  })

  test('the store’s pool: its size, and a connection held by an open transaction, counted at the scrape', async () => {
    const read = async () => parsePrometheus(String((await p.call('GET', '/metrics', { as: null, headers: { authorization: `Bearer ${METRICS_TOKEN}` } })).body))
    const idle = await read()
    expect(idle.get(seriesKey('switchboard_db_connections', { state: 'size' }))).toBe(p.store.pool.size)
    let release!: () => void
    const held = new Promise<void>((resolve) => (release = resolve))
    let opened!: () => void
    const open = new Promise<void>((resolve) => (opened = resolve))
    const transaction = p.store.db.transaction().execute(async () => {
      opened()
      await held
    })
    await open
    // On the embedded store the scrape's own reads wait for the one connection: the count is read from the pool.
    // The platform's own background work (a usage record, a lease given back) may hold a connection for a moment
    // too, so the transaction's is judged once that is done: held, it is the one connection counted; released, none.
    await until(() => p.store.pool.reserved === 1, { what: 'the transaction to be the one connection counted' })
    release()
    await transaction
    await until(() => p.store.pool.reserved === 0, { what: 'no connection counted once the transaction ended' })
    expect((await read()).get(seriesKey('switchboard_db_connections', { state: 'waiting' }))).toBe(0)
  })
})

test('a request a rate limit refuses is counted under its limit: the API’s, and sign-in’s', async () => {
  const p = await startTestPlatform({
    SWITCHBOARD_METRICS_TOKEN: METRICS_TOKEN,
    SWITCHBOARD_API_RATE_BURST: '2',
    SWITCHBOARD_API_RATE_PER_SECOND: '0.001',
    SWITCHBOARD_LOGIN_RATE_BURST: '1',
    SWITCHBOARD_LOGIN_RATE_PER_MINUTE: '0.001',
  })
  try {
    const statuses = []
    for (let i = 0; i < 3; i++) statuses.push((await p.call('GET', '/api/v1/AgentConfigRecord')).status)
    expect(statuses).toEqual([200, 200, 429])
    const signIn = () => p.call('POST', '/auth/login', { as: null, json: { username: 'admin', password: 'not-the-password-1' }, headers: { accept: 'application/json' } })
    expect([(await signIn()).status, (await signIn()).status]).toEqual([401, 429])
    const metrics = parsePrometheus(String((await p.call('GET', '/metrics', { as: null, headers: { authorization: `Bearer ${METRICS_TOKEN}` } })).body))
    expect(metrics.get(seriesKey('switchboard_throttle_refusals_total', { limit: 'api' }))).toBe(1)
    expect(metrics.get(seriesKey('switchboard_throttle_refusals_total', { limit: 'login' }))).toBe(1)
  } finally {
    await p.close()
  }
})

const onPostgres = TEST_DATABASE_URL ? test : test.skip
onPostgres(`with two processes on one database, each measures how late the other's events reach it${TEST_DATABASE_URL ? '' : ` (${CLUSTER_NEEDS_POSTGRES})`}`, async () => {
  const database = await createPostgresDatabase()
  const env = { SWITCHBOARD_METRICS_TOKEN: METRICS_TOKEN, SWITCHBOARD_MASTER_KEY: 'c'.repeat(64) }
  const [one, two] = [await startTestPlatform(env, systemClock, openTestStore(database)), await startTestPlatform(env, systemClock, openTestStore(database))]
  try {
    const lagCount = async (p: TestPlatform) =>
      parsePrometheus(String((await p.call('GET', '/metrics', { as: null, headers: { authorization: `Bearer ${METRICS_TOKEN}` } })).body)).get('switchboard_event_bus_lag_seconds_count') ?? 0
    const before = await lagCount(two)
    // A write on one process is an event every other process hears.
    expect((await one.call('POST', '/api/v1/AgentConfigRecord', { json: { name: 'heard-elsewhere' } })).status).toBe(201)
    await until(async () => (await lagCount(two)) > before, { what: 'the second process to hear the first one’s event' })
    const text = String((await two.call('GET', '/metrics', { as: null, headers: { authorization: `Bearer ${METRICS_TOKEN}` } })).body)
    expect(parsePrometheus(text).get('switchboard_background_tasks_running')).toBe(0)
  } finally {
    await one.close()
    await two.close()
    await database.drop()
  }
}, 30_000)
