import { afterAll, beforeAll, expect, test } from 'bun:test'
import postgres from 'postgres'
import { MemoryTurnLocks, PostgresTurnLocks } from '../../src/chat/turn-locks.ts'
import { silentLogger } from '../../src/logger.ts'
import { startChatTurn } from '../helpers/chat.ts'
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts'
import { createPostgresDatabase, TEST_DATABASE_URL } from '../helpers/database.ts'
import { expectProblem } from '../helpers/problem.ts'

const onPostgres = TEST_DATABASE_URL ? test : test.skip
if (!TEST_DATABASE_URL) console.warn('the cap across processes needs TEST_DATABASE_URL; its tests skip here (CI runs them)')

let p: TestPlatform
let agent: string
let database: Awaited<ReturnType<typeof createPostgresDatabase>> | undefined

beforeAll(async () => {
  p = await startTestPlatform({ SWITCHBOARD_TURNS_PER_USER: '3' })
  agent = (await p.call('POST', '/api/v1/AgentConfigRecord', { json: { name: 'patient', runner: 'echo', model: 'echo-1' } })).body.id
  if (TEST_DATABASE_URL) database = await createPostgresDatabase()
})
afterAll(async () => {
  await p.close()
  await database?.drop()
})

/** A turn that takes about three seconds: eleven words, 300 ms before each. */
const SLOW = '/slow 300 a b c d e f g h i j'

test('a person may have three answers being written at once; the next is refused (429, Retry-After), others are not held up', async () => {
  const flooder = await p.createUser()
  const running = await Promise.all([1, 2, 3].map(() => startChatTurn(p, { agent_id: agent, text: SLOW }, flooder)))
  for (const turn of running) expect(turn.response.status).toBe(200)
  const streams = running.map((turn) => turn.events())
  const conversations = await Promise.all(streams.map(async (stream) => ((await stream.next()).value as { conversation_id: string }).conversation_id))
  try {
    const fourth = await p.call('POST', '/api/chat', { as: flooder, json: { agent_id: agent, text: SLOW } })
    const refused = expectProblem(fourth, 429, 'rate_limited')
    expect(refused.detail).toContain('3 answers being written at once')
    expect(Number(fourth.headers.get('retry-after'))).toBeGreaterThan(0)

    const someoneElse = await p.createUser()
    const theirs = await startChatTurn(p, { agent_id: agent, text: 'hello' }, someoneElse)
    expect(theirs.response.status).toBe(200)
    await Array.fromAsync(theirs.events())

    // Stopping one frees a place at once.
    expect((await p.call('POST', '/api/chat/abort', { as: flooder, json: { conversation_id: conversations[0] } })).body).toEqual({ aborted: true })
    for await (const _ of streams[0]!) void _
    const again = await startChatTurn(p, { agent_id: agent, text: 'one more' }, flooder)
    expect(again.response.status).toBe(200)
    await Array.fromAsync(again.events())
  } finally {
    // Nothing left running for the platform's close to cut off.
    for (const [i, stream] of streams.entries()) {
      await p.call('POST', '/api/chat/abort', { as: flooder, json: { conversation_id: conversations[i] } })
      for await (const _ of stream) void _
    }
  }
})

test('the embedded store counts each person’s places, and a place is free again once its turn ends', async () => {
  const locks = new MemoryTurnLocks()
  expect(await locks.acquireWithPlace('c1', 'ann', 2)).toBe('taken')
  expect(await locks.acquireWithPlace('c1', 'bob', 2)).toBe('busy')
  expect(await locks.acquireWithPlace('c2', 'ann', 2)).toBe('taken')
  expect(await locks.acquireWithPlace('c3', 'ann', 2)).toBe('full')
  // A full person leaves the conversation free for someone else.
  expect(await locks.acquireWithPlace('c3', 'bob', 2)).toBe('taken')
  await locks.release('c1')
  expect(await locks.acquireWithPlace('c4', 'ann', 2)).toBe('taken')
})

onPostgres('starts racing on several processes cannot slip past the cap, and a place is one lock, not several', async () => {
  // Two lock services on one database stand for two processes.
  const processes = [new PostgresTurnLocks(database!.url, silentLogger), new PostgresTurnLocks(database!.url, silentLogger)]
  const admin = postgres(database!.url, { max: 1, onnotice: () => {} })
  const advisoryLocks = async () =>
    (await admin<{ locks: number }[]>`SELECT count(*)::integer AS locks FROM pg_locks WHERE locktype = 'advisory' AND granted AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`)[0]!.locks
  try {
    const person = crypto.randomUUID()
    // One start takes its conversation and one place, of the four free.
    const alone = crypto.randomUUID()
    expect(await processes[0]!.acquireWithPlace(alone, person, 4)).toBe('taken')
    expect(await advisoryLocks()).toBe(2)
    await processes[0]!.release(alone)
    expect(await advisoryLocks()).toBe(0)

    const conversations = Array.from({ length: 10 }, () => crypto.randomUUID())
    const outcomes = await Promise.all(conversations.map((id, i) => processes[i % 2]!.acquireWithPlace(id, person, 4)))
    expect(outcomes.filter((o) => o === 'taken')).toHaveLength(4)
    expect(outcomes.filter((o) => o === 'full')).toHaveLength(6)
    // A start refused for its busy conversation takes no place either.
    const busy = conversations[outcomes.indexOf('taken')]!
    expect(await processes[1]!.acquireWithPlace(busy, crypto.randomUUID(), 4)).toBe('busy')
    // Four conversations and four places are locked, nothing more: a refused start gave its conversation back.
    expect(await advisoryLocks()).toBe(8)
    const taken = conversations.filter((_, i) => outcomes[i] === 'taken')
    await Promise.all(taken.map((id) => processes[conversations.indexOf(id) % 2]!.release(id)))
    expect(await processes[0]!.acquireWithPlace(crypto.randomUUID(), person, 4)).toBe('taken')
  } finally {
    await admin.end()
    await Promise.all(processes.map((locks) => locks.close()))
  }
})

onPostgres('a place whose process died is free at once: its connection took it along', async () => {
  const [dying, living] = [new PostgresTurnLocks(database!.url, silentLogger), new PostgresTurnLocks(database!.url, silentLogger)]
  try {
    const person = crypto.randomUUID()
    expect(await dying.acquireWithPlace(crypto.randomUUID(), person, 1)).toBe('taken')
    expect(await living.acquireWithPlace(crypto.randomUUID(), person, 1)).toBe('full')
    await dying.close()
    expect(await living.acquireWithPlace(crypto.randomUUID(), person, 1)).toBe('taken')
  } finally {
    await living.close()
  }
})

onPostgres('one person’s starts at once in one process take a place each, never the same one twice', async () => {
  // Session locks nest: without taking them one at a time, two starts would both get place 0 on one connection.
  const locks = new PostgresTurnLocks(database!.url, silentLogger)
  try {
    const person = crypto.randomUUID()
    const outcomes = await Promise.all(Array.from({ length: 5 }, () => locks.acquireWithPlace(crypto.randomUUID(), person, 3)))
    expect(outcomes.filter((o) => o === 'taken')).toHaveLength(3)
    expect(outcomes.filter((o) => o === 'full')).toHaveLength(2)
  } finally {
    await locks.close()
  }
})
