import { afterAll, beforeAll, expect, test } from 'bun:test'
import { sql } from 'kysely'
import type { Store } from '../../src/db/connect.ts'
import { ConversationDocuments } from '../../src/documents/conversation-documents.ts'
import { TXT } from '../../src/documents/media-types.ts'
import { insertDocument, type NewDocument } from '../../src/documents/store.ts'
import type { CacheName } from '../../src/events/bus.ts'
import { MemoryBus } from '../../src/events/memory.ts'
import { silentLogger } from '../../src/logger.ts'
import { freshStore } from '../helpers/database.ts'
import { recordingDb } from '../helpers/recording-db.ts'

// Which conversations have no documents is remembered, so most turns read none; a document stored anywhere is seen.
let store: Store
let companyId: string
let userId: string

beforeAll(async () => {
  store = await freshStore()
  companyId = crypto.randomUUID()
  userId = crypto.randomUUID()
  await sql`INSERT INTO companies (id, name, slug) VALUES (${companyId}, 'Docs', ${`docs-${companyId.slice(0, 8)}`})`.execute(store.db)
  await sql`INSERT INTO users (id, email, username) VALUES (${userId}, ${`${userId}@example.com`}, ${userId})`.execute(store.db)
})
afterAll(() => store.close())

async function conversation(): Promise<string> {
  const id = Bun.randomUUIDv7()
  await sql`INSERT INTO webchat_conversations (id, company_id, title) VALUES (${id}, ${companyId}, 'c')`.execute(store.db)
  return id
}

const document = (conversationId: string, text: string): NewDocument => ({
  companyId,
  conversationId,
  uploadedBy: userId,
  filename: 'notes.txt',
  mediaType: TXT,
  sizeBytes: text.length,
  extractedText: text,
  truncated: false,
})

/** Documents on a store that counts its reads, with a bus on which the flushes travel, as on one process. */
function documentsOn() {
  const bus = new MemoryBus(silentLogger)
  const { db, recorded } = recordingDb(store.db)
  const flushed: CacheName[][] = []
  const caches = { flush: async (...names: CacheName[]) => (flushed.push(names), bus.publish('cache.flush', { caches: names })) }
  const reads = () => recorded.compiled.filter((statement) => statement.includes('webchat_documents') && statement.startsWith('select')).length
  return { documents: new ConversationDocuments(db, bus, caches), bus, reads, flushed }
}

test('a conversation without documents is read once: its later turns read nothing', async () => {
  const { documents, reads } = documentsOn()
  const id = await conversation()
  for (let turn = 0; turn < 3; turn++) expect(await documents.context(id)).toEqual({ text: '', truncated: false })
  expect(reads()).toBe(1)
})

test('a document stored is flushed for, and its conversation is read again and gives it', async () => {
  const { documents, reads, flushed } = documentsOn()
  const id = await conversation()
  expect((await documents.context(id)).text).toBe('')
  await documents.add(document(id, 'The codeword is marmalade.'))
  expect(flushed).toEqual([['documents']])
  expect((await documents.context(id)).text).toContain('The codeword is marmalade.')
  // One with documents is read every time: they may change.
  await documents.context(id)
  expect(reads()).toBe(3)
})

test('a read that began before a flush does not remember what it found: it may have missed the new document', async () => {
  const { documents, bus } = documentsOn()
  const id = await conversation()
  const reading = documents.context(id)
  // Another process stored a document meanwhile (after this read's snapshot) and flushed.
  await bus.publish('cache.flush', { caches: ['documents'] })
  expect((await reading).text).toBe('')
  await insertDocument(store.db, document(id, 'Stored elsewhere.'))
  expect((await documents.context(id)).text).toContain('Stored elsewhere.')
})
