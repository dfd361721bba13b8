import { afterAll, beforeAll, expect, test } from 'bun:test'
import { sql } from 'kysely'
import { ConversationThreads } from '../../src/channels/threads.ts'
import type { Store } from '../../src/db/connect.ts'
import { freshStore } from '../helpers/database.ts'
import { recordingDb } from '../helpers/recording-db.ts'

let store: Store
let companyId: string
let agentId: string

beforeAll(async () => {
  store = await freshStore()
  companyId = crypto.randomUUID()
  agentId = crypto.randomUUID()
  await sql`INSERT INTO companies (id, name, slug) VALUES (${companyId}, 'Threads', ${`threads-${companyId.slice(0, 8)}`})`.execute(store.db)
  await sql`INSERT INTO agent_configs (id, company_id, name, runner) VALUES (${agentId}, ${companyId}, 'threaded', 'echo')`.execute(store.db)
})
afterAll(() => store.close())

async function conversation(): Promise<string> {
  const id = Bun.randomUUIDv7()
  await sql`INSERT INTO webchat_conversations (id, company_id, agent_id, title) VALUES (${id}, ${companyId}, ${agentId}, 'c')`.execute(store.db)
  return id
}

async function thread(conversationId: string, key: string): Promise<void> {
  const userId = crypto.randomUUID()
  await sql`INSERT INTO users (id, email, username) VALUES (${userId}, ${`${userId}@example.com`}, ${userId})`.execute(store.db)
  await sql`
    INSERT INTO channel_threads (id, company_id, agent_id, platform, thread_key, user_id, conversation_id, target)
    VALUES (${Bun.randomUUIDv7()}, ${companyId}, ${agentId}, 'telegram', ${key}, ${userId}, ${conversationId}, ${JSON.stringify({ chat_id: key })}::text::jsonb)`.execute(store.db)
}

const lookups = (compiled: string[]) => compiled.filter((statement) => statement.includes('channel_threads')).length

test('a web chat conversation is looked up once: every later answer in it knows it belongs to no thread', async () => {
  const { db, recorded } = recordingDb(store.db)
  const threads = new ConversationThreads(db)
  const web = await conversation()
  for (let answer = 0; answer < 3; answer++) expect(await threads.of(web)).toBeUndefined()
  expect(lookups(recorded.compiled)).toBe(1)
})

test('a channel’s conversation is looked up each time, so its agent’s new name and its thread’s target are used', async () => {
  const { db, recorded } = recordingDb(store.db)
  const threads = new ConversationThreads(db)
  const id = await conversation()
  await thread(id, 'chat-1')
  expect(await threads.of(id)).toMatchObject({ agent_id: agentId, platform: 'telegram', thread_key: 'chat-1', target: { chat_id: 'chat-1' }, name: 'threaded' })
  await sql`UPDATE agent_configs SET name = 'renamed' WHERE id = ${agentId}`.execute(store.db)
  await sql`UPDATE channel_threads SET target = '{"chat_id":"moved"}'::jsonb WHERE conversation_id = ${id}`.execute(store.db)
  expect(await threads.of(id)).toMatchObject({ target: { chat_id: 'moved' }, name: 'renamed' })
  expect(lookups(recorded.compiled)).toBe(2)
})
