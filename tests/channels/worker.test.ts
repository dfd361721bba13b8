import { afterAll, afterEach, beforeAll, expect, test } from 'bun:test'
import { sql } from 'kysely'
import { ChannelWorker } from '../../src/channels/worker.ts'
import type { InboxRow } from '../../src/channels/queue.ts'
import { systemClock } from '../../src/clock.ts'
import type { Store } from '../../src/db/connect.ts'
import { silentLogger } from '../../src/logger.ts'
import { Scheduler } from '../../src/scheduler.ts'
import { freshStore } from '../helpers/database.ts'
import { recordingDb, type Recorded } from '../helpers/recording-db.ts'
import { until } from '../helpers/until.ts'

// The queues' worker looks for work when it is woken, when a retry or a lease falls due, and on its poll: never in a
// loop, whatever waits in the queues.
let store: Store
let companyId: string
let agentId: string
/** What the running worker sent, on a store that counts it. */
let recorded: Recorded = { executed: 0, compiled: [] }
let running: { worker: ChannelWorker; scheduler: Scheduler; finish: () => void } | undefined

beforeAll(async () => {
  store = await freshStore()
  companyId = crypto.randomUUID()
  agentId = crypto.randomUUID()
  await sql`INSERT INTO companies (id, name, slug) VALUES (${companyId}, 'Queue', ${`queue-${companyId.slice(0, 8)}`})`.execute(store.db)
  await sql`INSERT INTO agent_configs (id, company_id, name, runner) VALUES (${agentId}, ${companyId}, 'queued', 'echo')`.execute(store.db)
})
afterEach(async () => {
  running?.finish()
  await running?.worker.stop()
  await running?.scheduler.stop()
  running = undefined
  await sql`DELETE FROM channel_inbox`.execute(store.db)
})
afterAll(() => store.close())

/** A pending inbox row of `thread`; `leased` as another process's, still working on it for a minute. */
async function queued(thread: string, options: { leased?: boolean; at?: string } = {}): Promise<string> {
  const id = Bun.randomUUIDv7()
  const lease = options.leased ? sql`now() + interval '1 minute'` : null
  const owner = options.leased ? crypto.randomUUID() : null
  await sql`
    INSERT INTO channel_inbox (id, company_id, agent_id, platform, delivery_id, thread_key, message, lease_until, lease_owner)
    VALUES (${id}, ${companyId}, ${agentId}, 'telegram', ${id}, ${thread}, '{}'::jsonb, ${lease}, ${owner})`.execute(store.db)
  return id
}

/** A worker on the counting store whose inbox work waits until the test lets it finish; it notes what it took. */
function startWorker(pollMs: number) {
  const taken: string[] = []
  let finish = () => {}
  const finished = new Promise<void>((resolve) => (finish = resolve))
  const scheduler = new Scheduler(silentLogger)
  const recording = recordingDb(store.db)
  recorded = recording.recorded
  const db = recording.db
  const handlers = {
    inbox: async (row: InboxRow) => {
      taken.push(row.id)
      await finished
      return {}
    },
    outbox: async () => ({}),
    gaveUp: async () => {},
  }
  const worker = new ChannelWorker(db, systemClock, silentLogger, 20, handlers, scheduler, undefined, undefined, pollMs)
  running = { worker, scheduler, finish: () => finish() }
  worker.start()
  return { worker, taken, finish }
}

/** The statements the worker sends over `ms`. */
async function statementsOver(ms: number): Promise<number> {
  const before = recorded.executed
  await Bun.sleep(ms)
  return recorded.executed - before
}

test('a message waiting behind one still being answered is not looked for again and again', async () => {
  // Another process answers the thread's first message; the second waits its turn, due long ago.
  const first = await queued('t1', { leased: true })
  const second = await queued('t1')
  const { taken } = startWorker(1_000)
  // A poll a second sends a handful of statements; looking whenever the waiting row seems due sent hundreds.
  expect(await statementsOver(1_500)).toBeLessThan(25)
  expect(taken).toEqual([])
  // The first one answered: the second is taken on the next look.
  await sql`UPDATE channel_inbox SET status = 'done', lease_until = NULL, lease_owner = NULL WHERE id = ${first}`.execute(store.db)
  await until(() => taken.length === 1, { what: 'the second message taken' })
  expect(taken).toEqual([second])
})

test('a worker with no room left waits for its own work to end instead of looking again', async () => {
  // More due messages than one process works on at once, each in a thread of its own.
  for (let i = 0; i < 20; i++) await queued(`room-${i}`)
  const { taken, finish } = startWorker(1_000)
  await until(() => taken.length === 16, { what: 'a full worker' })
  expect(await statementsOver(1_000)).toBeLessThan(25)
  expect(taken).toHaveLength(16)
  // Work that ends makes room, and the rest is taken at once.
  finish()
  await until(() => taken.length === 20, { what: 'the rest taken' })
})

test('a retry is looked for when it falls due, long before the poll', async () => {
  await queued('later')
  await sql`UPDATE channel_inbox SET next_attempt_at = now() + interval '300 milliseconds'`.execute(store.db)
  const { taken } = startWorker(60_000)
  expect(taken).toEqual([])
  await until(() => taken.length === 1, { what: 'the retry taken', timeoutMs: 3_000 })
})
