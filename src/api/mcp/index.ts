import { z, type OpenAPIHono } from '@hono/zod-openapi'
import { unauthorized } from '../../auth/access.ts'
import { mayUseServer } from '../../mcp/permissions.ts'
import type { ServerDefinition } from '../../mcp/upstreams.ts'
import { McpServer } from '../../models/mcp.ts'
import { parseListQuery } from '../../models/list-query.ts'
import { listRecords } from '../../models/records.ts'
import type { ApiEnv } from '../context.ts'
import { ApiError } from '../errors.ts'
import type { Services } from '../../services.ts'
import { throttle } from '../../throttle/middleware.ts'

/** ALL /mcp/{server}: the MCP gateway, Streamable HTTP (POST, GET, DELETE with Mcp-Session-Id), per user and server. */
export function mountMcp(app: OpenAPIHono<ApiEnv>, services: Services): void {
  app.openAPIRegistry.registerPath({
    method: 'post',
    path: '/mcp/{server}',
    operationId: 'mcpGateway',
    summary: 'MCP gateway (Streamable HTTP; GET and DELETE with Mcp-Session-Id too)',
    description: 'Tools of the named server that the caller may use. A tool the caller may not use is neither listed nor callable.',
    tags: ['MCP'],
    security: [{ sessionCookie: [] }, { apiToken: [] }],
    request: { params: z.object({ server: z.string().openapi({ param: { name: 'server', in: 'path' }, example: 'everything' }) }) },
    responses: { 200: { description: 'An MCP JSON-RPC response, or an SSE stream of them.' } },
  })

  const { config, throttles, clock } = services
  // A token bucket per user and server: one busy host cannot starve an upstream for everyone else.
  const bucket = throttle('mcp', throttles.mcp, config.mcpRate, clock, (c) => `${c.get('actor')?.userId}:${c.req.param('server')}`)

  app.on(['GET', 'POST', 'DELETE'], '/mcp/:server', async (c, next) => {
    if (!c.var.actor) throw unauthorized()
    return bucket(c, next)
  })

  app.on(['GET', 'POST', 'DELETE'], '/mcp/:server', async (c) => {
    const actor = c.var.actor!
    const name = c.req.param('server')
    const { data } = await listRecords(services.db, actor, McpServer, parseListQuery(McpServer, { name: [`eq.${name}`], enabled: ['is.true'] }))
    const server = data[0] as unknown as ServerDefinition | undefined
    if (!server) throw new ApiError('not_found', `There is no MCP server ${name}.`)

    const rules = () =>
      services.db.selectFrom('mcp_permissions').select(['user_id', 'server', 'tool', 'effect']).where('company_id', '=', actor.companyId).execute()
    if (!mayUseServer(await rules(), actor.userId, server.name)) throw new ApiError('forbidden', `You may not use the MCP server ${name}.`)

    const sessionId = c.req.header('mcp-session-id')
    if (sessionId) {
      const session = services.gateway.session(sessionId, actor, server)
      if (!session) throw new ApiError('not_found', 'No such MCP session; initialize a new one.')
      return session.transport.handleRequest(c.req.raw)
    }
    if (c.req.method !== 'POST') throw new ApiError('bad_request', 'Start with an initialize request (POST), then send its Mcp-Session-Id.')
    const transport = await services.gateway.open(actor, server, rules)
    return transport.handleRequest(c.req.raw)
  })
}
