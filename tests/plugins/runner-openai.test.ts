import { afterAll, beforeAll, expect, test } from 'bun:test'
import { startFakeOpenAI } from '../helpers/fake-openai.ts'
import { chatTurn, stopWhileRetrying, type ChatEvent } from '../helpers/chat.ts'
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts'
import { until } from '../helpers/until.ts'

const fake = startFakeOpenAI()
let p: TestPlatform
let agent: string

beforeAll(async () => {
  p = await startTestPlatform({
    SWITCHBOARD_PLUGIN_RUNNER_OPENAI_BASE_URL: fake.url,
    SWITCHBOARD_PLUGIN_RUNNER_OPENAI_API_KEY: 'sk-test-key',
    SWITCHBOARD_PLUGIN_RUNNER_OPENAI_MODELS: 'fast:gpt-fast-2026,smart:gpt-smart-2026',
    SWITCHBOARD_PLUGIN_RUNNER_OPENAI_PRICES: 'gpt-fast-2026=1/2',
  })
  agent = (await p.call('POST', '/api/v1/AgentConfigRecord', { json: { name: 'gpt', runner: 'openai', model: 'fast', personality: 'Be brief.' } })).body.id
})
afterAll(async () => {
  await p.close()
  fake.stop()
})

const turn = (text: string, onEvent?: (event: ChatEvent, conversation: string) => Promise<void>) => chatTurn(p, { agent_id: agent, text }, { onEvent })

test('streams the provider’s answer, sending the model’s api_id, the key and the conversation', async () => {
  fake.scripts.push({ text: ['Hel', 'lo ', 'there'], usage: { prompt_tokens: 1000, completion_tokens: 500 } })
  const events = await turn('hi')
  expect(events.filter((e) => e.type === 'stream').map((e) => e.text)).toEqual(['Hel', 'lo ', 'there'])
  expect(events.at(-1)).toMatchObject({ type: 'message', text: 'Hello there', agent: 'gpt' })
  const sent = fake.received.at(-1)!
  expect(sent.authorization).toBe('Bearer sk-test-key')
  expect(sent.body).toMatchObject({ model: 'gpt-fast-2026', stream: true, messages: [{ role: 'system', content: 'Be brief.' }, { role: 'user', content: 'hi' }] })
  expect(sent.body.tools.map((t: { function: { name: string } }) => t.function.name)).toContain('current_time')
})

test('changing the agent’s model in the store changes the api_id on the very next turn, no reload', async () => {
  await p.call('PATCH', `/api/v1/AgentConfigRecord/${agent}`, { json: { model: 'smart' } })
  fake.scripts.push({ text: ['ok'] })
  await turn('again')
  expect(fake.received.at(-1)!.body.model).toBe('gpt-smart-2026')
  await p.call('PATCH', `/api/v1/AgentConfigRecord/${agent}`, { json: { model: 'fast' } })
})

test('a tool call streamed in pieces is run, and its result goes back to the provider', async () => {
  fake.scripts.push({ toolCall: { name: 'current_time', argumentChunks: ['{"time_', 'zone": "UTC"}'] } }, { text: ['It is late.'] })
  const events = await turn('what time is it?')
  expect(events.map((e) => e.type)).toEqual(['conversation', 'typing', 'tool_call', 'tool_result', 'stream', 'stream_end', 'message'])
  const followUp = fake.received.at(-1)!.body.messages.slice(-2)
  expect(followUp[0]).toEqual({
    role: 'assistant',
    content: null,
    tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'current_time', arguments: '{"time_zone":"UTC"}' } }],
  })
  expect(followUp[1]).toMatchObject({ role: 'tool', tool_call_id: 'call_1' })
  expect(followUp[1].content).toMatch(/UTC$/)
})

test.each([
  [401, 'auth', 'refused the credentials'],
  [400, 'provider_error', 'rejected the request'],
])('HTTP %i from the provider is not asked again: error_type %s with the actual error', async (status, errorType, text) => {
  const before = fake.received.length
  fake.scripts.push({ status, body: `{"error":{"message":"upstream says ${status}"}}` })
  const last = (await turn('hi')).at(-1)!
  expect(last).toMatchObject({ type: 'error', error_type: errorType })
  expect(last.text).toContain(text)
  expect(last.details).toContain(`upstream says ${status}`)
  expect(fake.received.length - before).toBe(1)
})

test('a 503 that lasts through every retry is provider_unavailable, after the first request and two retries', async () => {
  const before = fake.received.length
  fake.scripts.push({ status: 503, body: '{"error":{"message":"upstream says 503"}}', headers: { 'retry-after': '0' }, times: 3 })
  const last = (await turn('hi')).at(-1)!
  expect(last).toMatchObject({ type: 'error', error_type: 'provider_unavailable', details: expect.stringContaining('upstream says 503') })
  expect(fake.received.length - before).toBe(3)
})

