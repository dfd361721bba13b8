import type { MiddlewareHandler } from 'hono'
import { routeOf } from '../http/route.ts'

/** An operation of /api/v1 on its way out: since when, the earliest day it may go, and what replaces it. */
export interface Deprecation {
  /** `METHOD /route/template`, as Hono matched it (`GET /api/v1/Thing/:id`). */
  operation: string
  /** The day it was deprecated (YYYY-MM-DD). */
  since: string
  /** The earliest day it may be removed (YYYY-MM-DD): at least 180 days after `since` (README, Compatibility). */
  sunset: string
  /** Where what replaces it is described. */
  link: string
}

/**
 * What /api/v1 has deprecated. None yet: an entry here puts the headers on every answer of the operation and marks
 * it deprecated in the OpenAPI document.
 */
export const DEPRECATIONS: readonly Deprecation[] = []

/**
 * Says so on every answer of a deprecated operation: `Deprecation` (RFC 9745, the moment as `@seconds`), `Sunset`
 * (RFC 8594, an HTTP date) and a `Link` with rel="deprecation" to what replaces it.
 */
export function deprecationHeaders(deprecations: readonly Deprecation[] = DEPRECATIONS): MiddlewareHandler {
  const byOperation = new Map(deprecations.map((d) => [d.operation, d]))
  return async (c, next) => {
    await next()
    if (byOperation.size === 0) return
    const deprecation = byOperation.get(`${c.req.method} ${routeOf(c)}`)
    if (!deprecation) return
    c.header('Deprecation', `@${Date.parse(`${deprecation.since}T00:00:00Z`) / 1000}`)
    c.header('Sunset', new Date(`${deprecation.sunset}T00:00:00Z`).toUTCString())
    c.header('Link', `<${deprecation.link}>; rel="deprecation"; type="text/html"`, { append: true })
  }
}

/** The document's operations marked `deprecated: true`, by OpenAPI path (`/api/v1/Thing/{id}`) and method. */
export function markDeprecated(document: { paths?: Record<string, Record<string, { deprecated?: boolean }>> }, deprecations: readonly Deprecation[] = DEPRECATIONS): void {
  for (const { operation } of deprecations) {
    const [method, route] = operation.split(' ') as [string, string]
    const operationOf = document.paths?.[route.replace(/:(\w+)/g, '{$1}')]?.[method.toLowerCase()]
    if (operationOf) operationOf.deprecated = true
  }
}
