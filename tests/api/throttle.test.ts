import { expect, test } from 'bun:test'
import { manualClock } from '../../src/clock.ts'
import { MemoryBucketStore } from '../../src/throttle/buckets.ts'
import { startTestPlatform, usePlatform } from '../helpers/platform.ts'
import { expectProblem } from '../helpers/problem.ts'

const clock = manualClock()

const p = usePlatform({ SWITCHBOARD_API_RATE_BURST: '5', SWITCHBOARD_API_RATE_PER_SECOND: '0.5' }, clock)

test('after the burst a user gets 429 with a Retry-After that is right; another user is unaffected', async () => {
  const user = await p().createUser()
  const other = await p().createUser()
  const list = (as = user) => p().call('GET', '/api/v1/AgentConfigRecord', { as })
  for (let i = 0; i < 5; i++) {
    const ok = await list()
    expect(ok.status).toBe(200)
    expect(ok.headers.get('ratelimit-policy')).toBe('"api";q=5;w=10')
    expect(ok.headers.get('ratelimit')).toBe(`"api";r=${4 - i};t=${(i + 1) * 2}`)
  }
  const limited = await list()
  expectProblem(limited, 429, 'rate_limited')
  const retryAfter = Number(limited.headers.get('retry-after'))
  expect(retryAfter).toBe(2)
  expect(limited.headers.get('ratelimit')).toBe('"api";r=0;t=10')

  expect((await list(other)).status).toBe(200)

  clock.advance(retryAfter * 1000 - 1)
  expectProblem(await list(), 429, 'rate_limited')
  clock.advance(1)
  expect((await list()).status).toBe(200)
})

test('anonymous callers are throttled per address, before they learn they need credentials', async () => {
  const anonymous = (address: string) => p().call('GET', '/api/v1/AgentConfigRecord', { as: null, address })
  for (let i = 0; i < 5; i++) expect((await anonymous('192.0.2.10')).status).toBe(401)
  expectProblem(await anonymous('192.0.2.10'), 429, 'rate_limited')
  expect((await anonymous('192.0.2.11')).status).toBe(401)
})

test('chat writes share the user’s bucket: typing in a loop is refused once it is spent', async () => {
  const user = await p().createUser()
  const conversation = await p().call('POST', '/api/v1/WebchatConversation', { json: {}, as: user })
  expect(conversation.status).toBe(201)
  for (let i = 0; i < 4; i++) expect((await p().call('POST', '/api/chat/typing', { json: { conversation_id: conversation.body.id }, as: user })).status).toBe(204)
  expectProblem(await p().call('POST', '/api/chat/typing', { json: { conversation_id: conversation.body.id }, as: user }), 429, 'rate_limited')
  expectProblem(await p().call('POST', '/api/chat', { json: { conversation_id: conversation.body.id, text: 'hi' }, as: user }), 429, 'rate_limited')
  clock.advance(10_000)
})

test('a chat turn and an artifact write each take one token, not one per pattern that names their path', async () => {
  // hono's `/api/chat/*` matches `/api/chat` too: a second use() for the bare path charged these requests twice.
  const user = await p().createUser()
  const remaining = (reply: { headers: Headers }) => reply.headers.get('ratelimit')
  const turn = await p().call('POST', '/api/chat', { json: { text: 'hi' }, as: user })
  expectProblem(turn, 422, 'validation_error')
  expect(remaining(turn)).toBe('"api";r=4;t=2')
  const artifact = await p().call('POST', '/api/artifacts', { json: {}, as: user })
  expectProblem(artifact, 422, 'validation_error')
  expect(remaining(artifact)).toBe('"api";r=3;t=4')
  clock.advance(10_000)
})

test('the docs are not throttled', async () => {
  for (let i = 0; i < 8; i++) expect((await p().call('GET', '/api/openapi.json', { as: null, address: '192.0.2.20' })).status).toBe(200)
})

test('the in-memory store forgets refilled buckets once it holds too many keys', async () => {
  const store = new MemoryBucketStore(10)
  const rate = { burst: 2, perSecond: 1 }
  for (let i = 0; i < 11; i++) await store.take(`k${i}`, rate, 0)
  // Two seconds later every bucket is full again; the next take sweeps them all but its own.
  await store.take('late', rate, 2000)
  await store.take('later', rate, 3500)
  expect((await store.peek('k0', rate, 3500)).remaining).toBe(2)
  expect((await store.take('k0', rate, 3500)).remaining).toBe(1)
})

test('the MCP gateway has a bucket per user and server: 429 with Retry-After, others unaffected', async () => {
  const clock = manualClock()
  const q = await startTestPlatform({ SWITCHBOARD_MCP_RATE_BURST: '3', SWITCHBOARD_MCP_RATE_PER_SECOND: '0.5' }, clock)
  try {
    const [ann, bob] = [await q.createUser(), await q.createUser()]
    // No such servers: each request is counted before the server is looked up, then answers 404.
    const hit = (as: typeof ann, server: string) => q.call('POST', `/mcp/${server}`, { as, json: {} })
    for (let i = 0; i < 3; i++) expect((await hit(ann, 'alpha')).status).toBe(404)
    const limited = await hit(ann, 'alpha')
    expectProblem(limited, 429, 'rate_limited')
    expect(limited.headers.get('retry-after')).toBe('2')
    expect((await hit(ann, 'beta')).status).toBe(404)
    expect((await hit(bob, 'alpha')).status).toBe(404)
    clock.advance(2000)
    expect((await hit(ann, 'alpha')).status).toBe(404)
    expectProblem(await q.call('POST', '/mcp/alpha', { as: null, json: {} }), 401, 'unauthorized')
  } finally {
    await q.close()
  }
})
