import { expect, test } from 'bun:test'
import { usePlatform } from '../helpers/platform.ts'
import { expectProblem } from '../helpers/problem.ts'

// JSON may carry a lone surrogate as an escape; the store's UTF-8 cannot, and would keep U+FFFD in its place.

const p = usePlatform()

const post = (path: string, text: string) => p().call('POST', path, { body: text, headers: { 'content-type': 'application/json' } })

test('a lone surrogate anywhere in a body is refused, naming where, and nothing is stored', async () => {
  const refused = expectProblem(await post('/api/v1/AgentConfigRecord', '{"name":"lone-\\ud800-agent"}'), 422, 'validation_error')
  expect(refused.errors).toEqual([{ path: 'name', message: 'is not well-formed text (a lone surrogate)' }])
  const nested = expectProblem(await post('/api/v1/AgentConfigRecord', '{"name":"nested","starter_prompts":["fine","\\udc00 alone"]}'), 422, 'validation_error')
  expect(nested.errors).toEqual([{ path: 'starter_prompts.1', message: 'is not well-formed text (a lone surrogate)' }])
  const key = expectProblem(await post('/api/v1/AgentConfigRecord', '{"name":"key","plugins":{"\\ud800":1}}'), 422, 'validation_error')
  expect(key.errors![0]!.path).toBe('plugins.\ud800')
  const stored = await p().store.db.selectFrom('agent_configs').select('name').where('name', 'in', ['nested', 'key']).execute()
  expect(stored).toEqual([])
  expect(JSON.stringify(await p().store.db.selectFrom('agent_configs').select('name').execute())).not.toContain('lone-')
})

test('a pair of surrogates is one character and goes through, as do other escapes and malformed JSON’s own refusal', async () => {
  const made = await post('/api/v1/AgentConfigRecord', '{"name":"smile \\ud83d\\ude00 \\u00e9\\\\ud800"}')
  expect(made.status).toBe(201)
  // The pair became the emoji; an escaped backslash before "ud800" is text, not an escape.
  expect((made.body as { name: string }).name).toBe('smile 😀 é\\ud800')
  expectProblem(await post('/api/v1/AgentConfigRecord', '{"name":'), 400, 'bad_request')
})
