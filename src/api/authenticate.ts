import type { MiddlewareHandler } from 'hono'
import { readCredentials } from '../auth/authenticator.ts'
import type { Services } from '../services.ts'
import type { ApiEnv } from '../http/env.ts'
import { ApiError } from '../errors.ts'
import { isUuid } from '../models/fields.ts'

export const COMPANY_HEADER = 'x-switchboard-company'

/**
 * Resolves the caller from a bearer token or the session cookie. No credential, or a dead one, leaves the actor
 * unset: public routes still answer, protected ones say 401. `X-Switchboard-Company` picks the company to work
 * in when the user belongs to several.
 */
export function authenticate(services: Services): MiddlewareHandler<ApiEnv> {
  return async (c, next) => {
    const credentials = readCredentials(c.req.raw.headers)
    if (credentials) {
      const company = c.req.header(COMPANY_HEADER)
      if (company !== undefined && !isUuid(company)) {
        throw new ApiError('bad_request', `${COMPANY_HEADER} must be a company id (a UUID).`)
      }
      c.set('actor', await services.authenticator.actorFor(credentials, company?.toLowerCase()))
    }
    await next()
  }
}
