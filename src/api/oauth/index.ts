import type { OpenAPIHono } from '@hono/zod-openapi'
import { cors } from 'hono/cors'
import type { ApiEnv } from '../../http/env.ts'
import type { Services } from '../../services.ts'
import { mountOAuthAuthorize } from './authorize.ts'
import { mountOAuthEndpoints } from './endpoints.ts'
import { mountOAuthMetadata } from './metadata.ts'

/**
 * The platform as an OAuth 2.1 authorization server for MCP hosts (MCP authorization, revision 2026-07-28): the
 * discovery documents, the token, revocation and registration endpoints, and the consent API the console uses.
 */
export function mountOAuth(app: OpenAPIHono<ApiEnv>, services: Services): void {
  // Browser-based hosts (the MCP Inspector) call these from their own origin, without cookies.
  const open = cors({ origin: '*', allowMethods: ['GET', 'POST', 'OPTIONS'], allowHeaders: ['authorization', 'content-type', 'mcp-protocol-version'], maxAge: 600 })
  app.use('/.well-known/*', open)
  app.use('/oauth/*', open)
  mountOAuthMetadata(app, services.config)
  mountOAuthEndpoints(app, services)
  mountOAuthAuthorize(app)
}
