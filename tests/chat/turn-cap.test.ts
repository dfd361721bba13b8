import { afterAll, beforeAll, expect, test } from 'bun:test'
import { TurnCap } from '../../src/chat/turn-cap.ts'
import { systemClock } from '../../src/clock.ts'
import { ApiError } from '../../src/errors.ts'
import { startChatTurn } from '../helpers/chat.ts'
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts'
import { expectProblem } from '../helpers/problem.ts'

let p: TestPlatform
let agent: string

beforeAll(async () => {
  p = await startTestPlatform({ SWITCHBOARD_TURNS_PER_USER: '3' })
  agent = (await p.call('POST', '/api/v1/AgentConfigRecord', { json: { name: 'patient', runner: 'echo', model: 'echo-1' } })).body.id
})
afterAll(() => p.close())

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

test('starts racing on several processes cannot slip past the cap: it is counted in the store, under a lock', async () => {
  // Two caps on one store stand for two processes.
  const caps = [new TurnCap(p.store.db, systemClock, 4), new TurnCap(p.store.db, systemClock, 4)]
  const person = crypto.randomUUID()
  const outcomes = await Promise.allSettled(Array.from({ length: 10 }, (_, i) => caps[i % 2]!.admit(person, crypto.randomUUID())))
  expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(4)
  for (const refused of outcomes.filter((o) => o.status === 'rejected')) expect((refused as PromiseRejectedResult).reason).toBeInstanceOf(ApiError)
})

test('a place whose process died is given back when its lease runs out', async () => {
  let now = Date.now()
  const cap = new TurnCap(p.store.db, { now: () => now }, 1)
  const person = crypto.randomUUID()
  await cap.admit(person, crypto.randomUUID())
  await expect(cap.admit(person, crypto.randomUUID())).rejects.toBeInstanceOf(ApiError)
  now += 21 * 60_000
  await cap.admit(person, crypto.randomUUID())
})
