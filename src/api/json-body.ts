import type { MiddlewareHandler } from 'hono'
import { ApiError } from '../errors.ts'

const JSON_BODY = /^application\/([a-z0-9.+-]+\+)?json\s*(;|$)/i

/**
 * Runs before the body is validated: a form, a text or a missing body is told 415, not "fields missing" (the
 * validator reads a body only when its Content-Type says JSON, so without one a handler would see none).
 */
export const requireJson: MiddlewareHandler = async (c, next) => {
  if (!JSON_BODY.test(c.req.header('content-type') ?? '')) {
    throw new ApiError('unsupported_media_type', 'Send the body as JSON, with Content-Type: application/json.')
  }
  await next()
}