test('429 then 200: the turn waits the retry-after the provider names, asks again and answers', async () => {
  fake.scripts.push({ status: 429, body: '{"error":{"message":"slow down"}}', headers: { 'retry-after': '1' } }, { text: ['Patiently.'] })
  const events = await turn('hi')
  expect(events.at(-1)).toMatchObject({ type: 'message', text: 'Patiently.' })
  const [refused, retried] = fake.received.slice(-2)
  expect(retried!.body).toEqual(refused!.body)
  // A lower bound only: the retry may come late on a loaded machine, never before the provider said.
  expect(retried!.at - refused!.at).toBeGreaterThanOrEqual(950)
})

test('a rate limit that asks for a longer wait than a person sits through is not retried: the error says when', async () => {
  const before = fake.received.length
  fake.scripts.push({ status: 429, body: '{"error":{"message":"upstream says 429"}}', headers: { 'retry-after': '120' } })
  const last = (await turn('hi')).at(-1)!
  expect(last).toMatchObject({ type: 'error', error_type: 'rate_limited', details: expect.stringContaining('upstream says 429') })
  expect(last.text).toContain('retry in 120 s')
  expect(fake.received.length - before).toBe(1)
})

test('an abort while the runner waits to retry ends the turn at once, and nothing is sent again', async () => {
  fake.scripts.push({ status: 429, body: '{"error":{"message":"later"}}', headers: { 'retry-after': '25' } }, { text: ['too late'] })
  const { events, elapsedMs, sent } = await stopWhileRetrying(p, (onEvent) => turn('hi', onEvent), () => fake.received.length)
  expect(events.at(-1)).toMatchObject({ type: 'aborted' })
  // The wait was 25 s: ending well before it is ending because of the abort.
  expect(elapsedMs).toBeLessThan(15_000)
  expect(sent).toBe(1)
  fake.scripts.length = 0
})

test('abort mid-stream closes the provider connection within a second and ends the stream with aborted', async () => {
  fake.scripts.push({ text: ['one ', 'two ', 'three ', 'four ', 'five ', 'six'], delayMs: 200 })
  let abortedAt = 0
  const events = await turn('count slowly', async (event, conversation) => {
    if (event.type === 'stream' && abortedAt === 0) {
      abortedAt = Date.now()
      await p.call('POST', '/api/chat/abort', { json: { conversation_id: conversation } })
    }
  })
  expect(events.at(-1)).toMatchObject({ type: 'aborted' })
  const closedAt = await until(() => fake.received.at(-1)!.closedAt, { what: 'the provider to see its connection closed' })
  expect(closedAt - abortedAt).toBeLessThan(1000)
  const stored = (await p.call('GET', `/api/v1/WebchatMessage?conversation_id=eq.${events[0]!.conversation_id}&role=eq.agent`)).body.data
  expect(stored).toMatchObject([{ status: 'aborted', text: 'one ' }])
})

test('a provider slower than the agent’s timeout ends the turn with a timeout error and hangs up on it', async () => {
  await p.call('PATCH', `/api/v1/AgentConfigRecord/${agent}`, { json: { timeout_seconds: 1 } })
  fake.scripts.push({ text: ['a', 'b', 'c', 'd'], delayMs: 600 })
  const last = (await turn('take your time')).at(-1)!
  expect(last).toMatchObject({ type: 'error', error_type: 'timeout' })
  await until(() => fake.received.at(-1)!.closedAt, { what: 'the runner to hang up on the slow provider' })
  await p.call('PATCH', `/api/v1/AgentConfigRecord/${agent}`, { json: { timeout_seconds: 900 } })
})

test('an unreachable provider is an error event, not a hang', async () => {
  const other = await startTestPlatform({ SWITCHBOARD_PLUGIN_RUNNER_OPENAI_BASE_URL: 'http://127.0.0.1:9/v1' })
  try {
    const id = (await other.call('POST', '/api/v1/AgentConfigRecord', { json: { name: 'nowhere', runner: 'openai' } })).body.id
    const reply = await other.call('POST', '/api/chat', { json: { agent_id: id, text: 'hi' } })
    expect(JSON.parse(String(reply.body).trim().split('\n').at(-1)!)).toMatchObject({ type: 'error', error_type: 'provider_unreachable' })
  } finally {
    await other.close()
  }
})

test('usage is priced by the api_id: /rlm-query reports the cost', async () => {
  fake.scripts.push({ text: ['4'], usage: { prompt_tokens: 1000, completion_tokens: 500 } })
  const reply = await p.call('POST', '/rlm-query', { json: { prompt: '2+2', runner: 'openai', model: 'fast' } })
  expect(reply.body).toEqual({ text: '4', cost_usd: (1000 * 1 + 500 * 2) / 1e6, is_error: false })
  expect(fake.received.at(-1)!.body).toMatchObject({ model: 'gpt-fast-2026', messages: [{ role: 'user', content: '2+2' }] })
  expect(fake.received.at(-1)!.body.tools).toBeUndefined()
})
