import { expect, test } from 'bun:test'
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts'
import { expectProblem } from '../helpers/problem.ts'
import { startChatTurn } from '../helpers/chat.ts'
import { rowsOf } from '../helpers/typed-call.ts'
import { until } from '../helpers/until.ts'
import manifest from '../../package.json' with { type: 'json' }
import { systemClock } from '../../src/clock.ts'
import { createPostgresDatabase, openTestStore, TEST_DATABASE_URL } from '../helpers/database.ts'
import { CLUSTER_NEEDS_POSTGRES } from '../helpers/cluster.ts'

const secret = 'an-internal-secret-of-sufficient-length'

test('without INTERNAL_API_SECRET the internal endpoints are closed, saying why', async () => {
  const p = await startTestPlatform()
  try {
    const problem = expectProblem(await p.call('GET', '/api/internal/ping', { as: null }), 503, 'unavailable')
    expect(problem.detail).toContain('INTERNAL_API_SECRET is not set')
    // Not even a signed-in superadmin gets in.
    expectProblem(await p.call('GET', '/api/internal/ping'), 503, 'unavailable')
  } finally {
    await p.close()
  }
})

test('with the secret set, only the exact secret gets in, on every internal path', async () => {
  const p = await startTestPlatform({ INTERNAL_API_SECRET: secret })
  try {
    const ping = (authorization?: string) => p.call('GET', '/api/internal/ping', { as: null, headers: authorization ? { authorization } : {} })
    expect((await ping(`Bearer ${secret}`)).body).toEqual({ ok: true })
    for (const wrong of [undefined, `Bearer ${secret}x`, `Bearer ${secret.slice(0, -1)}`, secret, `Bearer ${p.root.token}`]) {
      expectProblem(await ping(wrong), 401, 'unauthorized')
    }
    expectProblem(await p.call('POST', '/api/internal/anything', { as: null }), 401, 'unauthorized')
    expectProblem(await p.call('POST', '/api/internal/anything', { as: null, headers: { authorization: `Bearer ${secret}` } }), 404, 'not_found')
  } finally {
    await p.close()
  }
})

test('a drain: no new turn or task is taken, /readyz says draining, what runs finishes, and the status says when it is empty', async () => {
  const p = await startTestPlatform({ INTERNAL_API_SECRET: secret })
  const internal = { as: null, headers: { authorization: `Bearer ${secret}` } }
  try {
    expectProblem(await p.call('POST', '/api/internal/drain', { as: null }), 401, 'unauthorized')
    expectProblem(await p.call('POST', '/api/internal/drain'), 401, 'unauthorized')
    expect((await p.call('GET', '/api/internal/drain', internal)).body).toMatchObject({ draining: false, since: null, empty: true })
    const demo = rowsOf((await p.call('GET', '/api/v1/AgentConfigRecord?name=eq.demo')).body)[0]!.id as string

    // A slow turn is running when the drain begins.
    const running = await startChatTurn(p, { agent_id: demo, text: '/slow 60 one two three four five six' })
    const events = running.events()
    expect((await events.next()).value).toMatchObject({ type: 'conversation' })
    const begun = await p.call('POST', '/api/internal/drain', internal)
    expect(begun.status).toBe(200)
    expect(begun.body).toMatchObject({ draining: true, running: { turns: 1 }, empty: false })

    const ready = await p.call('GET', '/readyz', { as: null })
    expect(ready.status).toBe(503)
    expect(ready.body).toMatchObject({ status: 'draining', checks: { serving: false, store: true } })
    const refused = expectProblem(await p.call('POST', '/api/chat', { json: { agent_id: demo, text: 'new work' } }), 503, 'unavailable')
    expect(refused.detail).toContain('draining for a restart and takes no new turns')
    expect((await p.call('POST', '/api/chat', { json: { agent_id: demo, text: 'new work' } })).headers.get('retry-after')).toBe('1')
    await expect(p.services.tasks.run({ user: { userId: p.root.userId, companyId: p.root.companyId }, tool: 'mcp-planning__plan_update', arguments: {} })).rejects.toThrow('takes no new background tasks')

    // The running turn ends whole; then the process is empty.
    const rest = await Array.fromAsync(events)
    expect(rest.at(-1)).toMatchObject({ type: 'message', text: 'Echo: one two three four five six' })
    await until(async () => (await p.call('GET', '/api/internal/drain', internal)).body.empty === true, { what: 'the drain to be empty' })
    // Asking again only reports.
    expect((await p.call('POST', '/api/internal/drain', internal)).body).toMatchObject({ draining: true, since: begun.body.since })
  } finally {
    await p.close()
  }
})

test('the status: this process, its version, the event bus and the queues', async () => {
  const p = await startTestPlatform({ INTERNAL_API_SECRET: secret })
  try {
    expectProblem(await p.call('GET', '/api/internal/status'), 401, 'unauthorized')
    const status = await p.call('GET', '/api/internal/status', { as: null, headers: { authorization: `Bearer ${secret}` } })
    expect(status.status).toBe(200)
    expect(status.body).toMatchObject({
      process: p.services.presence.id,
      version: manifest.version,
      processes: [expect.objectContaining({ id: p.services.presence.id, version: manifest.version, pid: process.pid, draining: false })],
      event_bus: { listening: true, lag_seconds: null },
      queues: { inbox: { pending: 0, failed: 0 }, outbox: { pending: 0, failed: 0 } },
    })
    // A drain shows at once.
    await p.call('POST', '/api/internal/drain', { as: null, headers: { authorization: `Bearer ${secret}` } })
    const draining = await p.call('GET', '/api/internal/status', { as: null, headers: { authorization: `Bearer ${secret}` } })
    expect(draining.body.processes[0]).toMatchObject({ draining: true })
  } finally {
    await p.close()
  }
})

const onPostgres = TEST_DATABASE_URL ? test : test.skip
onPostgres(`two processes on one database list each other, with the other's event lag; one that stops is gone${TEST_DATABASE_URL ? '' : ` (${CLUSTER_NEEDS_POSTGRES})`}`, async () => {
  const database = await createPostgresDatabase()
  const env = { INTERNAL_API_SECRET: secret, SWITCHBOARD_MASTER_KEY: 'c'.repeat(64) }
  const [one, two] = [await startTestPlatform(env, systemClock, openTestStore(database)), await startTestPlatform(env, systemClock, openTestStore(database))]
  const status = async (p: TestPlatform) => (await p.call('GET', '/api/internal/status', { as: null, headers: { authorization: `Bearer ${secret}` } })).body
  try {
    await until(async () => (await status(one)).processes.length === 2, { what: 'both processes to have beaten' })
    expect((await status(one)).processes.map((x: { id: string }) => x.id)).toEqual([one.services.presence.id, two.services.presence.id])
    expect((await one.call('POST', '/api/v1/AgentConfigRecord', { json: { name: 'heard-elsewhere' } })).status).toBe(201)
    await until(async () => (await status(two)).event_bus.lag_seconds !== null, { what: 'the second process to hear the first one’s event' })
    await one.close()
    expect((await status(two)).processes.map((x: { id: string }) => x.id)).toEqual([two.services.presence.id])
  } finally {
    await two.close()
    await database.drop()
  }
}, 30_000)
