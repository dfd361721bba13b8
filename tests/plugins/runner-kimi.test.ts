import { afterAll, beforeAll, expect, test } from 'bun:test'
import { startFakeOpenAI } from '../helpers/fake-openai.ts'
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts'

const fake = startFakeOpenAI()
let p: TestPlatform
beforeAll(async () => {
  p = await startTestPlatform({ SWITCHBOARD_PLUGIN_RUNNER_KIMI_BASE_URL: fake.url, SWITCHBOARD_PLUGIN_RUNNER_KIMI_API_KEY: 'moonshot-key', SWITCHBOARD_PLUGIN_RUNNER_KIMI_MODELS: 'k2:kimi-k2-test' })
})
afterAll(async () => {
  await p.close()
  fake.stop()
})

test('backend=api speaks the OpenAI-compatible protocol with the Moonshot key and the model’s api_id', async () => {
  fake.scripts.push({ text: ['Kimi ', 'here'] })
  const reply = await p.call('POST', '/rlm-query', { json: { prompt: 'who are you', runner: 'kimi' } })
  expect(reply.body).toEqual({ text: 'Kimi here', cost_usd: 0, is_error: false })
  expect(fake.received.at(-1)!.authorization).toBe('Bearer moonshot-key')
  expect(fake.received.at(-1)!.body.model).toBe('kimi-k2-test')
})
