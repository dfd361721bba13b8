import { ApiError } from '../errors.ts'
import { ACCEPTED_TYPES } from './media-types.ts'

/**
 * Why a document was not taken. `unsupported`: its bytes are none of the accepted types. `unreadable`: it is one
 * of them but empty, damaged or not what it claims. `timeout` and `memory`: reading it hit a limit and was stopped.
 * `too_large`: it would unpack to more than any document may, so it is refused unread. The message is written for the person who uploaded it.
 */
export type DocumentErrorKind = 'unsupported' | 'unreadable' | 'timeout' | 'memory' | 'too_large'

export class DocumentError extends Error {
  constructor(
    readonly kind: DocumentErrorKind,
    message: string,
  ) {
    super(message)
    this.name = 'DocumentError'
  }
}

export function unsupportedDocument(what: string): DocumentError {
  return new DocumentError('unsupported', `${what} Upload a ${ACCEPTED_TYPES} file instead.`)
}

/** The generic create of a WebchatDocument: a document's text is what the platform reads from its bytes. */
export const DOCUMENTS_ARE_UPLOADED =
  'Documents are created by uploading the file: POST /api/chat/documents as multipart/form-data with the fields conversation_id and file.'

export function documentsAreUploaded(): ApiError {
  return new ApiError('method_not_allowed', DOCUMENTS_ARE_UPLOADED, { headers: { Allow: 'GET, HEAD' } })
}
