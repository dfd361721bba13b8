import { afterAll, beforeAll, expect, test } from 'bun:test'
import { join } from 'node:path'
import { deaf } from '../fixtures/plugins/deaf-runner/deaf/index.ts'
import { chatTurn } from '../helpers/chat.ts'
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts'

// Stop is a guarantee, not a hint: the kernel settles a stopped turn itself, even when its runner never looks at
// the signal, and the conversation takes the next message at once.
let p: TestPlatform
let agent: string

beforeAll(async () => {
  p = await startTestPlatform({ SWITCHBOARD_PLUGIN_PATHS: join(import.meta.dir, '..', 'fixtures', 'plugins', 'deaf-runner') })
  agent = (await p.call('POST', '/api/v1/AgentConfigRecord', { json: { name: 'sleeper', runner: 'deaf', model: 'deaf-1' } })).body.id
})
afterAll(async () => {
  deaf.wake()
  await p.close()
})

test('a turn whose runner ignores the stop ends aborted while the runner still sleeps, and the conversation goes on', async () => {
  let asleepWhenAborted: boolean | undefined
  const events = await chatTurn(p, { agent_id: agent, text: 'hello' }, {
    onEvent: async (event, conversation) => {
      if (event.type === 'stream') await p.call('POST', '/api/chat/abort', { json: { conversation_id: conversation } })
      if (event.type === 'aborted') asleepWhenAborted = deaf.asleep
    },
  })
  expect(events.at(-1)).toMatchObject({ type: 'aborted' })
  // The runner had not woken: the turn did not wait for it.
  expect(asleepWhenAborted).toBe(true)
  const conversation = events[0]!.conversation_id
  const stored = (await p.call('GET', `/api/v1/WebchatMessage?conversation_id=eq.${conversation}&role=eq.agent`)).body.data
  expect(stored).toMatchObject([{ status: 'aborted', text: 'Listening' }])
  // The conversation's lock is free: the next message is taken (and stopped the same way).
  const next = await chatTurn(p, { conversation_id: conversation, text: 'again' }, {
    onEvent: async (event) => {
      if (event.type === 'stream') await p.call('POST', '/api/chat/abort', { json: { conversation_id: conversation } })
    },
  })
  expect(next.at(-1)).toMatchObject({ type: 'aborted' })
  // Woken at last, the runner's late words go nowhere.
  deaf.wake()
  const after = (await p.call('GET', `/api/v1/WebchatMessage?conversation_id=eq.${conversation}&role=eq.agent`)).body.data
  expect(after.map((m: { text: string }) => m.text)).toEqual(['Listening', 'Listening'])
})
