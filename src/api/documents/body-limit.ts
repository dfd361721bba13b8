import { bodyLimit } from 'hono/body-limit'
import type { MiddlewareHandler } from 'hono'
import { ApiError } from '../../errors.ts'
import { describeBytes } from '../../documents/sizes.ts'

export const DOCUMENT_UPLOAD_PATH = '/api/chat/documents'

// Room in a multipart body for what is not the file: boundaries, part headers, the conversation id, a long name.
const MULTIPART_OVERHEAD = 64 * 1024


/**
 * The upload's own body limit, in place of the api app's general one: a document may be far larger than any JSON
 * body, and nothing else may. The handler then holds the file itself to the document limit exactly.
 */
export function documentBodyLimit(maxDocumentBytes: number): MiddlewareHandler {
  return bodyLimit({
    maxSize: maxDocumentBytes + MULTIPART_OVERHEAD,
    onError: () => {
      throw new ApiError('payload_too_large', `The upload is larger than ${describeBytes(maxDocumentBytes)}, the most a document may be.`)
    },
  })
}
