import type { Context, MiddlewareHandler } from 'hono'
import { routeOf } from './route.ts'
import type { Logger } from '../logger.ts'
import type { ApiEnv } from './env.ts'

/**
 * One line per answered request: its id (also in the X-Request-Id header), who made it, the route it matched, the
 * path without its query (which may carry a token), the status and how long it took. Bodies are never logged.
 */
export function requestLog(log: Logger, who: (c: Context) => Who = actorOf): MiddlewareHandler {
  return async (c, next) => {
    const started = performance.now()
    try {
      await next()
    } finally {
      const { user_id, company_id } = who(c)
      log.info('request', {
        request_id: c.get('requestId'),
        method: c.req.method,
        route: routeOf(c) ?? null,
        path: c.req.path,
        status: c.res.status,
        duration_ms: Math.round((performance.now() - started) * 100) / 100,
        user_id,
        company_id,
      })
    }
  }
}

/** Who made a request, as its log line names them. */
export interface Who {
  user_id: string | null
  company_id: string | null
}

/** The api's caller, as authentication set them. */
function actorOf(c: Context<ApiEnv>): Who {
  const actor = c.get('actor')
  return { user_id: actor?.userId ?? null, company_id: actor?.companyId ?? null }
}
