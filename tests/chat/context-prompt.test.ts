import { afterAll, beforeAll, expect, test } from 'bun:test'
import { chatTurn } from '../helpers/chat.ts'
import { openAIRunnerEnv, startFakeOpenAI } from '../helpers/fake-openai.ts'
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts'
import { fieldsOf } from '../helpers/typed-call.ts'

// What the model reads: the agent's personality and the conversation's context prompt as the system message,
// before the conversation so far and the new message; a changed context prompt on the very next turn.
const fake = startFakeOpenAI()
let p: TestPlatform
let agent: string

beforeAll(async () => {
  p = await startTestPlatform(openAIRunnerEnv(fake))
  agent = fieldsOf((await p.call('POST', '/api/v1/AgentConfigRecord', { json: { name: 'ctx', runner: 'openai', model: 'fast', personality: 'You answer briefly.' } })).body).id as string
})
afterAll(async () => {
  await p.close()
  fake.stop()
})

type Sent = { messages: Array<{ role: string; content: string }> }

test('a conversation’s context prompt reaches the model with the personality, and a change reaches the next turn', async () => {
  const conversation = fieldsOf((await p.call('POST', '/api/v1/WebchatConversation', { json: { agent_id: agent, title: 'Q3', context_prompt: 'Figures are in EUR.' } })).body).id as string
  fake.scripts.push({ text: ['Noted.'] })
  await chatTurn(p, { conversation_id: conversation, text: 'What currency?' })
  const first = fake.received.at(-1)!.body as Sent
  expect(first.messages[0]).toEqual({ role: 'system', content: 'You answer briefly.\n\nFigures are in EUR.' })
  expect(first.messages.at(-1)).toEqual({ role: 'user', content: 'What currency?' })

  expect((await p.call('PATCH', `/api/v1/WebchatConversation/${conversation}`, { json: { context_prompt: 'Figures are in USD.' } })).status).toBe(200)
  fake.scripts.push({ text: ['Noted again.'] })
  await chatTurn(p, { conversation_id: conversation, text: 'And now?' })
  const second = fake.received.at(-1)!.body as Sent
  expect(second.messages[0]!.content).toBe('You answer briefly.\n\nFigures are in USD.')
  expect(second.messages.map((m) => m.role)).toEqual(['system', 'user', 'assistant', 'user'])
})

test('without a context prompt the system message is the personality alone', async () => {
  fake.scripts.push({ text: ['Hi.'] })
  await chatTurn(p, { agent_id: agent, text: 'hello' })
  expect((fake.received.at(-1)!.body as Sent).messages[0]).toEqual({ role: 'system', content: 'You answer briefly.' })
})
