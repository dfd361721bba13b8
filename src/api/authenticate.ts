import type { Context, MiddlewareHandler } from 'hono'
import { readCredentials } from '../auth/authenticator.ts'
import { makesCredential } from '../auth/credential-doors.ts'
import type { Services } from '../services.ts'
import type { ApiEnv } from '../http/env.ts'
import { ApiError } from '../errors.ts'
import { isUuid } from '../models/fields.ts'
import { originOf } from '../http/origin.ts'
import { judgeAudience, metadataUrl, targetOfPath } from '../oauth/resources.ts'

export const COMPANY_HEADER = 'x-switchboard-company'

/**
 * Resolves the caller from a bearer token or the session cookie. No credential, or a dead one, leaves the actor
 * unset: public routes still answer, protected ones say 401. `X-Switchboard-Company` picks the company to work
 * in when the user belongs to several. An OAuth access token serves only the resource and scopes it was granted
 * for: another resource is a 401 (invalid_token), a scope it lacks a 403 (insufficient_scope), as RFC 6750 says;
 * and it never makes a credential (credential-doors.ts).
 */
export function authenticate(services: Services): MiddlewareHandler<ApiEnv> {
  const base = services.config.baseUrl
  return async (c, next) => {
    const credentials = readCredentials(c.req.raw.headers)
    if (credentials) {
      const company = c.req.header(COMPANY_HEADER)
      if (company !== undefined && !isUuid(company)) {
        throw new ApiError('bad_request', `${COMPANY_HEADER} must be a company id (a UUID).`)
      }
      const actor = await services.authenticator.actorFor(credentials, company?.toLowerCase())
      if (actor?.grant) {
        const verdict = judgeAudience(base, actor.grant, c.req.path)
        if (verdict === 'invalid_token') throw new ApiError('unauthorized', `This OAuth access token was issued for ${actor.grant.resource}, not for ${c.req.path}.`)
        if (verdict === 'insufficient_scope') {
          c.header('www-authenticate', `Bearer error="insufficient_scope", scope="${targetOfPath(c.req.path).kind}", resource_metadata="${metadataUrl(base, targetOfPath(c.req.path))}"`)
          throw new ApiError('forbidden', `This OAuth access token’s scope (${actor.grant.scopes.join(' ')}) does not cover ${c.req.path}.`)
        }
        if (makesCredential(c.req.method, c.req.path)) {
          throw new ApiError('forbidden', 'An OAuth access token may not create credentials or change how the account signs in: what it made would outlive the grant. Sign in to do this.')
        }
      }
      // Where the request came from travels with who made it, so whatever it writes is audited with both.
      if (actor) c.set('actor', { ...actor, origin: originOf(c) })
    }
    await next()
  }
}

/**
 * Every 401 says how to get a token (RFC 9728 §5.1): where the protected resource metadata of the path is, which
 * names this platform as the authorization server. An MCP host starts its OAuth flow from this header.
 */
export function bearerChallenge(baseUrl: string): MiddlewareHandler<ApiEnv> {
  return async (c, next) => {
    await next()
    // The OAuth endpoints authenticate clients, not bearers: their 401 says how (Basic) or nothing.
    if (c.res.status !== 401 || c.req.path.startsWith('/oauth/')) return
    const metadata = `resource_metadata="${metadataUrl(baseUrl, targetOfPath(c.req.path))}"`
    c.res.headers.set('www-authenticate', presentedBearer(c) ? `Bearer realm="switchboard", error="invalid_token", ${metadata}` : `Bearer realm="switchboard", ${metadata}`)
  }
}

function presentedBearer(c: Context): boolean {
  return /^Bearer\s/i.test(c.req.header('authorization') ?? '')
}
