import type { OpenAPIHono } from '@hono/zod-openapi'
import type { Context, MiddlewareHandler } from 'hono'
import { cors } from 'hono/cors'
import { requireActor } from '../../auth/access.ts'
import { hasRole } from '../../auth/actor.ts'
import type { ApiEnv } from '../../http/env.ts'
import type { Services } from '../../services.ts'
import { throttle } from '../../throttle/middleware.ts'
import { AGGREGATE } from '../../mcp/gateway.ts'
import { mountMcpCatalogue } from './catalogue.ts'
import { mountMcpConnections } from './connections.ts'
import { breakersRoute, documentGateway } from './routes.ts'

/**
 * ALL /mcp/{server}: the MCP gateway, Streamable HTTP (POST, GET, DELETE with Mcp-Session-Id), per user and server;
 * ALL /mcp: every server the caller may use, as one.
 */
export function mountMcp(app: OpenAPIHono<ApiEnv>, services: Services): void {
  documentGateway(app)

  const { config, throttles, clock, gateway } = services
  // Browser-based hosts call the gateway from their own origin with a bearer token (never a cookie: no credentials
  // mode), and must read the session id and the OAuth challenge.
  const exposed = ['mcp-session-id', 'www-authenticate']
  const preflight = cors({
    origin: '*',
    allowMethods: ['GET', 'POST', 'DELETE', 'OPTIONS'],
    allowHeaders: ['authorization', 'content-type', 'accept', 'mcp-session-id', 'mcp-protocol-version', 'last-event-id'],
    exposeHeaders: exposed,
    maxAge: 600,
  })
  // The answer's own headers are added to once it is made: hono's cors sets them on a placeholder answer before the
  // route runs, and the route's answer is then copied into a new one to take them (5 % of a tools/call's CPU).
  const open: MiddlewareHandler<ApiEnv> = async (c, next) => {
    if (c.req.method === 'OPTIONS') return preflight(c, next)
    await next()
    c.res.headers.set('access-control-allow-origin', '*')
    c.res.headers.set('access-control-expose-headers', exposed.join(','))
  }
  // `/mcp/*` names `/mcp` too.
  app.use('/mcp/*', open)
  const serverOf = (c: Context<ApiEnv>) => c.req.param('server') ?? AGGREGATE
  // A token bucket per user and server: one busy host cannot starve an upstream for everyone else.
  const bucket = throttle('mcp', throttles.mcp, config.mcpRate, clock, (c) => `${c.get('actor')?.userId}:${serverOf(c)}`, services.metrics)

  // The gateway answers 404 for a server that does not exist and 403 for one the caller may not use.
  const handle = (c: Context<ApiEnv>) => gateway.handle(c.req.raw, requireActor(c.var.actor), serverOf(c))

  for (const path of ['/mcp', '/mcp/:server']) {
    app.on(['GET', 'POST', 'DELETE'], path, async (c, next) => {
      requireActor(c.var.actor)
      return bucket(c, next)
    })
    app.on(['GET', 'POST', 'DELETE'], path, handle)
  }

  app.openapi(breakersRoute, (c) => {
    const actor = requireActor(c.var.actor)
    if (!actor.companyId) return c.json({ data: [] }, 200)
    const { server } = c.req.valid('query')
    const breakers = services.upstreams.breakers(actor.companyId, hasRole(actor, 'admin') ? undefined : actor.userId)
    return c.json({ data: breakers.filter((b) => server === undefined || b.server === server).map(({ company_id: _, ...b }) => b) }, 200)
  })

  mountMcpCatalogue(app)
  mountMcpConnections(app)
}
