import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi'
import type { ApiEnv } from '../../http/env.ts'
import { anyUuid } from '../../models/fields.ts'
import { IdParam } from '../params.ts'
import { commonErrors, notFoundError, signedIn, validationErrors } from '../responses.ts'

export const serverParam = z.object({
  server: z.string().openapi({ param: { name: 'server', in: 'path' }, example: 'everything' }),
})

const BreakerStatus = z
  .object({
    server: z.string(),
    user_id: z.uuid().openapi({ description: 'Whose upstream connection: each user has their own.' }),
    delegated: z.boolean().openapi({ description: 'The connection agents use when acting as this user, their service account.' }),
    state: z.enum(['closed', 'open', 'half-open']).openapi({
      description: 'closed: calls pass; open: calls fail at once; half-open: the next call is let through as the one probe.',
    }),
    failures: z.int().openapi({ description: 'Consecutive upstream failures.' }),
    opened_at: z.iso.datetime().nullable(),
    retry_at: z.iso.datetime().nullable().openapi({ description: 'While open: when the probe will be let through.' }),
  })
  .openapi('McpBreaker')

export const breakersRoute = createRoute({
  method: 'get',
  path: '/api/mcp/breakers',
  operationId: 'listMcpBreakers',
  summary: 'Circuit breakers of the upstream MCP connections',
  description:
    'One breaker per upstream connection (user and server), from its first use. Company admins see everyone’s in their company; others see their own.',
  tags: ['MCP'],
  security: signedIn,
  request: { query: z.object({ server: z.string().optional().openapi({ description: 'Only this server’s.' }) }) },
  responses: {
    200: { description: 'The breakers.', content: { 'application/json': { schema: z.object({ data: z.array(BreakerStatus) }) } } },
    ...commonErrors,
  },
})

const breakerState = z.enum(['closed', 'open', 'half-open']).openapi({
  description: 'The caller’s own breaker for this server: closed (calls pass), open (calls fail at once), half-open (the next call probes).',
})

const CatalogueTool = z
  .object({
    name: z.string().openapi({ example: 'echo', description: 'As the server lists it: what `mcp_permissions.servers.<server>.allow`/`deny` and McpPermission.tool name.' }),
    description: z.string().openapi({ example: 'Echoes back the input' }),
    allowed: z.boolean().optional().openapi({ description: 'With `user_id`: whether that user’s permission rules let them call it.' }),
  })
  .openapi('McpCatalogueTool')

const CatalogueEntry = z
  .object({
    name: z.string().openapi({
      example: 'everything',
      description:
        'The key an agent’s `mcp_permissions.servers` and McpPermission.server use; for a plugin, also its name in the agent’s `plugins.enabled`, and the gateway path /mcp/{name}.',
    }),
    kind: z.enum(['server', 'plugin']).openapi({ description: 'server: a company’s McpServer; plugin: a plugin’s built-in tools, named after the plugin.' }),
    id: z.uuid().nullable().openapi({ description: 'The McpServer record (null for a plugin): what POST /api/mcp/servers/{id}/test takes.' }),
    description: z.string(),
    enabled: z.boolean().openapi({ description: 'A disabled server is not served, and its tools are not listed.' }),
    allowed: z.boolean().optional().openapi({ description: 'With `user_id`: whether that user may use the server at all (some tool of it is allowed).' }),
    tools: z.array(CatalogueTool),
    error: z.string().optional().openapi({
      description: 'Why no tools are listed: the server could not be reached in time, or is not served. A short reason; never what the upstream said.',
      example: 'The connection was refused: nothing listens at the server’s address.',
    }),
    breaker: breakerState.nullable().openapi({ description: 'null for a plugin, which has no upstream connection.' }),
  })
  .openapi('McpCatalogueEntry')

export const catalogueRoute = createRoute({
  method: 'get',
  path: '/api/mcp/tools',
  operationId: 'listMcpTools',
  summary: 'The MCP tool catalogue: every server and plugin tool provider, with its tools',
  description:
    'Every MCP server of the caller’s company and every plugin’s built-in tool provider, each with the tools it lists. ' +
    'These are the names an agent configuration refers to: a server’s `name` is a key of `mcp_permissions.servers`, and a ' +
    'plugin provider is named after its plugin, as in `plugins.enabled`. Upstream servers are listed through the caller’s ' +
    'own connection (connections are per user), in parallel, each within 10 s; one that cannot be reached is answered ' +
    'with no tools, an `error` and its breaker state, and does not fail the rest. ' +
    'With `user_id`, every server and tool also says whether that user’s permission rules (theirs, else the company’s ' +
    'defaults) allow it. Company admins may preview anyone of their company and see every server; other members see the ' +
    'servers they may use and may preview only themselves.',
  tags: ['MCP'],
  security: signedIn,
  request: {
    query: z.object({
      user_id: anyUuid.optional().openapi({ description: 'Whose permissions to judge the catalogue by.', format: 'uuid', example: '01936f3e-6d2a-7c41-9b1e-2f3a4b5c6d7e' }),
    }),
  },
  responses: {
    200: {
      description: 'The catalogue.',
      content: {
        'application/json': {
          schema: z.object({
            user_id: z.uuid().nullable().openapi({ description: 'Whose permissions `allowed` reports; null without `user_id`.' }),
            data: z.array(CatalogueEntry),
          }),
        },
      },
    },
    ...commonErrors,
    ...notFoundError,
    422: validationErrors[422],
  },
})

