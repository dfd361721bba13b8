import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { InMemorySpanExporter, type ReadableSpan } from '@opentelemetry/sdk-trace'
import { systemClock } from '../../src/clock.ts'
import { silentLogger } from '../../src/logger.ts'
import { chatTurn } from '../helpers/chat.ts'
import { startFakeOpenAI } from '../helpers/fake-openai.ts'
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts'
import { until } from '../helpers/until.ts'
import { fieldsOf } from '../helpers/typed-call.ts'
import { join } from 'node:path'

// One trace from the caller to the provider: the request, the turn, each runner call and tool call, and the
// traceparent the provider receives belongs to it.
const fake = startFakeOpenAI()
const OPENAI = { SWITCHBOARD_PLUGIN_RUNNER_OPENAI_BASE_URL: fake.url, SWITCHBOARD_PLUGIN_RUNNER_OPENAI_MODELS: 'fast:gpt-fast-2026' }
afterAll(() => fake.stop())

describe('with an exporter', () => {
  const exporter = new InMemorySpanExporter()
  let p: TestPlatform
  let agent: string
  beforeAll(async () => {
    p = await startTestPlatform(OPENAI, systemClock, undefined, silentLogger, exporter)
    agent = (await p.call('POST', '/api/v1/AgentConfigRecord', { json: { name: 'traced', runner: 'openai', model: 'fast' } })).body.id
  })
  afterAll(() => p.close())

  const named = (spans: ReadableSpan[], name: string) => spans.filter((s) => s.name === name)

  test('a turn with a tool call: request → turn → runner calls and tool call, one trace id, and the provider got its traceparent', async () => {
    exporter.reset()
    fake.scripts.push({ toolCall: { name: 'current_time', argumentChunks: ['{}'] } }, { text: ['It is late.'] })
    const sentBefore = fake.received.length
    const events = await chatTurn(p, { agent_id: agent, text: 'what time is it?' })
    expect(events.at(-1)).toMatchObject({ type: 'message', text: 'It is late.' })
    const spans = exporter.getFinishedSpans()
    const [request] = named(spans, 'POST /api/chat')
    const [turn] = named(spans, 'chat turn')
    const runnerCalls = named(spans, 'runner call')
    const [tool] = named(spans, 'tool call')
    expect(request && turn && tool).toBeTruthy()
    expect(runnerCalls).toHaveLength(2)
    const traceId = request!.spanContext().traceId
    for (const span of [turn!, tool!, ...runnerCalls]) expect(span.spanContext().traceId).toBe(traceId)
    expect(turn!.parentSpanContext?.spanId).toBe(request!.spanContext().spanId)
    for (const span of [tool!, ...runnerCalls]) expect(span.parentSpanContext?.spanId).toBe(turn!.spanContext().spanId)
    expect(request!.attributes).toMatchObject({ 'http.route': '/api/chat', 'http.response.status_code': 200 })
    expect(tool!.attributes).toMatchObject({ 'gen_ai.tool.name': 'current_time' })
    // Each request to the provider carried the traceparent of its own runner call.
    const sent = fake.received.slice(sentBefore).map((r) => r.traceparent)
    expect(new Set(sent)).toEqual(new Set(runnerCalls.map((span) => `00-${traceId}-${span.spanContext().spanId}-01`)))
  })

  test('an attribute a model chose (a tool’s name) is cut to 256 characters', async () => {
    exporter.reset()
    const name = `tool_${'x'.repeat(2000)}`
    fake.scripts.push({ toolCall: { name, argumentChunks: ['{}'] } }, { text: ['ok'] })
    await chatTurn(p, { agent_id: agent, text: 'call a tool that is not there' })
    const [tool] = named(exporter.getFinishedSpans(), 'tool call')
    expect(tool!.attributes['gen_ai.tool.name']).toBe(name.slice(0, 256))
  })

  test('a caller’s traceparent is honoured: the request joins the caller’s trace', async () => {
    exporter.reset()
    const callerTrace = '4bf92f3577b34da6a3ce929d0e0e4736'
    const reply = await p.call('GET', '/api/v1/AgentConfigRecord', { headers: { traceparent: `00-${callerTrace}-00f067aa0ba902b7-01` } })
    expect(reply.status).toBe(200)
    const [span] = named(exporter.getFinishedSpans(), 'GET /api/v1/AgentConfigRecord')
    expect(span?.spanContext().traceId).toBe(callerTrace)
    expect(span?.parentSpanContext?.spanId).toBe('00f067aa0ba902b7')
  })
})

