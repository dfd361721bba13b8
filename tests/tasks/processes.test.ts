import { afterAll, beforeAll, expect, test } from 'bun:test'
import { manualClock } from '../../src/clock.ts'
import type { Store } from '../../src/db/connect.ts'
import { STALE_MS } from '../../src/tasks/tasks.ts'
import { CLUSTER_NEEDS_POSTGRES } from '../helpers/cluster.ts'
import { createPostgresDatabase, openTestStore, TEST_DATABASE_URL } from '../helpers/database.ts'
import { until } from '../helpers/until.ts'
import { bootOn, finish, messagesOf, request, rootWithAgent, started, stopped, taskIdIn, toolTurn, type Booted } from './helpers.ts'

// Two platforms in this process on one PostgreSQL database, each with its own pool and LISTEN connection, as two
// processes behind a load balancer have, on one clock the test moves: the limit holds across them, a cancel reaches
// the process running the tool, and a process that stops beating has its tasks marked interrupted by the other.
let database: Awaited<ReturnType<typeof createPostgresDatabase>>
const stores: Store[] = []
let a: Booted
let b: Booted
let root: Awaited<ReturnType<typeof rootWithAgent>>
const clock = manualClock()

if (TEST_DATABASE_URL) {
  beforeAll(async () => {
    database = await createPostgresDatabase()
    for (let i = 0; i < 2; i++) stores.push(openTestStore(database))
    a = await bootOn(stores[0]!, clock)
    b = await bootOn(stores[1]!, clock)
    root = await rootWithAgent(stores[0]!, a)
  })
  afterAll(async () => {
    for (const platform of [a, b]) await platform?.stop()
    for (const store of stores) await store.close()
    await database?.drop()
  })
}

const pgTest = (name: string, body: () => Promise<void>) => (TEST_DATABASE_URL ? test(name, body, 30_000) : test.skip(`${name} (${CLUSTER_NEEDS_POSTGRES})`, () => {}))
const key = () => `pg-${crypto.randomUUID().slice(0, 8)}`
const start = (on: Booted, job: string) => request(on, root.token, 'POST', '/api/tasks', { tool: 'slow__wait', arguments: { key: job } })

pgTest('the limit per person counts the tasks of every process', async () => {
  const jobs = [key(), key(), key()]
  const ids = [(await start(a, jobs[0]!)).body.id, (await start(b, jobs[1]!)).body.id, (await start(a, jobs[2]!)).body.id]
  expect((await start(b, key())).status).toBe(409)
  for (const id of ids) expect((await request(b, root.token, 'POST', '/api/tasks/cancel', { task_id: id })).body.cancelled).toBe(true)
})

pgTest('starts racing on both processes at once still keep to the limit: three run, the rest are refused', async () => {
  const jobs = Array.from({ length: 10 }, key)
  // Every start in flight together, alternating between the processes: only a count taken under one lock holds.
  const replies = await Promise.all(jobs.map((job, i) => start(i % 2 ? b : a, job)))
  const admitted = replies.filter((r) => r.status === 202)
  expect(admitted).toHaveLength(3)
  expect(replies.filter((r) => r.status === 409)).toHaveLength(7)
  for (const refused of replies.filter((r) => r.status === 409)) expect(refused.body.detail).toContain('3 at once is the limit per person')
  const running = await stores[0]!.db.selectFrom('background_tasks').select('id').where('user_id', '=', root.userId).where('status', '=', 'running').execute()
  expect(running.map((r) => r.id).sort()).toEqual(admitted.map((r) => r.body.id).sort())
  for (const { body } of admitted) expect((await request(a, root.token, 'POST', '/api/tasks/cancel', { task_id: body.id })).body.cancelled).toBe(true)
})

pgTest('a cancel made on one process stops the tool on the process running it', async () => {
  const job = key()
  const task = (await start(a, job)).body.id
  await until(() => started.has(job), { what: 'the tool to start on the first process' })
  const cancelled = await request(b, root.token, 'POST', '/api/tasks/cancel', { task_id: task })
  expect(cancelled.body).toMatchObject({ cancelled: true, task: { status: 'cancelled' } })
  await until(() => stopped.has(job), { what: 'the first process to stop the tool' })
  expect((await request(a, root.token, 'GET', `/api/v1/BackgroundTask/${task}`)).body.status).toBe('cancelled')
})

pgTest('a process that stops beating has its tasks marked interrupted by another; it stops the tool once it notices', async () => {
  const job = key()
  const { result, conversation } = await toolTurn(a, root.token, { agent_id: root.agentId, text: `/tool mcp-tasks__async_run_tool {"tool":"slow__wait","arguments":{"key":"${job}"}}` })
  const task = taskIdIn(result)
  await until(() => started.has(job), { what: 'the tool to start' })

  // While the owner beats, the other process's sweep leaves the task alone, however long it runs.
  for (let i = 0; i < 3; i++) {
    clock.advance(STALE_MS - 1_000)
    await a.services.tasks.heartbeat()
    expect(await b.services.tasks.sweep()).toBe(0)
  }
  // The owner misses its beats (as a process that died would): the next sweep elsewhere settles the task.
  clock.advance(STALE_MS + 1)
  expect(await b.services.tasks.sweep()).toBe(1)
  const read = await request(b, root.token, 'GET', `/api/v1/BackgroundTask/${task}`)
  expect(read.body).toMatchObject({ status: 'interrupted', error: expect.stringContaining('stopped before the tool finished') })
  await until(async () => (await messagesOf(stores[1]!.db, conversation)).some((m) => m.text.startsWith(`Background task ${task} (slow__wait) was interrupted.`)), {
    what: 'the interruption in the conversation',
  })
  // The owner, alive after all, learns it at its next beat and stops the tool; its answer would change nothing.
  await a.services.tasks.heartbeat()
  await until(() => stopped.has(job), { what: 'the owner to stop the tool' })
  expect(finish(job, 'late')).toBe(false)
  expect((await request(a, root.token, 'GET', `/api/v1/BackgroundTask/${task}`)).body.status).toBe('interrupted')
})
