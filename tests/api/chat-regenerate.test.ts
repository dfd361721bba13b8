import { expect, test } from 'bun:test'
import { history } from '../../src/chat/messages.ts'
import { chatTurn, type ChatEvent } from '../helpers/chat.ts'
import { usePlatform, type Principal } from '../helpers/platform.ts'

const p = usePlatform()

async function agentId(): Promise<string> {
  return (await p().call('POST', '/api/v1/AgentConfigRecord', { json: { name: `again-${crypto.randomUUID().slice(0, 6)}` } })).body.id
}

/** POST /api/chat/regenerate as `as`: the status, and the events when it streamed. */
async function regenerate(as: Principal | null, json: unknown): Promise<{ status: number; events: ChatEvent[]; body?: any }> {
  const response = await p().api.request('/api/chat/regenerate', {
    method: 'POST',
    headers: { ...(as ? { authorization: `Bearer ${as.token}` } : {}), 'content-type': 'application/json' },
    body: JSON.stringify(json),
  })
  if (response.status !== 200) return { status: response.status, events: [], body: await response.json() }
  const text = await response.text()
  return { status: 200, events: text.trim().split('\n').map((line) => JSON.parse(line)) }
}

const messagesOf = async (as: Principal, conversationId: string) =>
  (await p().call('GET', `/api/v1/WebchatMessage?conversation_id=eq.${conversationId}&order=id.asc`, { as })).body.data as any[]

test('the latest answer is answered again as a version of it; the earlier one stays, out of what the model reads', async () => {
  const person = await p().createUser()
  const first = await chatTurn(p(), { agent_id: await agentId(), text: 'what is two and two' }, { as: person })
  const conversation = first[0]!.conversation_id as string
  const original = first.find((e) => e.type === 'message')!.message_id
  const again = await regenerate(person, { conversation_id: conversation })
  expect(again.status).toBe(200)
  const answer = again.events.find((e) => e.type === 'message')!
  expect(answer).toMatchObject({ text: 'Echo: what is two and two', version_of: original })
  // Once more: still a version of the first.
  const third = (await regenerate(person, { conversation_id: conversation })).events.find((e) => e.type === 'message')!
  expect(third.version_of).toBe(original)

  const stored = await messagesOf(person, conversation)
  expect(stored.map((m) => [m.role, m.version_of, m.superseded_at !== null])).toEqual([
    ['user', null, false],
    ['agent', null, true],
    ['agent', original, true],
    ['agent', original, false],
  ])
  // The question was stored once; what the model reads next holds it and only the current answer.
  expect(await history(p().store.db, conversation)).toEqual([
    { role: 'user', content: 'what is two and two' },
    { role: 'assistant', content: 'Echo: what is two and two' },
  ])
})

test('with text, the question is edited first and answered as edited', async () => {
  const person = await p().createUser()
  const first = await chatTurn(p(), { agent_id: await agentId(), text: 'helo' }, { as: person })
  const conversation = first[0]!.conversation_id as string
  const again = await regenerate(person, { conversation_id: conversation, text: 'hello, properly spelt' })
  expect(again.events.find((e) => e.type === 'message')!.text).toBe('Echo: hello, properly spelt')
  const stored = await messagesOf(person, conversation)
  expect(stored[0]).toMatchObject({ role: 'user', text: 'hello, properly spelt' })
  expect(stored.filter((m) => m.role === 'user')).toHaveLength(1)
})

test('refused: another participant’s question (403), nothing to answer again (409), someone else’s conversation (404), no credentials (401), a bad body (422)', async () => {
  const [a, b] = [await p().createUser(), await p().createUser()]
  const first = await chatTurn(p(), { agent_id: await agentId(), text: 'mine' }, { as: a })
  const conversation = first[0]!.conversation_id as string
  const outsider = await p().createUser({ companyId: await p().createCompany() })
  expect((await regenerate(outsider, { conversation_id: conversation })).status).toBe(404)
  expect((await regenerate(b, { conversation_id: conversation })).status).toBe(404)
  expect((await p().call('POST', '/api/v1/WebchatParticipant', { json: { conversation_id: conversation, user_id: b.userId }, as: a })).status).toBe(201)
  const theirs = await regenerate(b, { conversation_id: conversation, text: 'not yours to change' })
  expect(theirs.status).toBe(403)
  expect((await messagesOf(a, conversation))[0].text).toBe('mine')
  // A question nobody answered yet (a shared conversation without a mention) is not something to answer again.
  await chatTurn(p(), { conversation_id: conversation, text: 'a note for B' }, { as: a })
  const nothing = await regenerate(a, { conversation_id: conversation })
  expect(nothing.status).toBe(409)
  expect(nothing.body.detail).toContain('nothing to answer again')
  expect((await regenerate(null, { conversation_id: conversation })).status).toBe(401)
  const empty = await regenerate(a, { conversation_id: conversation, text: '' })
  expect([empty.status, empty.body.code, empty.body.errors[0].path]).toEqual([422, 'validation_error', 'text'])
  expect((await regenerate(a, { conversation_id: 'not-a-uuid' })).status).toBe(422)
})
