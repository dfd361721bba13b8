import { afterAll, beforeAll, expect, test } from 'bun:test'
import postgres from 'postgres'
import { lockKey, MemoryTurnLocks, PostgresTurnLocks } from '../../src/chat/turn-locks.ts'
import { silentLogger } from '../../src/logger.ts'
import { createPostgresDatabase, TEST_DATABASE_URL } from '../helpers/database.ts'
import { until } from '../helpers/until.ts'

const onPostgres = TEST_DATABASE_URL ? test : test.skip
if (!TEST_DATABASE_URL) console.warn('the PostgreSQL turn-lock tests need TEST_DATABASE_URL; they skip here (CI runs them)')

let database: Awaited<ReturnType<typeof createPostgresDatabase>> | undefined
beforeAll(async () => {
  if (TEST_DATABASE_URL) database = await createPostgresDatabase()
})
afterAll(() => database?.drop())

test('memory: one turn per conversation, free again once released', async () => {
  const locks = new MemoryTurnLocks()
  expect(await locks.acquire('c')).toBe(true)
  expect(await locks.acquire('c')).toBe(false)
  expect(await locks.held('c')).toBe(true)
  expect(await locks.acquire('other')).toBe(true)
  await locks.release('c')
  expect(await locks.held('c')).toBe(false)
  expect(await locks.acquire('c')).toBe(true)
})

test('lock keys are 64-bit, stable, and differ between conversations', () => {
  const id = '0190a0b2-1234-7abc-8def-0123456789ab'
  expect(lockKey(id)).toBe(lockKey(id))
  expect(lockKey(id)).not.toBe(lockKey('0190a0b2-1234-7abc-8def-0123456789ac'))
  expect(BigInt.asIntN(64, lockKey(id))).toBe(lockKey(id))
})

onPostgres('postgres: a conversation locked by one process is refused to another, which sees it held, until released', async () => {
  const a = new PostgresTurnLocks(database!.url, silentLogger)
  const b = new PostgresTurnLocks(database!.url, silentLogger)
  try {
    const id = crypto.randomUUID()
    expect(await b.held(id)).toBe(false)
    expect(await a.acquire(id)).toBe(true)
    // The same process too: PostgreSQL's session locks would nest, so it must refuse by itself.
    expect(await a.acquire(id)).toBe(false)
    expect(await b.acquire(id)).toBe(false)
    expect(await b.held(id)).toBe(true)
    await a.release(id)
    expect(await b.held(id)).toBe(false)
    expect(await b.acquire(id)).toBe(true)
    await b.release(id)
  } finally {
    await Promise.all([a.close(), b.close()])
  }
})

onPostgres('postgres: a process that dies frees its conversations; one that only lost its connection takes them back', async () => {
  const lost: string[] = []
  const a = new PostgresTurnLocks(database!.url, silentLogger, (id) => lost.push(id))
  const b = new PostgresTurnLocks(database!.url, silentLogger)
  const admin = postgres(database!.url, { max: 2, onnotice: () => {} })
  const [kept, taken] = [crypto.randomUUID(), crypto.randomUUID()]
  try {
    expect(await a.acquire(kept)).toBe(true)
    expect(await a.acquire(taken)).toBe(true)
    const [holder] = await admin`SELECT DISTINCT pid FROM pg_locks WHERE locktype = 'advisory' AND granted`
    // Another session queues for one of the two, so it gets that one the moment A's connection dies, before A can
    // take it back: A must then give up that turn rather than run alongside.
    const queued = admin`SELECT pg_advisory_lock(${lockKey(taken).toString()}::bigint)`.execute()
    await until(async () => (await admin`SELECT 1 FROM pg_locks WHERE locktype = 'advisory' AND NOT granted`).length === 1, { what: 'the other session to queue' })
    await admin`SELECT pg_terminate_backend(${holder!.pid})`
    await queued
    await until(() => lost.includes(taken), { what: 'process A to learn that it lost the conversation' })
    await until(async () => (await b.held(kept)) && !(await b.acquire(kept)), { what: 'process A to hold the other conversation again' })
    expect(lost).toEqual([taken])
  } finally {
    await admin.end()
    await Promise.all([a.close(), b.close()])
  }
})
