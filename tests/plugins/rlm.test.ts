import { afterAll, beforeAll, expect, test } from 'bun:test'
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts'
import { expectProblem } from '../helpers/problem.ts'

let p: TestPlatform
beforeAll(async () => {
  p = await startTestPlatform()
})
afterAll(() => p.close())

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

test('503 when the runner is not there, 504 when the model is too slow', async () => {
  expectProblem(await query({ prompt: 'x', runner: 'nowhere' }), 503, 'unavailable')
  const slow = await query({ prompt: '/slow 700 a b c', timeout_seconds: 1 })
  expectProblem(slow, 504, 'timeout')
})
