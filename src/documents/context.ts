import { sql } from 'kysely'
import type { Executor } from '../db/schema.ts'
import { runTemplate, slot } from '../db/templates.ts'
import { CONTEXT_TEXT_CAP, EXTRACTED_TEXT_CAP, KB, capUtf8, utf8Length } from './text-cap.ts'

export interface DocumentContext {
  /** What the model is given: each document under a header with its filename, oldest first. Empty without documents. */
  text: string
  /** Some document text is missing: cut here at the context cap, or cut at upload. */
  truncated: boolean
  /** For the person in the conversation, when something was cut. */
  notice?: string
}

const CUT_MARKER = `[Document text truncated: only the first ${CONTEXT_TEXT_CAP / KB} KB of the attached documents is included.]`
const cutAtUpload = (filename: string) =>
  `[Document text truncated: only the first ${EXTRACTED_TEXT_CAP / KB} KB of the text of ${filename} was kept when it was uploaded.]`

const header = (filename: string) => `=== Document: ${filename} ===`

/**
 * The conversation's documents as one text for the model, at most CONTEXT_TEXT_CAP UTF-8 bytes all told (headers
 * and markers included). When anything is cut the text says so to the model and `notice` says so to the user:
 * never silently. Kernel code for a turn whose conversation has been authorised already, so not scoped.
 */
export async function documentContext(db: Executor, conversationId: string): Promise<DocumentContext> {
  // A character is at least one byte, so no document needs more characters than the cap has bytes: `left` keeps
  // the store from sending every document's full 200 KB to build a 100 KB context.
  const documents = await runTemplate<{ filename: string; text: string; truncated: boolean }>(
    db,
    'documents|context',
    () =>
      db
        .selectFrom('webchat_documents')
        .select(['filename', sql<string>`left(extracted_text, ${sql.lit(CONTEXT_TEXT_CAP)})`.as('text'), 'truncated'])
        .where('conversation_id', '=', slot(0))
        .orderBy('created_at')
        .orderBy('id'),
    [conversationId],
  )
  if (documents.length === 0) return { text: '', truncated: false }

  const sections = documents.map((d) => [header(d.filename), d.text, ...(d.truncated ? [cutAtUpload(d.filename)] : [])].join('\n'))
  const whole = sections.join('\n\n')
  const cutAtUploadNames = documents.filter((d) => d.truncated).map((d) => d.filename)
  const fits = utf8Length(whole) <= CONTEXT_TEXT_CAP
  const text = fits ? whole : `${capUtf8(whole, CONTEXT_TEXT_CAP - utf8Length(CUT_MARKER) - 2).text}\n\n${CUT_MARKER}`
  if (fits && cutAtUploadNames.length === 0) return { text, truncated: false }
  return { text, truncated: true, notice: noticeFor(!fits, cutAtUploadNames) }
}

function noticeFor(cutHere: boolean, cutAtUpload: string[]): string {
  const parts: string[] = []
  if (cutHere) parts.push(`The attached documents hold more text than the agent can be given: it sees only the first ${CONTEXT_TEXT_CAP / KB} KB.`)
  if (cutAtUpload.length > 0) {
    parts.push(`Only the first ${EXTRACTED_TEXT_CAP / KB} KB of text of ${cutAtUpload.join(', ')} ${cutAtUpload.length === 1 ? 'was' : 'were'} kept when uploaded.`)
  }
  return parts.join(' ')
}
