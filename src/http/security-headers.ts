import type { MiddlewareHandler } from 'hono'

/** A Content-Security-Policy as directive → sources, e.g. `{ 'script-src': ["'self'"] }`. */
export type Policy = Record<string, readonly string[]>

/** JSON and problem answers: nothing in them may load or run, and no page may frame them. */
export const DATA_POLICY: Policy = { 'default-src': ["'none'"], 'frame-ancestors': ["'none'"] }

/**
 * Pages of this server: scripts, styles, images and audio are files served from this origin. Nothing inline runs, and
 * nothing is eval'd (htmx 4 compiles code only for hx-on, trigger filters and `js:` values, which no page uses).
 */
export const PAGE_POLICY: Policy = {
  'default-src': ["'none'"],
  'script-src': ["'self'"],
  'style-src': ["'self'"],
  'img-src': ["'self'"],
  // Voice notes and spoken answers play from the page's own origin.
  'media-src': ["'self'"],
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
 * CSP, framing, sniffing, referrer and transport headers on every answer. `policy` is the default CSP; a route that
 * serves something else (the API docs page) sets its own Content-Security-Policy, which is kept.
 *
 * Only headers a current browser acts on: the legacy ones (X-XSS-Protection, X-Download-Options,
 * X-Permitted-Cross-Domain-Policies, X-DNS-Prefetch-Control) protect nothing today, and each header costs every
 * answer; on a 50-record list, twelve headers cost about a third of the request's CPU here (bench/crud.ts).
 * Pages add what only documents use: their own browsing context group and origin-keyed agent cluster.
 */
export function securityHeaders(policy: Policy, { pages = false } = {}): MiddlewareHandler {
  const csp = cspHeader(policy)
  const headers: ReadonlyArray<readonly [string, string]> = [
    ['X-Content-Type-Options', 'nosniff'],
    // For browsers that predate CSP's frame-ancestors.
    ['X-Frame-Options', 'DENY'],
    // Not no-referrer: under it browsers send `Origin: null` on form posts, which the CSRF guard refuses.
    ['Referrer-Policy', 'strict-origin-when-cross-origin'],
    // This host only: the operator's other subdomains are not ours to force onto HTTPS. Ignored over plain HTTP.
    ['Strict-Transport-Security', 'max-age=15552000'],
    // Another site may not embed our answers as images or scripts to read them by side channels.
    ['Cross-Origin-Resource-Policy', 'same-origin'],
    ...(pages ? ([['Cross-Origin-Opener-Policy', 'same-origin'], ['Origin-Agent-Cluster', '?1']] as const) : []),
  ]
  return async (c, next) => {
    await next()
    const answer = c.res.headers
    for (const [name, value] of headers) answer.set(name, value)
    if (!answer.has('content-security-policy')) answer.set('content-security-policy', csp)
  }
}
