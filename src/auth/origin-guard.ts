import type { MiddlewareHandler } from 'hono'
import { ApiError } from '../errors.ts'

const SAFE = new Set(['GET', 'HEAD', 'OPTIONS'])

/**
 * CSRF defence for cookie-authenticated writes. A browser names the page's origin on every cross-site write
 * (Origin, or at least Sec-Fetch-Site), so a write from a foreign page is refused. Requests with a bearer token
 * carry no ambient credential and pass; so do non-browser clients, which send neither header.
 */
export function originGuard(allowedOrigins: readonly string[]): MiddlewareHandler {
  const allowed = new Set(allowedOrigins.map((url) => new URL(url).origin))
  return async (c, next) => {
    if (!SAFE.has(c.req.method) && !c.req.header('authorization')) {
      const origin = c.req.header('origin')
      const site = c.req.header('sec-fetch-site')
      const foreign = origin !== undefined ? !allowed.has(origin) : site !== undefined && site !== 'same-origin' && site !== 'none'
      if (foreign) throw new ApiError('forbidden', `Writes from ${origin ?? 'another site'} are refused; use this site's own pages or an API token.`)
    }
    await next()
  }
}
