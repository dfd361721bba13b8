import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi'
import { requireActor } from '../../auth/access.ts'
import { ApiError } from '../../errors.ts'
import type { ApiEnv } from '../../http/env.ts'
import type { Actor } from '../../auth/actor.ts'
import { ConnectionRequired } from '../../mcp/connections.ts'
import type { ServerDefinition } from '../../mcp/upstreams.ts'
import type { Services } from '../../services.ts'
import { commonErrors, notFoundError, signedIn, validationErrors } from '../responses.ts'
import { serverParam } from './routes.ts'

const Connection = z
  .object({
    server: z.string(),
    server_id: z.uuid(),
    status: z.enum(['connected', 'expired', 'not_connected']).openapi({ description: 'expired: the server refused the sign-in; reconnect.' }),
    changed_at: z.iso.datetime().nullable(),
  })
  .openapi('McpConnection')

const listRoute = createRoute({
  method: 'get',
  path: '/api/mcp/connections',
  operationId: 'listMcpConnections',
  summary: 'Your own connections to the MCP servers that sign each person in with OAuth',
  tags: ['MCP'],
  security: signedIn,
  responses: { 200: { description: 'One per such server you may use.', content: { 'application/json': { schema: z.object({ data: z.array(Connection) }) } } }, ...commonErrors },
})

const connectRoute = createRoute({
  method: 'post',
  path: '/api/mcp/connections/{server}/connect',
  operationId: 'connectMcpServer',
  summary: 'Start connecting your account to an MCP server (OAuth)',
  description:
    'Discovers the server’s authorization server, registers the platform there if needed and starts an authorization ' +
    'with PKCE. Answers the URL to send your browser to; it comes back to the console’s /me/connections/callback. ' +
    'When a stored refresh token is enough, the connection is renewed at once and no URL is given.',
  tags: ['MCP'],
  security: signedIn,
  request: { params: serverParam },
  responses: {
    200: { description: 'Where to go, or that it is connected.', content: { 'application/json': { schema: z.object({ authorization_url: z.string().optional(), status: z.enum(['pending', 'connected']) }) } } },
    ...commonErrors,
    ...notFoundError,
    422: { description: 'The server does not sign people in with OAuth, or its authorization server could not be used.' },
  },
})

const callbackRoute = createRoute({
  method: 'post',
  path: '/api/mcp/connections/callback',
  operationId: 'finishMcpConnection',
  summary: 'Finish connecting: the code and state the server’s authorization server sent back',
  tags: ['MCP'],
  security: signedIn,
  request: { body: { content: { 'application/json': { schema: z.object({ code: z.string().min(1).max(4096), state: z.string().min(1).max(512) }) } }, required: true } },
  responses: { 200: { description: 'Connected.', content: { 'application/json': { schema: Connection } } }, ...commonErrors, ...notFoundError, ...validationErrors },
})

const disconnectRoute = createRoute({
  method: 'delete',
  path: '/api/mcp/connections/{server}',
  operationId: 'disconnectMcpServer',
  summary: 'Disconnect your account from an MCP server: its tokens leave the vault',
  tags: ['MCP'],
  security: signedIn,
  request: { params: serverParam },
  responses: { 204: { description: 'Disconnected.' }, ...commonErrors, ...notFoundError },
})

/** The OAuth server of the caller's company called `name`, which they may use; 404 otherwise. */
async function oauthServer(services: Services, actor: Actor, find: (s: ServerDefinition) => boolean, what: string): Promise<ServerDefinition> {
  const servers = actor.companyId ? await services.mcpDirectory.servers(actor.companyId) : []
  const judge = await services.catalog.judge(actor)
  const server = servers.find((s) => find(s) && judge.server(s.name))
  if (!server) throw new ApiError('not_found', `There is no MCP server ${what} you may use.`)
  if (!server.oauth) throw new ApiError('validation_error', `The MCP server ${server.name} does not sign people in with OAuth.`)
  return server
}

/** Errors of the flow as the person can act on them: never what the remote server said in full. */
function refusal(error: unknown, server: string): ApiError {
  if (error instanceof ApiError) return error
  if (error instanceof ConnectionRequired) return new ApiError('validation_error', error.message)
  return new ApiError('validation_error', `Signing in to the MCP server ${server} failed: ${String((error as Error)?.message ?? error).slice(0, 200)}`)
}

export function mountMcpConnections(app: OpenAPIHono<ApiEnv>): void {
  app.openapi(listRoute, async (c) => {
    const actor = requireActor(c.var.actor)
    const { mcpDirectory, catalog, mcpConnections } = c.var.services
    const servers = actor.companyId ? (await mcpDirectory.servers(actor.companyId)).filter((s) => s.oauth) : []
    const judge = await catalog.judge(actor)
    const statuses = await mcpConnections.statuses(actor.userId)
    const data = servers
      .filter((s) => judge.server(s.name))
      .map((s) => ({ server: s.name, server_id: s.id, status: statuses.get(s.id)?.status ?? ('not_connected' as const), changed_at: statuses.get(s.id)?.changed_at.toISOString() ?? null }))
    return c.json({ data }, 200)
  })

  app.openapi(connectRoute, async (c) => {
    const actor = requireActor(c.var.actor)
    const name = c.req.valid('param').server
    const server = await oauthServer(c.var.services, actor, (s) => s.name === name, name)
    const started = await c.var.services.mcpConnections.start(actor.userId, server).catch((error) => {
      throw refusal(error, server.name)
    })
    return c.json(started.authorizationUrl ? { authorization_url: started.authorizationUrl, status: 'pending' as const } : { status: 'connected' as const }, 200)
  })

  app.openapi(callbackRoute, async (c) => {
    const actor = requireActor(c.var.actor)
    const { code, state } = c.req.valid('json')
    const serverId = state.slice(0, state.indexOf('.'))
    const server = await oauthServer(c.var.services, actor, (s) => s.id === serverId, 'for this answer')
    const { mcpConnections, upstreams } = c.var.services
    await mcpConnections.finish(actor.userId, server, code, state).catch((error) => {
      throw refusal(error, server.name)
    })
    await upstreams.forget(actor.userId, server.id)
    return c.json({ server: server.name, server_id: server.id, status: 'connected' as const, changed_at: new Date().toISOString() }, 200)
  })

  app.openapi(disconnectRoute, async (c) => {
    const actor = requireActor(c.var.actor)
    const name = c.req.valid('param').server
    const server = await oauthServer(c.var.services, actor, (s) => s.name === name, name)
    await c.var.services.mcpConnections.disconnect(actor.userId, server.id)
    await c.var.services.upstreams.forget(actor.userId, server.id)
    return c.body(null, 204)
  })
}
