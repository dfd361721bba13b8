import { companyScoped } from '../db/scoped.ts'
import type { Executor } from '../db/schema.ts'
import { WebchatDocument } from '../models/webchat.ts'
import type { DocumentMediaType } from './media-types.ts'

export interface NewDocument {
  companyId: string
  conversationId: string
  uploadedBy: string
  filename: string
  mediaType: DocumentMediaType
  sizeBytes: number
  extractedText: string
  truncated: boolean
}

/**
 * Stores an uploaded document in its conversation's company, through the scoped builder like every tenant write.
 * Only the upload writes documents: their text is what the platform extracted, never what a client says it is. Called
 * through ConversationDocuments.add, which tells every process that the conversation has documents now.
 */
export async function insertDocument(db: Executor, document: NewDocument): Promise<string> {
  const id = Bun.randomUUIDv7()
  await companyScoped(db, document.companyId)
    .insertInto(WebchatDocument, {
      id,
      conversation_id: document.conversationId,
      uploaded_by: document.uploadedBy,
      filename: document.filename,
      media_type: document.mediaType,
      size_bytes: document.sizeBytes,
      extracted_text: document.extractedText,
      truncated: document.truncated,
    })
    .execute()
  return id
}
