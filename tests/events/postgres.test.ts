import { afterAll, beforeAll, expect, test } from 'bun:test'
import postgres from 'postgres'
import type { Origin } from '../../src/events/bus.ts'
import { CHANNEL, PostgresBus } from '../../src/events/postgres.ts'
import type { Store } from '../../src/db/connect.ts'
import { migrate } from '../../src/db/migrate.ts'
import { silentLogger } from '../../src/logger.ts'
import { createPostgresDatabase, openTestStore, TEST_DATABASE_URL, type TestDatabase } from '../helpers/database.ts'
import { recordingDb } from '../helpers/recording-db.ts'
import { until } from '../helpers/until.ts'

// LISTEN/NOTIFY is PostgreSQL's; the embedded store runs one process and its in-memory bus (memory.test.ts).
const it = TEST_DATABASE_URL ? test : test.skip
if (!TEST_DATABASE_URL) console.warn('the PostgreSQL event bus tests need TEST_DATABASE_URL; they skip here (CI runs them)')

let database: Awaited<ReturnType<typeof createPostgresDatabase>>
// Two stores and two buses on one database stand for two processes: they share nothing but PostgreSQL.
let a: { store: Store; bus: PostgresBus }
let b: { store: Store; bus: PostgresBus }

async function processOn(on: TestDatabase) {
  const store = openTestStore(on, 2)
  // The bus listens on the server itself, past any pooler (store.url), as a process of the platform does.
  return { store, bus: await PostgresBus.connect(store.url!, store.db, silentLogger) }
}

beforeAll(async () => {
  if (!TEST_DATABASE_URL) return
  database = await createPostgresDatabase()
  const first = openTestStore(database, 1)
  await migrate(first.session)
  await first.close()
  a = await processOn(database)
  b = await processOn(database)
})

afterAll(async () => {
  if (!TEST_DATABASE_URL) return
  for (const p of [a, b]) {
    await p.bus.close()
    await p.store.close()
  }
  await database.drop()
})

it('an event published in one process reaches the other, marked as from elsewhere, and the publisher’s own at once', async () => {
  const inB: Array<[string, Origin]> = []
  const inA: Array<[string, Origin]> = []
  const stopB = b.bus.subscribe('turn.abort', ({ conversation_id }, origin) => inB.push([conversation_id, origin]))
  const stopA = a.bus.subscribe('turn.abort', ({ conversation_id }, origin) => inA.push([conversation_id, origin]))
  try {
    await a.bus.publish('turn.abort', { conversation_id: 'from-a' })
    // The publisher's subscribers before publish returns; never a second time when NOTIFY echoes it back.
    expect(inA).toEqual([['from-a', 'here']])
    await until(() => inB.length === 1, { what: 'process B to hear the event' })
    expect(inB).toEqual([['from-a', 'elsewhere']])
    // A barrier: notifications reach a listener in the order they were sent, so had A's own event come back to it,
    // it would be heard before B's next one.
    await b.bus.publish('turn.abort', { conversation_id: 'from-b' })
    await until(() => inA.length > 1, { what: 'process A to hear B’s event' })
    expect(inA).toEqual([
      ['from-a', 'here'],
      ['from-b', 'elsewhere'],
    ])
  } finally {
    stopA()
    stopB()
  }
})

it('events published together go in one statement and arrive in order, every one of them, the same one twice too', async () => {
  const heard: Array<string | undefined> = []
  const stop = b.bus.subscribe('mcp.cancel', ({ reason }) => heard.push(reason))
  // A third process, on a store that notes what it is asked.
  const recording = recordingDb(a.store.db)
  const c = await PostgresBus.connect(a.store.url!, recording.db, silentLogger)
  try {
    const big = 'x'.repeat(20_000)
    const payloads = ['one', 'two', 'two', big, 'three'].map((reason) => ({ session_id: 's', request_id: 1, reason }))
    await c.publishAll('mcp.cancel', payloads)
    await until(() => heard.length === 5, { what: 'all five events in process B' })
    // PostgreSQL delivers identical notifications of one transaction once: the second `two` is here all the same.
    expect(heard).toEqual(['one', 'two', 'two', big, 'three'])
    expect(recording.recorded.compiled.filter((statement) => statement.includes('pg_notify'))).toHaveLength(1)
  } finally {
    stop()
    await c.close()
    await a.store.db.deleteFrom('event_payloads').execute()
  }
})

it('a long batch goes in several statements, one after the other, and arrives whole and in order', async () => {
  const heard: number[] = []
  const stop = b.bus.subscribe('mcp.cancel', ({ request_id }) => heard.push(request_id as number))
  const recording = recordingDb(a.store.db)
  const c = await PostgresBus.connect(a.store.url!, recording.db, silentLogger)
  try {
    // Past what one statement's target list can hold (1664 entries).
    const ids = Array.from({ length: 2_000 }, (_, i) => i)
    await c.publishAll('mcp.cancel', ids.map((request_id) => ({ session_id: 's', request_id })))
    await until(() => heard.length === ids.length, { what: 'every event in process B' })
    expect(heard).toEqual(ids)
    expect(recording.recorded.compiled.filter((statement) => statement.includes('pg_notify')).length).toBeGreaterThan(1)
  } finally {
    stop()
    await c.close()
  }
})

it('a payload over NOTIFY’s limit travels by reference to a row, and events keep their order around it', async () => {
  const heard: string[] = []
  const stop = b.bus.subscribe('mcp.cancel', ({ reason }) => heard.push(reason!))
  try {
    const big = 'x'.repeat(20_000)
    await a.bus.publish('mcp.cancel', { session_id: 's', request_id: 1, reason: 'small-1' })
    await a.bus.publish('mcp.cancel', { session_id: 's', request_id: 2, reason: big })
    await a.bus.publish('mcp.cancel', { session_id: 's', request_id: 3, reason: 'small-2' })
    await until(() => heard.length === 3, { what: 'all three events in process B' })
    expect(heard).toEqual(['small-1', big, 'small-2'])
    const rows = await a.store.db.selectFrom('event_payloads').select('type').execute()
    expect(rows).toEqual([{ type: 'mcp.cancel' }])
  } finally {
    stop()
  }
})

it('a dropped LISTEN connection is made again, subscribers are told they may have missed events, and events flow again', async () => {
  let missed = 0
  const heard: string[] = []
  const stopMissed = b.bus.onMissed(() => missed++)
  const stop = b.bus.subscribe('turn.abort', ({ conversation_id }) => heard.push(conversation_id))
  const admin = postgres(database.url, { max: 1, onnotice: () => {} })
  try {
    // Every connection listening on the channel is cut, as a network failure or a server restart would.
    const killed = await admin`
      SELECT pg_terminate_backend(pid) FROM pg_stat_activity
      WHERE datname = current_database() AND pid <> pg_backend_pid() AND query ILIKE ${`LISTEN ${CHANNEL}%`}`
    expect(killed.length).toBe(2)
    await until(() => missed === 1, { what: 'process B to be told it may have missed events' })
    await a.bus.publish('turn.abort', { conversation_id: 'after-the-drop' })
    await until(() => heard.includes('after-the-drop'), { what: 'an event published after the reconnect' })
  } finally {
    await admin.end()
    stop()
    stopMissed()
  }
})
