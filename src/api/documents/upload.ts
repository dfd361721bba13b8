import type { Context, MiddlewareHandler } from 'hono'
import { requireActor } from '../../auth/access.ts'
import { DocumentError } from '../../documents/errors.ts'
import { readDocument } from '../../documents/read.ts'
import { Slots, SlotsBusy, type Holder } from '../../documents/slots.ts'
import type { Actor } from '../../auth/actor.ts'
import { SandboxUnavailable, type Sandbox } from '../../mcp/sandbox.ts'
import { sanitizeFilename } from '../../documents/filename.ts'
import { EXTRACTED_TEXT_CAP, KB } from '../../documents/text-cap.ts'
import { ApiError } from '../../errors.ts'
import type { ApiEnv } from '../../http/env.ts'
import { getRecord } from '../../models/records.ts'
import { WebchatConversation, WebchatDocument } from '../../models/webchat.ts'
import { describeBytes } from '../../documents/sizes.ts'

/**
 * Runs before the body is read: who may upload is settled before up to 20 MiB is buffered, and a body that is not
 * a form is told what to send rather than that fields are missing.
 */
export const mayUpload: MiddlewareHandler<ApiEnv> = async (c, next) => {
  const actor = await c.var.services.access.authorize(c.var.actor, WebchatDocument, 'create')
  if (!/^multipart\/form-data\s*;/i.test(c.req.header('content-type') ?? '')) {
    throw new ApiError('unsupported_media_type', 'Send the document as multipart/form-data with the fields conversation_id and file.')
  }
  try {
    await uploads.run(() => next(), holderOf(actor))
  } catch (error) {
    throw error instanceof SlotsBusy ? busy(error) : error
  }
}

/**
 * Uploads in flight in this process, from the first byte of the body to the stored text: each holds its file in
 * memory. A person may have two at once and a company four, so one member's flood is refused (429, to them) while
 * other companies' uploads still get in; all together, eight.
 */
const uploads = new Slots(8, 0, { person: 2, company: 4 })

const holderOf = (actor: Actor): Holder => ({ companyId: actor.companyId, userId: actor.userId })

/** Too many at once: the person or company over their share hears 429; a platform that is full, 503. */
function busy(error: SlotsBusy): ApiError {
  if (error.whose === 'everyone') return new ApiError('unavailable', 'Many documents are being read just now; try again in a minute.', { headers: { 'Retry-After': '30' } })
  const whose = error.whose === 'person' ? 'You have' : 'Your company has'
  return new ApiError('rate_limited', `${whose} as many documents on their way in as may be at once; send this one when one of them is done.`, { headers: { 'Retry-After': '10' } })
}

/**
 * A document refused for what it is (415), for what it would unpack to (413), or because it could not be read
 * (422), with the reader's message.
 */
function refusal(error: DocumentError): ApiError {
  if (error.kind === 'unsupported') return new ApiError('unsupported_media_type', error.message)
  if (error.kind === 'too_large') return new ApiError('payload_too_large', error.message)
  return new ApiError('validation_error', error.message, { errors: [{ path: 'file', message: error.message }] })
}

async function read(bytes: Uint8Array, filename: string, holder: Holder, sandbox: Sandbox) {
  try {
    return await readDocument(bytes, filename, holder, sandbox)
  } catch (error) {
    if (error instanceof SlotsBusy) throw busy(error)
    if (error instanceof SandboxUnavailable) throw new ApiError('unavailable', `Documents are read only inside a sandbox, and ${error.message}`)
    throw error instanceof DocumentError ? refusal(error) : error
  }
}

type UploadContext = Context<ApiEnv, string, { out: { form: { conversation_id: string; file: File } } }>

/** POST /api/chat/documents: judge the file by its bytes, extract its text in isolation, store both. */
export async function uploadDocument(c: UploadContext) {
  const { db, config, documents } = c.var.services
  const actor = requireActor(c.var.actor)
  const { conversation_id, file } = c.req.valid('form')
  // Another company's conversation, or one the caller takes no part in, is not there (404).
  const conversation = (await getRecord(db, actor, WebchatConversation, conversation_id)).record
  const filename = sanitizeFilename(file.name)
  if (file.size > config.documentMaxBytes) {
    throw new ApiError('payload_too_large', `${filename} is ${describeBytes(file.size)}; a document may be at most ${describeBytes(config.documentMaxBytes)}.`)
  }

  const { mediaType, text, truncated } = await read(new Uint8Array(await file.arrayBuffer()), filename, holderOf(actor), c.var.services.sandbox)
  const id = await documents.add({
    companyId: conversation.company_id,
    conversationId: conversation.id,
    uploadedBy: actor.userId,
    filename,
    mediaType,
    sizeBytes: file.size,
    extractedText: text,
    truncated,
  })
  const stored = await getRecord(db, actor, WebchatDocument, id)
  c.header('Location', `/api/v1/${WebchatDocument.name}/${id}`)
  c.header('ETag', `"${stored.version}"`)
  const notice = truncated ? `Only the first ${EXTRACTED_TEXT_CAP / KB} KB of text of ${filename} was kept.` : undefined
  return c.json({ ...stored.record, ...(notice ? { notice } : {}) }, 201)
}
