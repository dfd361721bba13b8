import type { Context } from 'hono'

/**
 * The template of the route that answered (`/api/v1/AgentConfigRecord/:id`): the last matched route that is not
 * middleware. Undefined when nothing but middleware matched (a 404). What metrics, logs and spans name a request by,
 * never the path as sent.
 */
export function routeOf(c: Context): string | undefined {
  return c.req.matchedRoutes.findLast((r) => r.method !== 'ALL')?.path
}