test('spans go to the OTLP endpoint of OTEL_EXPORTER_OTLP_ENDPOINT, over HTTP, by the time the platform has stopped', async () => {
  const posts: Array<{ path: string; type: string | null; body: string; headers: Headers }> = []
  const receiver = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    async fetch(req) {
      posts.push({ path: new URL(req.url).pathname, type: req.headers.get('content-type'), body: await req.text(), headers: req.headers })
      return new Response('{}', { headers: { 'content-type': 'application/json' } })
    },
  })
  try {
    const p = await startTestPlatform({ OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${receiver.port}`, OTEL_EXPORTER_OTLP_HEADERS: 'x-otlp-key=secret%20key' })
    expect((await p.call('GET', '/api/v1/AgentConfigRecord')).status).toBe(200)
    await p.close()
    expect(posts.length).toBeGreaterThan(0)
    // OTLP/HTTP with its JSON encoding: resource spans, then scope spans, then the spans.
    expect(posts[0]).toMatchObject({ path: '/v1/traces', type: 'application/json' })
    const sent = posts.flatMap((post) => (JSON.parse(post.body) as { resourceSpans: Array<{ resource: { attributes: unknown[] }; scopeSpans: Array<{ spans: Array<{ name: string }> }> }> }).resourceSpans)
    expect(sent.flatMap((r) => r.scopeSpans.flatMap((s) => s.spans.map((span) => span.name)))).toContain('GET /api/v1/AgentConfigRecord')
    expect(sent[0]!.resource.attributes).toContainEqual({ key: 'service.name', value: { stringValue: 'switchboard' } })
    expect(posts[0]!.headers.get('x-otlp-key')).toBe('secret key')
  } finally {
    receiver.stop(true)
  }
})

test('without an exporter nothing is traced, and no traceparent goes to the provider', async () => {
  const p = await startTestPlatform(OPENAI)
  try {
    expect(p.services.tracing.enabled).toBe(false)
    const agent = (await p.call('POST', '/api/v1/AgentConfigRecord', { json: { name: 'untraced', runner: 'openai', model: 'fast' } })).body.id
    fake.scripts.push({ text: ['ok'] })
    await chatTurn(p, { agent_id: agent, text: 'hi' })
    expect(fake.received.at(-1)!.traceparent).toBeNull()
  } finally {
    await p.close()
  }
})

describe('work no request made', () => {
  const exporter = new InMemorySpanExporter()
  let p: TestPlatform
  const SECRET = 'loopback-shared-secret'
  beforeAll(async () => {
    p = await startTestPlatform({ SWITCHBOARD_PLUGIN_PATHS: join(import.meta.dir, '..', 'fixtures', 'plugins', 'channels'), SWITCHBOARD_CHANNEL_RETRY_MS: '20' }, systemClock, undefined, silentLogger, exporter)
  })
  afterAll(() => p.close())

  test('a channel delivery and its reply are spans, each a trace of its own, naming the channel', async () => {
    expect((await p.call('POST', '/api/plugins/channel-telegram/disable')).status).toBe(200)
    expect((await p.call('PUT', '/api/vault/secrets', { json: { scope: 'company', name: 'loop/secret', value: SECRET } })).status).toBe(200)
    const agent = fieldsOf((await p.call('POST', '/api/v1/AgentConfigRecord', { json: { name: 'courier', runner: 'echo', model: 'echo-1', channels: { telegram: { bot_token_secret: 'loop/secret' } } } })).body).id as string
    const person = await p.createUser()
    expect((await p.call('POST', '/api/v1/UserPlatform', { json: { user_id: person.userId, platform: 'telegram', platform_user_id: '1001' } })).status).toBe(201)
    exporter.reset()
    const inbound = { deliveryId: `d-${Date.now()}`, sender: { id: '1001', username: 'tg1001' }, thread: { key: '1001', target: { chat_id: '1001' } }, text: 'hello there' }
    expect((await p.call('POST', `/channels/loopback/${agent}`, { json: inbound, headers: { 'x-loopback-secret': SECRET }, as: null })).status).toBe(200)
    await until(() => exporter.getFinishedSpans().some((s) => s.name === 'channel reply'), { what: 'the reply to be sent' })
    const spans = exporter.getFinishedSpans()
    const [delivery] = spans.filter((s) => s.name === 'channel delivery')
    const [reply] = spans.filter((s) => s.name === 'channel reply')
    expect(delivery!.attributes).toMatchObject({ 'switchboard.channel': 'telegram', 'switchboard.attempt': 1 })
    expect(reply!.attributes).toMatchObject({ 'switchboard.channel': 'telegram' })
    expect(delivery!.parentSpanContext).toBeUndefined()
    // The turn the delivery ran is inside the delivery's trace.
    const [turn] = spans.filter((s) => s.name === 'chat turn')
    expect(turn!.spanContext().traceId).toBe(delivery!.spanContext().traceId)
  })

  test('a background task’s run is a span', async () => {
    expect((await p.call('POST', '/api/v1/McpPermission', { json: { server: 'mcp-planning', tool: '*', effect: 'allow' } })).status).toBe(201)
    exporter.reset()
    // The tool fails on its arguments (no plan named): the run is a span whichever way it ends.
    const task = await p.services.tasks.run({ user: { userId: p.root.userId, companyId: p.root.companyId }, tool: 'mcp-planning__plan_update', arguments: {} })
    await until(() => exporter.getFinishedSpans().some((s) => s.name === 'background task'), { what: 'the task to end' })
    const [span] = exporter.getFinishedSpans().filter((s) => s.name === 'background task')
    expect(span!.attributes).toMatchObject({ 'switchboard.task': task.id })
  })
})
