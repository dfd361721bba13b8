import type { MiddlewareHandler } from 'hono'
import { routeOf } from '../http/route.ts'
import type { Metrics } from './metrics.ts'

/**
 * Counts and times every answer of the app it is mounted first on, labelled by the route's template
 * (`/api/v1/AgentConfigRecord/:id`), never the path as sent: a path carries ids and whatever a client makes up.
 */
export function httpMetrics(metrics: Metrics): MiddlewareHandler {
  return async (c, next) => {
    const started = performance.now()
    try {
      await next()
    } finally {
      // None: a path nothing serves.
      const route = routeOf(c) ?? 'unmatched'
      metrics.request(route, c.req.method, c.res.status, (performance.now() - started) / 1000)
    }
  }
}
