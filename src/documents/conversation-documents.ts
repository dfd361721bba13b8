import { LRUCache } from 'lru-cache'
import type { Db } from '../db/schema.ts'
import type { EventBus } from '../events/bus.ts'
import { flushOn, type CacheFlusher } from '../events/caches.ts'
import { documentContext, type DocumentContext } from './context.ts'
import { insertDocument, type NewDocument } from './store.ts'

const NO_DOCUMENTS: DocumentContext = { text: '', truncated: false }

/**
 * Conversations' documents as turns read them, and the one way documents are stored. Every turn gives the model its
 * conversation's documents, and most conversations have none: which ones have none is remembered, so their turns
 * read nothing before the first token. A document stored anywhere makes every process forget that before the upload
 * answers, so a message sent once it has is answered with the document in view.
 */
export class ConversationDocuments {
  readonly #none = new LRUCache<string, true>({ max: 10_000 })
  /** Moves on at every flush: a read that began before one may have missed the document that caused it. */
  #generation = 0

  constructor(
    private readonly db: Db,
    events: EventBus,
    private readonly caches: Pick<CacheFlusher, 'flush'>,
  ) {
    flushOn(events, 'documents', () => {
      this.#none.clear()
      this.#generation++
    })
  }

  /** What the model is given of the conversation's documents (see documentContext). */
  async context(conversationId: string): Promise<DocumentContext> {
    if (this.#none.get(conversationId)) return NO_DOCUMENTS
    const generation = this.#generation
    const context = await documentContext(this.db, conversationId)
    // A document adds at least its header: empty text is no document at all.
    if (context.text === '' && generation === this.#generation) this.#none.set(conversationId, true)
    return context
  }

  /** Stores a document; no process takes its conversation for one without documents once this returns. */
  async add(document: NewDocument): Promise<string> {
    const id = await insertDocument(this.db, document)
    await this.caches.flush('documents')
    return id
  }
}
