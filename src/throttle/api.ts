import type { MiddlewareHandler } from 'hono'
import { clientAddress } from '../http/client-address.ts'
import type { Services } from '../services.ts'
import { throttle } from './middleware.ts'

/**
 * The API rate: a signed-in user's own bucket, an anonymous caller's address's. /api/v1/* and the plugin routes
 * that ask for it (context.throttle) draw from the same bucket, so a second route is no way around the first.
 */
export function apiThrottle(services: Pick<Services, 'throttles' | 'config' | 'clock' | 'metrics'>): MiddlewareHandler {
  return throttle('api', services.throttles.api, services.config.apiRate, services.clock, (c) => {
    const actor = c.get('actor')
    return actor ? `user:${actor.userId}` : `address:${clientAddress(c)}`
  }, services.metrics)
}
