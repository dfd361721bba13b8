import type { MiddlewareHandler } from 'hono'
import { secureHeaders } from 'hono/secure-headers'

/** A Content-Security-Policy as directive → sources, e.g. `{ 'script-src': ["'self'"] }`. */
export type Policy = Record<string, readonly string[]>

/** JSON and problem answers: nothing in them may load or run, and no page may frame them. */
export const DATA_POLICY: Policy = { 'default-src': ["'none'"], 'frame-ancestors': ["'none'"] }

/**
 * Pages of this server: scripts, styles and images are files served from this origin. Nothing inline runs, and
 * nothing is eval'd (htmx 4 compiles code only for hx-on, trigger filters and `js:` values, which no page uses).
 */
export const PAGE_POLICY: Policy = {
  'default-src': ["'none'"],
  'script-src': ["'self'"],
  'style-src': ["'self'"],
  'img-src': ["'self'"],
  'connect-src': ["'self'"],
  'form-action': ["'self'"],
  'base-uri': ["'none'"],
  'frame-ancestors': ["'none'"],
}

export function cspHeader(policy: Policy): string {
  return Object.entries(policy)
    .map(([directive, sources]) => [directive, ...sources].join(' '))
    .join('; ')
}

/**
 * CSP, framing, sniffing and referrer headers on every answer. `policy` is the default CSP; a route that serves
 * something else (the API docs page) sets its own Content-Security-Policy, which is kept.
 */
export function securityHeaders(policy: Policy): MiddlewareHandler {
  const csp = cspHeader(policy)
  const others = secureHeaders({
    xFrameOptions: 'DENY',
    // Not no-referrer: under it browsers send `Origin: null` on form posts, which the CSRF guard refuses.
    referrerPolicy: 'strict-origin-when-cross-origin',
    // This host only: the operator's other subdomains are not ours to force onto HTTPS.
    strictTransportSecurity: 'max-age=15552000',
  })
  return async (c, next) => {
    await others(c, next)
    if (!c.res.headers.has('content-security-policy')) c.res.headers.set('content-security-policy', csp)
  }
}
