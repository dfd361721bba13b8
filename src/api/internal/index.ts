import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi'
import { secretsEqual } from '../../auth/secrets.ts'
import type { Config } from '../../config.ts'
import type { ApiEnv } from '../../http/env.ts'
import { ApiError } from '../../errors.ts'
import { commonErrors } from '../responses.ts'

const pingRoute = createRoute({
  method: 'get',
  path: '/api/internal/ping',
  operationId: 'internalPing',
  summary: 'Check the internal secret (for the bot and MCP subprocesses)',
  tags: ['Internal'],
  security: [{ internalSecret: [] }],
  responses: {
    200: { description: 'The secret is right.', content: { 'application/json': { schema: z.object({ ok: z.literal(true) }) } } },
    ...commonErrors,
    503: { description: 'INTERNAL_API_SECRET is not set, so internal endpoints are off.' },
  },
})

/**
 * Every /api/internal/* request needs `Authorization: Bearer <INTERNAL_API_SECRET>`. Without the variable the
 * endpoints are closed (503 saying why), never open.
 */
export function mountInternal(app: OpenAPIHono<ApiEnv>, config: Config): void {
  app.openAPIRegistry.registerComponent('securitySchemes', 'internalSecret', {
    type: 'http',
    scheme: 'bearer',
    description: 'The value of INTERNAL_API_SECRET.',
  })
  app.use('/api/internal/*', async (c, next) => {
    if (!config.internalApiSecret) {
      throw new ApiError('unavailable', 'Internal endpoints are off: INTERNAL_API_SECRET is not set on this server.')
    }
    const given = /^Bearer\s+(\S+)$/i.exec(c.req.header('authorization') ?? '')?.[1] ?? ''
    if (!secretsEqual(given, config.internalApiSecret)) {
      throw new ApiError('unauthorized', 'Internal endpoints need Authorization: Bearer <INTERNAL_API_SECRET>.')
    }
    await next()
  })
  app.openapi(pingRoute, (c) => c.json({ ok: true as const }, 200))
}
