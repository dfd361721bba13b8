import { afterAll, beforeAll, expect, test } from 'bun:test'
import { startFakeAnthropic } from '../helpers/fake-anthropic.ts'
import { chatTurn, stopWhileRetrying, type ChatEvent } from '../helpers/chat.ts'
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts'
import { until } from '../helpers/until.ts'

const fake = startFakeAnthropic()
let p: TestPlatform
let agent: string

beforeAll(async () => {
  p = await startTestPlatform({
    SWITCHBOARD_PLUGIN_RUNNER_ANTHROPIC_BASE_URL: fake.url,
    SWITCHBOARD_PLUGIN_RUNNER_ANTHROPIC_API_KEY: 'sk-ant-test',
    SWITCHBOARD_PLUGIN_RUNNER_ANTHROPIC_MODELS: 'sonnet:claude-sonnet-test,haiku:claude-haiku-test',
    SWITCHBOARD_PLUGIN_RUNNER_ANTHROPIC_PRICES: 'claude-sonnet-test=3/15',
  })
  agent = (await p.call('POST', '/api/v1/AgentConfigRecord', { json: { name: 'claude', runner: 'anthropic', model: 'sonnet', personality: 'Be kind.' } })).body.id
})
afterAll(async () => {
  await p.close()
  fake.stop()
})

const turn = (text: string, onEvent?: (event: ChatEvent, conversation: string) => Promise<void>) => chatTurn(p, { agent_id: agent, text }, { onEvent })

test('streams text deltas, with the system prompt apart and the key and version headers', async () => {
  fake.scripts.push({ text: ['Hi', ' there'] })
  const events = await turn('hello')
  expect(events.filter((e) => e.type === 'stream').map((e) => e.text)).toEqual(['Hi', ' there'])
  expect(events.at(-1)).toMatchObject({ type: 'message', text: 'Hi there', agent: 'claude' })
  const sent = fake.received.at(-1)!
  // Sent the way Anthropic's own SDK sends them: the key as a bearer token, the API version it was made for.
  expect(sent.headers.get('authorization')).toBe('Bearer sk-ant-test')
  expect(sent.headers.get('anthropic-version')).toMatch(/^\d{4}-\d{2}-\d{2}$/)
  expect(sent.body).toMatchObject({ model: 'claude-sonnet-test', stream: true, max_tokens: 4096, system: 'Be kind.', messages: [{ role: 'user', content: [{ type: 'text', text: 'hello' }] }] })
  expect(sent.body.tools[0]).toMatchObject({ name: 'current_time', input_schema: { type: 'object' } })
})

test('tool use streamed as partial JSON is run, and the result goes back as a tool_result block', async () => {
  fake.scripts.push({ toolUse: { name: 'current_time', jsonChunks: ['{"time_zone":', ' "UTC"}'] } }, { text: ['Done.'] })
  const events = await turn('time?')
  expect(events.map((e) => e.type)).toEqual(['conversation', 'typing', 'tool_call', 'tool_result', 'stream', 'stream_end', 'message'])
  const messages = fake.received.at(-1)!.body.messages
  expect(messages.at(-2)).toEqual({ role: 'assistant', content: [{ type: 'tool_use', id: 'toolu_1', name: 'current_time', input: { time_zone: 'UTC' } }] })
  expect(messages.at(-1).role).toBe('user')
  expect(messages.at(-1).content[0]).toMatchObject({ type: 'tool_result', tool_use_id: 'toolu_1' })
})

test.each([
  [401, 'auth', 1],
  [400, 'provider_error', 1],
  [429, 'rate_limited', 3],
  [529, 'provider_unavailable', 3],
])('HTTP %i is error_type %s, with the provider’s words in details, after %i request(s)', async (status, errorType, requests) => {
  const before = fake.received.length
  fake.scripts.push({ status, body: `{"type":"error","error":{"type":"x","message":"said ${status}"}}`, headers: { 'retry-after': '0' }, times: requests })
  expect((await turn('hi')).at(-1)).toMatchObject({ type: 'error', error_type: errorType, details: expect.stringContaining(`said ${status}`) })
  expect(fake.received.length - before).toBe(requests)
})

test('529 (overloaded) then 200: the runner asks again and the answer streams', async () => {
  fake.scripts.push({ status: 529, body: '{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}' }, { text: ['Back', ' again'] })
  const events = await turn('hi')
  expect(events.at(-1)).toMatchObject({ type: 'message', text: 'Back again' })
  const [refused, retried] = fake.received.slice(-2)
  expect(retried!.body).toEqual(refused!.body)
})

test('429 then 200 waits the retry-after the provider names', async () => {
  fake.scripts.push({ status: 429, body: '{"type":"error","error":{"type":"rate_limit_error","message":"slow"}}', headers: { 'retry-after': '1' } }, { text: ['ok'] })
  expect((await turn('hi')).at(-1)).toMatchObject({ type: 'message', text: 'ok' })
  const [refused, retried] = fake.received.slice(-2)
  // A lower bound only: the retry may come late on a loaded machine, never before the provider said.
  expect(retried!.at - refused!.at).toBeGreaterThanOrEqual(950)
})

test('an abort while the runner waits to retry ends the turn at once, and nothing is sent again', async () => {
  fake.scripts.push({ status: 529, body: '{"type":"error","error":{"type":"overloaded_error","message":"Overloaded"}}', headers: { 'retry-after': '25' } }, { text: ['too late'] })
  const { events, elapsedMs, sent } = await stopWhileRetrying(p, (onEvent) => turn('hi', onEvent), () => fake.received.length)
  expect(events.at(-1)).toMatchObject({ type: 'aborted' })
  // The wait was 25 s: ending well before it is ending because of the abort.
  expect(elapsedMs).toBeLessThan(15_000)
  expect(sent).toBe(1)
  fake.scripts.length = 0
})

test('an error event inside the stream ends the turn with that error', async () => {
  fake.scripts.push({ streamError: { type: 'overloaded_error', message: 'Overloaded' } })
  expect((await turn('hi')).at(-1)).toMatchObject({ type: 'error', error_type: 'provider_unavailable', details: 'overloaded_error: Overloaded' })
})

test('abort mid-stream hangs up on the provider within a second', async () => {
  fake.scripts.push({ text: ['a ', 'b ', 'c ', 'd ', 'e'], delayMs: 200 })
  let abortedAt = 0
  const events = await turn('slowly', async (event, conversation) => {
    if (event.type === 'stream' && !abortedAt) {
      abortedAt = Date.now()
      await p.call('POST', '/api/chat/abort', { json: { conversation_id: conversation } })
    }
  })
  expect(events.at(-1)!.type).toBe('aborted')
  const closedAt = await until(() => fake.received.at(-1)!.closedAt, { what: 'the provider to see its connection closed' })
  expect(closedAt - abortedAt).toBeLessThan(1000)
})

test('usage is priced by api_id', async () => {
  fake.scripts.push({ text: ['4'], usage: { input_tokens: 2000, output_tokens: 100 } })
  const reply = await p.call('POST', '/rlm-query', { json: { prompt: '2+2', runner: 'anthropic', model: 'sonnet' } })
  expect(reply.body).toEqual({ text: '4', cost_usd: (2000 * 3 + 100 * 15) / 1e6, is_error: false })
})
