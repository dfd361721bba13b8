import { createRoute, z } from '@hono/zod-openapi'
import { commonErrors, signedIn } from '../responses.ts'

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
