import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { systemClock } from '../../src/clock.ts'
import { chatTurn } from '../helpers/chat.ts'
import { CLUSTER_NEEDS_POSTGRES } from '../helpers/cluster.ts'
import { createPostgresDatabase, openTestStore, TEST_DATABASE_URL } from '../helpers/database.ts'
import { startTestPlatform, usePlatform, type Principal, type TestPlatform } from '../helpers/platform.ts'

const p = usePlatform()

async function upload(as: Principal, conversationId: string, file: File, on: TestPlatform = p()) {
  const form = new FormData()
  form.set('conversation_id', conversationId)
  form.set('file', file)
  const reply = await on.call('POST', '/api/chat/documents', { body: form, as })
  expect(reply.status).toBe(201)
  return reply.body
}

async function conversation(as: Principal, on: TestPlatform = p()) {
  const agent = await on.call('POST', '/api/v1/AgentConfigRecord', { json: { name: `reader-${crypto.randomUUID().slice(0, 6)}` } })
  return (await on.call('POST', '/api/v1/WebchatConversation', { json: { agent_id: agent.body.id }, as })).body.id as string
}

const answerOf = (events: Array<{ type: string; text?: string }>) => events.find((e) => e.type === 'message')?.text

test('a document attached earlier reaches the model on every later turn', async () => {
  const a = await p().createUser()
  const id = await conversation(a)
  await upload(a, id, new File(['Agenda\nThe launch codeword is marmalade.\n'], 'agenda.txt', { type: 'text/plain' }))
  expect(answerOf(await chatTurn(p(), { conversation_id: id, text: '/quote codeword' }, { as: a }))).toBe('Quoted: The launch codeword is marmalade.')
  expect(answerOf(await chatTurn(p(), { conversation_id: id, text: 'something else' }, { as: a }))).toBe('Echo: something else')
  expect(answerOf(await chatTurn(p(), { conversation_id: id, text: '/quote marmalade' }, { as: a }))).toBe('Quoted: The launch codeword is marmalade.')
  // Another conversation's documents are not this one's.
  const other = await conversation(a)
  expect(answerOf(await chatTurn(p(), { conversation_id: other, text: '/quote marmalade' }, { as: a }))).toBe('Not in my context: marmalade')
})

test('a document uploaded after turns without any is given to the model on the very next turn', async () => {
  const a = await p().createUser()
  const id = await conversation(a)
  // These turns find the conversation without documents, which the platform remembers.
  expect(answerOf(await chatTurn(p(), { conversation_id: id, text: '/quote marmalade' }, { as: a }))).toBe('Not in my context: marmalade')
  expect(answerOf(await chatTurn(p(), { conversation_id: id, text: '/quote marmalade' }, { as: a }))).toBe('Not in my context: marmalade')
  await upload(a, id, new File(['The launch codeword is marmalade.\n'], 'agenda.txt', { type: 'text/plain' }))
  expect(answerOf(await chatTurn(p(), { conversation_id: id, text: '/quote marmalade' }, { as: a }))).toBe('Quoted: The launch codeword is marmalade.')
})

describe('across processes', () => {
  if (!TEST_DATABASE_URL) {
    test.skip(`a document uploaded on one process is given to the model by another on the next turn (${CLUSTER_NEEDS_POSTGRES})`, () => {})
    return
  }
  let database: Awaited<ReturnType<typeof createPostgresDatabase>>
  let first: TestPlatform
  let second: TestPlatform
  beforeAll(async () => {
    database = await createPostgresDatabase()
    first = await startTestPlatform({}, systemClock, openTestStore(database))
    second = await startTestPlatform({}, systemClock, openTestStore(database))
  })
  afterAll(async () => {
    await first?.close()
    await second?.close()
    await database?.drop()
  })

  test('a document uploaded on one process is given to the model by another on the next turn', async () => {
    const a = await first.createUser()
    const id = await conversation(a, first)
    expect(answerOf(await chatTurn(first, { conversation_id: id, text: '/quote marmalade' }, { as: a }))).toBe('Not in my context: marmalade')
    await upload(a, id, new File(['The launch codeword is marmalade.\n'], 'agenda.txt', { type: 'text/plain' }), second)
    // At once: the upload answered only once every process had forgotten that the conversation had none.
    expect(answerOf(await chatTurn(first, { conversation_id: id, text: '/quote marmalade' }, { as: a }))).toBe('Quoted: The launch codeword is marmalade.')
  })
})

test('when the caps cut the text, the person gets a notice and the model a marker, and the end is not given', async () => {
  const a = await p().createUser()
  const id = await conversation(a)
  const line = (i: number) => `line ${String(i).padStart(6, '0')} of the long report, padded to a steady width for counting.\n`
  const text = Array.from({ length: 4500 }, (_, i) => line(i)).join('')
  expect(text.length).toBeGreaterThan(300 * 1024)
  const stored = await upload(a, id, new File([text], 'long.txt', { type: 'text/plain' }))
  expect(stored.truncated).toBe(true)
  expect(stored.notice).toContain('200 KB')
  const events = await chatTurn(p(), { conversation_id: id, text: '/quote Document text truncated' }, { as: a })
  const notices = events.filter((e) => e.type === 'notice').map((e) => e.text)
  expect(notices.join(' ')).toContain('100 KB')
  expect(answerOf(events)).toStartWith('Quoted: [Document text truncated:')
  // The first lines are given; those past 100 KB are not.
  expect(answerOf(await chatTurn(p(), { conversation_id: id, text: '/quote line 000001 ' }, { as: a }))).toStartWith('Quoted: line 000001')
  expect(answerOf(await chatTurn(p(), { conversation_id: id, text: '/quote line 003000 ' }, { as: a }))).toBe('Not in my context: line 003000')
})
