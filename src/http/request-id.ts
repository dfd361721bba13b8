import type { MiddlewareHandler } from 'hono'
import { requestId } from 'hono/request-id'

/** Room for a UUID or a tracing id, not for a payload. */
export const MAX_CLIENT_REQUEST_ID = 64

/**
 * X-Request-Id for both apps. The id is echoed in a header, in problem bodies and in log lines, so a client's own
 * is kept only when it is a short token: hono takes nothing but A-Z a-z 0-9 _ - = (no spaces, CR/LF or other
 * characters), and this bounds the length. Anything else gets a fresh id.
 */
export function requestIds(): MiddlewareHandler {
  return requestId({ limitLength: MAX_CLIENT_REQUEST_ID })
}
