import type { MiddlewareHandler } from 'hono'

/** Room for a UUID or a tracing id, not for a payload. */
export const MAX_CLIENT_REQUEST_ID = 64

/** What a client's own id may hold: no spaces, CR/LF or other characters to smuggle into a header or a log line. */
const TOKEN = /^[\w\-=]+$/

/**
 * X-Request-Id for both apps. The id is echoed in a header, in problem bodies and in log lines, so a client's own
 * is kept only when it is a short token (A-Z a-z 0-9 _ - =); anything else gets a fresh id.
 *
 * The header is added to the answer once it is made, whatever made it: hono's requestId sets it beforehand, where
 * only the answers hono itself builds (c.json, c.body) take it, so an answer a route returns as a Response (the MCP
 * gateway's) went without.
 */
export function requestIds(): MiddlewareHandler {
  return async (c, next) => {
    const given = c.req.header('x-request-id')
    const id = given && given.length <= MAX_CLIENT_REQUEST_ID && TOKEN.test(given) ? given : crypto.randomUUID()
    c.set('requestId', id)
    await next()
    c.res.headers.set('X-Request-Id', id)
  }
}