export const testServerRoute = createRoute({
  method: 'post',
  path: '/api/mcp/servers/{id}/test',
  operationId: 'testMcpServer',
  summary: 'Test an MCP server: connect and list its tools',
  description:
    'Connects to the McpServer through the caller’s own upstream connection, the same path the gateway takes (the ' +
    'sandbox for stdio servers, the outbound-address policy for remote ones), and lists its tools. 200 whether or not ' +
    'it worked, since the test ran: `ok: false` carries a short reason, never what the upstream said. Tool names are ' +
    'what an agent’s `mcp_permissions.servers.<name>` lists. Needs the role that may edit McpServer records (admin).',
  tags: ['MCP'],
  security: signedIn,
  request: { params: IdParam },
  responses: {
    200: {
      description: 'How the test went.',
      content: {
        'application/json': {
          schema: z
            .union([
              z.object({ ok: z.literal(true), tools: z.array(CatalogueTool.omit({ allowed: true })), breaker: breakerState }),
              z.object({ ok: z.literal(false), error: z.string().openapi({ example: 'The server did not list its tools within 10 s.' }), breaker: breakerState }),
            ])
            .openapi('McpServerTest'),
        },
      },
    },
    ...commonErrors,
    ...notFoundError,
  },
})

const GATEWAY_SECURITY: Array<Record<string, string[]>> = [{ sessionCookie: [] }, { apiToken: [] }, { oauth: ['mcp'] }]

/** Problems the gateway answers, whichever method. */
const gatewayErrors = {
  400: { description: 'A malformed MCP message, or a request without the Mcp-Session-Id it needs.' },
  401: { description: 'No valid credentials; WWW-Authenticate names the resource metadata to start OAuth from.' },
  403: { description: 'An OAuth token granted for another server or without the mcp scope.' },
  404: { description: 'No such server for the caller, or an Mcp-Session-Id that is not (or no longer) theirs.' },
  429: { description: 'Over the per-user, per-server token bucket; see Retry-After.' },
}

/**
 * The gateway in the document: Streamable HTTP on /mcp/{server} and on /mcp (every server the caller may use, as
 * one), each with POST (messages), GET (the server-to-client stream of a session) and DELETE (ending a session).
 */
export function documentGateway(app: OpenAPIHono<ApiEnv>): void {
  const places = [
    { path: '/mcp/{server}', id: 'Server', what: 'the named server (a company’s MCP server, or a plugin’s built-in tools)', params: serverParam },
    { path: '/mcp', id: 'Aggregate', what: 'every server the caller may use, as one (tools and prompts named `<server>__<name>`)', params: undefined },
  ] as const
  const methods = [
    { method: 'post', verb: 'call', summary: 'Send MCP messages (Streamable HTTP)', ok: 'An MCP JSON-RPC response, or an SSE stream of them; 202 for notifications.' },
    { method: 'get', verb: 'stream', summary: 'Open the server-to-client stream of a session (Mcp-Session-Id)', ok: 'An SSE stream of the session’s server-to-client messages.' },
    { method: 'delete', verb: 'end', summary: 'End a session (Mcp-Session-Id)', ok: 'The session is over.' },
  ] as const
  for (const place of places) {
    for (const m of methods) {
      app.openAPIRegistry.registerPath({
        method: m.method,
        path: place.path,
        operationId: `mcp${place.id}${m.verb[0]!.toUpperCase()}${m.verb.slice(1)}`,
        summary: `${m.summary}: ${place.path}`,
        description: `The MCP gateway for ${place.what}. What the caller may not use is neither listed nor served.`,
        tags: ['MCP'],
        security: GATEWAY_SECURITY,
        ...(place.params ? { request: { params: place.params } } : {}),
        responses: { 200: { description: m.ok }, ...gatewayErrors },
      })
    }
  }
}
