import { afterAll, beforeAll, expect, test } from 'bun:test'
import { startTestPlatform, type Principal, type TestPlatform } from '../helpers/platform.ts'
import { expectProblem } from '../helpers/problem.ts'
import { fieldsOf } from '../helpers/typed-call.ts'
import { until } from '../helpers/until.ts'

// A platform without a plugin, through a bot beside the platform: messages in at /api/internal/bridge, each taken
// once, answered as the linked person; the replies fetched by a long poll or posted to the bridge's callback.
const SECRET = 'a-bridge-internal-secret-of-length'
const internal = { as: null, headers: { authorization: `Bearer ${SECRET}` } }
let p: TestPlatform
let agent: string
let person: Principal
let serial = 0

beforeAll(async () => {
  p = await startTestPlatform({ INTERNAL_API_SECRET: SECRET, SWITCHBOARD_OUTBOUND_ALLOW: '127.0.0.0/8' })
  agent = fieldsOf((await p.call('POST', '/api/v1/AgentConfigRecord', { json: { name: 'bridged', runner: 'echo', model: 'echo-1', channels: { bridge: { enabled: true } } } })).body).id as string
  person = await p.createUser()
})
afterAll(() => p.close())

const message = (overrides: Record<string, unknown> = {}) => ({ network: 'discord', delivery_id: `d-${serial++}`, thread: 'channel-42', sender: { id: '8812', name: 'Ada' }, text: 'Where is my order?', ...overrides })
const post = (json: unknown, to = agent) => p.call('POST', `/api/internal/bridge/${to}/messages`, { ...internal, json })
const replies = async (query = 'wait=10') => (await p.call('GET', `/api/internal/bridge/${agent}/replies?${query}`, internal)).body as { data: Array<{ network: string; thread: string; text: string; created_at: string }> }

test('the internal secret, an agent whose bridge is on, and a well-formed message are needed', async () => {
  expectProblem(await p.call('POST', `/api/internal/bridge/${agent}/messages`, { json: message() }), 401, 'unauthorized')
  expectProblem(await post(message(), crypto.randomUUID()), 404, 'not_found')
  const noBridge = fieldsOf((await p.call('POST', '/api/v1/AgentConfigRecord', { json: { name: 'unbridged' } })).body).id as string
  expectProblem(await post(message(), noBridge), 404, 'not_found')
  expectProblem(await post(message({ network: 'Discord!' })), 422, 'validation_error')
  expectProblem(await post({ ...message(), extra: 1 }), 422, 'validation_error')
})

test('an unknown sender is invited to link; once linked, they are answered as themselves, in their thread', async () => {
  expect((await post(message({ sender: { id: '7777' }, thread: 'dm-7777' }))).status).toBe(202)
  const invitation = await replies()
  expect(invitation.data).toHaveLength(1)
  expect(invitation.data[0]).toMatchObject({ network: 'discord', thread: 'dm-7777' })
  expect(invitation.data[0]!.text).toContain('/me/channels')

  expect((await p.call('POST', '/api/v1/UserPlatform', { json: { user_id: person.userId, platform: 'bridge', platform_user_id: 'discord:8812' } })).status).toBe(201)
  const first = message()
  expect((await post(first)).body).toEqual({ fresh: true })
  // The same delivery again (a bot's retry) is taken once.
  expect((await post(first)).body).toEqual({ fresh: false })
  const answered = await replies()
  expect(answered.data).toEqual([{ network: 'discord', thread: 'channel-42', text: 'Echo: Where is my order?', created_at: expect.any(String) }])
  // Handed out once: nothing is left.
  expect((await replies('wait=0')).data).toEqual([])
  // The conversation is the person's own.
  const conversation = await p.store.db.selectFrom('channel_threads').select(['user_id', 'platform']).where('thread_key', '=', 'discord:channel-42').executeTakeFirstOrThrow()
  expect(conversation).toEqual({ user_id: person.userId, platform: 'bridge' })
  // Another network's user with the same id is another person, not linked.
  expect((await post(message({ network: 'matrix', thread: 'room-1' }))).status).toBe(202)
  expect((await replies('network=matrix&wait=10')).data[0]!.text).toContain('/me/channels')
})

test('with a callback URL the replies are posted to the bridge, with the internal secret; a private address is refused', async () => {
  const received: Array<{ authorization: string | null; body: unknown }> = []
  const bridge = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: async (req) => (received.push({ authorization: req.headers.get('authorization'), body: await req.json() }), new Response(null, { status: 204 })) })
  try {
    const called = fieldsOf(
      (await p.call('POST', '/api/v1/AgentConfigRecord', { json: { name: 'called-back', runner: 'echo', model: 'echo-1', channels: { bridge: { callback_url: `http://127.0.0.1:${bridge.port}/replies` } } } })).body,
    ).id as string
    expect((await post(message({ text: 'call me back' }), called)).status).toBe(202)
    await until(() => received.length > 0, { what: 'the reply at the callback' })
    expect(received[0]).toEqual({ authorization: `Bearer ${SECRET}`, body: { agent_id: called, network: 'discord', thread: 'channel-42', text: 'Echo: call me back' } })

    const refused = expectProblem(
      await p.call('POST', '/api/v1/AgentConfigRecord', { json: { name: 'inward', channels: { bridge: { callback_url: 'http://10.0.0.5/replies' } } } }),
      422,
      'validation_error',
    )
    expect(refused.errors?.[0]?.path).toBe('channels.bridge.callback_url')
  } finally {
    bridge.stop(true)
  }
})

test('a long poll answers as soon as a reply is there', async () => {
  const started = Date.now()
  const polled = replies('wait=20')
  await Bun.sleep(300)
  expect((await post(message({ text: 'while you wait' }))).status).toBe(202)
  const { data } = await polled
  expect(data.map((r) => r.text)).toEqual(['Echo: while you wait'])
  expect(Date.now() - started).toBeLessThan(15_000)
})
