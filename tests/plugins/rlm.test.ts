import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { startFakeOpenAI } from '../helpers/fake-openai.ts'
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts'
import { expectProblem } from '../helpers/problem.ts'

const fake = startFakeOpenAI()
let p: TestPlatform
beforeAll(async () => {
  p = await startTestPlatform({
    SWITCHBOARD_PLUGIN_RUNNER_OPENAI_BASE_URL: fake.url,
    SWITCHBOARD_PLUGIN_RUNNER_OPENAI_API_KEY: 'sk-test-key',
    SWITCHBOARD_PLUGIN_RUNNER_OPENAI_MODELS: 'fast:gpt-fast-2026',
    SWITCHBOARD_PLUGIN_RUNNER_OPENAI_PRICES: 'gpt-fast-2026=1/2',
  })
})
afterAll(async () => {
  await p.close()
  fake.stop()
})

const query = (json: unknown, as = p.root as typeof p.root | null) => p.call('POST', '/rlm-query', { json, as })

test('one prompt, one answer, with its cost', async () => {
  const reply = await query({ prompt: 'what is two and two' })
  expect(reply.status).toBe(200)
  expect(reply.body).toEqual({ text: 'Echo: what is two and two', cost_usd: 0, is_error: false })
  expect((await query({ prompt: 'hi', runner: 'echo', model: 'echo-1' })).body.text).toBe('Echo: hi')
})

test('no tools are offered: a model asking for one answers nothing', async () => {
  expect((await query({ prompt: '/tool current_time' })).body).toEqual({ text: '', cost_usd: 0, is_error: false })
})

test('a model error comes back as is_error, not as an HTTP failure', async () => {
  const reply = await query({ prompt: '/tool x {not json}' })
  expect(reply.status).toBe(200)
  expect(reply.body).toEqual({ text: 'The tool arguments are not JSON.', cost_usd: 0, is_error: true })
})

test('401 without credentials, 400 for malformed JSON, 422 for a bad query or model', async () => {
  expectProblem(await query({ prompt: 'x' }, null), 401, 'unauthorized')
  expectProblem(await p.call('POST', '/rlm-query', { body: '{"prompt":', headers: { 'content-type': 'application/json' } }), 400, 'bad_request')
  expectProblem(await query({ prompt: '' }), 422, 'validation_error')
  expectProblem(await query({ prompt: 'x', tools: [] }), 422, 'validation_error')
  expectProblem(await query({ prompt: 'x', model: 'gpt-9' }), 422, 'validation_error')
})

test('422 when the caller names a runner that is not there, 503 when the configured default is not, 504 when the model is too slow', async () => {
  const named = expectProblem(await query({ prompt: 'x', runner: '<b>nowhere</b>' }), 422, 'validation_error')
  // The caller's own value is not echoed back.
  expect(JSON.stringify(named)).not.toContain('nowhere')
  const misconfigured = await startTestPlatform({ SWITCHBOARD_PLUGIN_RLM_RUNNER: 'nowhere' })
  try {
    const problem = expectProblem(await misconfigured.call('POST', '/rlm-query', { json: { prompt: 'x' } }), 503, 'unavailable')
    expect(problem.detail).toContain('default runner')
  } finally {
    await misconfigured.close()
  }
  const slow = await query({ prompt: '/slow 700 a b c', timeout_seconds: 1 })
  expectProblem(slow, 504, 'timeout')
})

test('a user of no company may not query: there is no company to charge', async () => {
  const loner = await p.createUser({ companyId: null })
  const problem = expectProblem(await query({ prompt: 'x' }, loner), 403, 'forbidden')
  expect(problem.detail).toContain('not a member of any')
})

test('each query is recorded for the caller’s company, which only its admins read and nobody there changes', async () => {
  const company = await p.createCompany()
  const admin = await p.createUser({ companyId: company, role: 'admin' })
  const member = await p.createUser({ companyId: company, role: 'member' })
  const otherAdmin = await p.createUser({ companyId: await p.createCompany(), role: 'admin' })
  fake.scripts.push({ text: ['forty', ' two'], usage: { prompt_tokens: 1000, completion_tokens: 500 } })
  const reply = await query({ prompt: 'the answer?', runner: 'openai', model: 'fast' }, member)
  expect(reply.status).toBe(200)
  expect(reply.body.text).toBe('forty two')
  expect(reply.body.cost_usd).toBeCloseTo(0.002, 12)

  const listed = await p.call('GET', '/api/v1/UsageRecord', { as: admin })
  expect(listed.status).toBe(200)
  expect(listed.body.data).toEqual([
    expect.objectContaining({ company_id: company, user_id: member.userId, source: 'rlm', runner: 'openai', model: 'fast', input_tokens: 1000, output_tokens: 500 }),
  ])
  const record = listed.body.data[0]!
  expect(record.cost_usd).toBeCloseTo(0.002, 12)

  expect((await p.call('GET', '/api/v1/UsageRecord', { as: otherAdmin })).body.data).toEqual([])
  expectProblem(await p.call('GET', `/api/v1/UsageRecord/${record.id}`, { as: otherAdmin }), 404, 'not_found')
  expectProblem(await p.call('GET', '/api/v1/UsageRecord', { as: member }), 403, 'forbidden')
  expectProblem(await p.call('PATCH', `/api/v1/UsageRecord/${record.id}`, { as: admin, json: { cost_usd: 0 } }), 403, 'forbidden')
  expectProblem(await p.call('DELETE', `/api/v1/UsageRecord/${record.id}`, { as: admin }), 403, 'forbidden')
  expectProblem(await p.call('POST', '/api/v1/UsageRecord', { as: admin, json: { source: 'rlm', runner: 'openai', model: 'fast' } }), 403, 'forbidden')
})

test('a query that times out is still recorded', async () => {
  const company = await p.createCompany()
  const member = await p.createUser({ companyId: company })
  expectProblem(await query({ prompt: '/slow 700 a b c', timeout_seconds: 1 }, member), 504, 'timeout')
  const [record] = (await p.call('GET', `/api/v1/UsageRecord?company_id=eq.${company}`, { headers: { 'x-switchboard-company': company } })).body.data
  expect(record).toMatchObject({ user_id: member.userId, runner: 'echo', model: 'echo-1', cost_usd: 0 })
})

describe('under a tight API rate', () => {
  let tight: TestPlatform
  beforeAll(async () => {
    tight = await startTestPlatform({ SWITCHBOARD_API_RATE_BURST: '2', SWITCHBOARD_API_RATE_PER_SECOND: '0.01' })
  })
  afterAll(() => tight.close())

  test('queries draw on the same per-user budget as /api/v1, and are refused with Retry-After when it is spent', async () => {
    const user = await tight.createUser()
    const other = await tight.createUser()
    const ask = (as = user) => tight.call('POST', '/rlm-query', { json: { prompt: 'hi' }, as })
    expect((await ask()).status).toBe(200)
    expect((await tight.call('GET', '/api/v1/AgentConfigRecord', { as: user })).status).toBe(200)
    const limited = await ask()
    expectProblem(limited, 429, 'rate_limited')
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0)
    expect((await ask(other)).status).toBe(200)
  })
})
