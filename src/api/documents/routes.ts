import { createRoute, z } from '@hono/zod-openapi'
import { ACCEPTED_TYPES, DOCUMENT_MEDIA_TYPES } from '../../documents/media-types.ts'
import { WebchatDocument } from '../../models/webchat.ts'
import { ProblemSchema, commonErrors, notFoundError, signedIn } from '../responses.ts'
import { DOCUMENT_UPLOAD_PATH } from './body-limit.ts'

const problem = (description: string) => ({ description, content: { 'application/problem+json': { schema: ProblemSchema } } })

export const DocumentUpload = z
  .object({
    conversation_id: z.uuid().openapi({ description: 'The conversation the document is attached to; you must take part in it.' }),
    file: z
      .instanceof(File, { message: 'attach the document as a file part named "file"' })
      .openapi({ type: 'string', format: 'binary', description: `The document: ${ACCEPTED_TYPES}, judged by its content, not its name.` }),
  })
  .openapi('DocumentUpload')

const UploadedDocument = WebchatDocument.record
  .extend({
    notice: z.string().optional().openapi({
      description: 'Present when the text was cut at 200 KB: a sentence to show the person who uploaded it.',
      example: 'Only the first 200 KB of text of report.txt was kept.',
    }),
  })
  .openapi('UploadedDocument')

export const uploadDocumentRoute = createRoute({
  method: 'post',
  path: DOCUMENT_UPLOAD_PATH,
  operationId: 'uploadDocument',
  summary: 'Attach a document to a conversation',
  description:
    `Accepts ${DOCUMENT_MEDIA_TYPES.join(', ')}, judged by the bytes (a renamed program is refused whatever its name). ` +
    'The text is extracted in an isolated process under a time and memory limit, kept up to 200 KB, and given to the ' +
    'agent with the conversation (up to 100 KB for all its documents). The largest upload is SWITCHBOARD_DOCUMENT_MAX_BYTES (20 MiB by default).',
  tags: ['Chat'],
  security: signedIn,
  request: { body: { required: true, content: { 'multipart/form-data': { schema: DocumentUpload } } } },
  responses: {
    201: {
      description: 'The stored document, with its extracted text.',
      headers: {
        Location: { schema: { type: 'string' }, description: 'Address of the new WebchatDocument.' },
        ETag: { schema: { type: 'string' }, description: 'Version of the record.' },
      },
      content: { 'application/json': { schema: UploadedDocument } },
    },
    ...commonErrors,
    ...notFoundError,
    413: problem('The file (or the whole body) is larger than SWITCHBOARD_DOCUMENT_MAX_BYTES.'),
    415: problem(`The file is not ${ACCEPTED_TYPES} by its content, or the body is not multipart/form-data.`),
    422: problem('A field is missing or invalid, or the file is one of the accepted types but could not be read (damaged, empty, too slow or too big to read).'),
  },
})
