import type { OpenAPIHono } from '@hono/zod-openapi'
import type { ApiEnv } from '../../http/env.ts'
import { uploadDocumentRoute } from './routes.ts'
import { uploadDocument } from './upload.ts'

export { DOCUMENT_UPLOAD_PATH, documentBodyLimit } from './body-limit.ts'
export { mayUpload } from './upload.ts'

/** POST /api/chat/documents: a document of a conversation, uploaded and read by the platform. */
export function mountDocuments(app: OpenAPIHono<ApiEnv>): void {
  app.openapi(uploadDocumentRoute, uploadDocument)
}
