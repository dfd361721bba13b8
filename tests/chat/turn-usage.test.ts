import { afterAll, beforeAll, expect, test } from 'bun:test'
import { openAIRunnerEnv, startFakeOpenAI } from '../helpers/fake-openai.ts'
import { chatTurn, startChatTurn } from '../helpers/chat.ts'
import { startTestPlatform, type Principal, type TestPlatform } from '../helpers/platform.ts'
import { expectProblem } from '../helpers/problem.ts'

// Every chat turn closes its cost record once it has ended, however it ended: one UsageRecord with the tokens and
// price the provider reported over all the turn's model calls, its conversation and its outcome.
const fake = startFakeOpenAI()
let p: TestPlatform
let admin: Principal
let agent: string

beforeAll(async () => {
  // US$ 2 per million tokens in, 8 out.
  p = await startTestPlatform(openAIRunnerEnv(fake))
  admin = await p.createUser({ role: 'admin' })
  agent = (await p.call('POST', '/api/v1/AgentConfigRecord', { json: { name: 'priced', runner: 'openai', model: 'fast' } })).body.id
})
afterAll(async () => {
  await p.close()
  fake.stop()
})

/** The turn's usage rows, as the company's admin reads them. */
async function usageOf(conversation: string) {
  const reply = await p.client(admin).GET('/api/v1/UsageRecord', { params: { query: { conversation_id: `eq.${conversation}` } as never } })
  expect(reply.response.status).toBe(200)
  return reply.data!.data
}

test('an answered turn: its model calls summed over the tool rounds, priced, for the person who asked', async () => {
  const asker = await p.createUser()
  fake.scripts.push(
    { toolCall: { name: 'current_time', argumentChunks: ['{}'] }, usage: { prompt_tokens: 1000, completion_tokens: 100 } },
    { text: ['It is ', 'late.'], usage: { prompt_tokens: 1200, completion_tokens: 50 } },
  )
  const events = await chatTurn(p, { agent_id: agent, text: 'what time is it?' }, { as: asker })
  expect(events.at(-1)).toMatchObject({ type: 'message', text: 'It is late.' })
  const [record, ...more] = await usageOf(events[0]!.conversation_id)
  expect(more).toEqual([])
  expect(record).toMatchObject({ source: 'chat', runner: 'openai', model: 'fast', user_id: asker.userId, input_tokens: 2200, output_tokens: 150, outcome: 'complete' })
  expect(record!.cost_usd).toBeCloseTo((2200 * 2 + 150 * 8) / 1e6, 12)
})

test('a stopped turn is closed as aborted with what the provider reported by then', async () => {
  fake.scripts.push(
    { toolCall: { name: 'current_time', argumentChunks: ['{}'] }, usage: { prompt_tokens: 900, completion_tokens: 10 } },
    { text: Array.from({ length: 200 }, (_, i) => `w${i} `), delayMs: 20 },
  )
  const events = await chatTurn(p, { agent_id: agent, text: 'talk for a while' }, {
    onEvent: async (event, conversation) => {
      if (event.type === 'stream') await p.call('POST', '/api/chat/abort', { json: { conversation_id: conversation } })
    },
  })
  expect(events.at(-1)).toMatchObject({ type: 'aborted' })
  const [record] = await usageOf(events[0]!.conversation_id)
  expect(record).toMatchObject({ source: 'chat', input_tokens: 900, output_tokens: 10, outcome: 'aborted' })
})

test('a failed turn is closed as an error', async () => {
  fake.scripts.push({ status: 400, body: '{"error":{"message":"bad request","type":"invalid_request_error"}}', headers: { 'content-type': 'application/json' } })
  const events = await chatTurn(p, { agent_id: agent, text: 'this fails' })
  expect(events.at(-1)).toMatchObject({ type: 'error' })
  expect(await usageOf(events[0]!.conversation_id)).toMatchObject([{ source: 'chat', input_tokens: 0, output_tokens: 0, cost_usd: 0, outcome: 'error' }])
})

test('another company’s admin sees none of it, and a member of the company is refused the records', async () => {
  const events = await chatTurn(p, { agent_id: agent, text: 'hello' }, {})
  const conversation = events[0]!.conversation_id
  const outsider = await p.createUser({ companyId: await p.createCompany(), role: 'admin' })
  const theirs = await p.client(outsider).GET('/api/v1/UsageRecord', { params: { query: { conversation_id: `eq.${conversation}` } as never } })
  expect(theirs.data!.data).toEqual([])
  expectProblem(await p.client(await p.createUser()).GET('/api/v1/UsageRecord', {}), 403, 'forbidden')
})

test('the cost record is closed before the answer’s last event: the next message, sent on seeing it, is admitted', async () => {
  let conversation: string | undefined
  for (let i = 0; i < 10; i++) {
    fake.scripts.push({ text: ['ok'], usage: { prompt_tokens: 10, completion_tokens: 1 } })
    const turn = await startChatTurn(p, { agent_id: agent, text: `message ${i}`, ...(conversation ? { conversation_id: conversation } : {}) })
    expect(turn.response.status).toBe(200)
    for await (const event of turn.events()) {
      conversation ??= event.conversation_id
      // As a person would: the answer is there, so the next message goes at once, before the stream has closed.
      if (event.type === 'message') break
    }
  }
  expect(await usageOf(conversation!)).toHaveLength(10)
})
