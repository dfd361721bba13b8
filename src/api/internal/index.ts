import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi'
import { secretsEqual } from '../../auth/secrets.ts'
import type { Config } from '../../config.ts'
import type { ApiEnv } from '../../http/env.ts'
import { ApiError } from '../../errors.ts'
import { commonErrors } from '../responses.ts'
import { queueDepths } from '../../channels/queue.ts'
import { VERSION } from '../../version.ts'
import { mountBridge } from './bridge.ts'

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

const DrainStatus = z
  .object({
    draining: z.boolean(),
    since: z.string().nullable().openapi({ description: 'When the drain began.' }),
    running: z.object({
      turns: z.int().openapi({ description: 'Chat turns running here.' }),
      channel_work: z.int().openapi({ description: 'Channel deliveries and replies this process is working on.' }),
      background_tasks: z.int().openapi({ description: 'Background tasks running here.' }),
    }),
    empty: z.boolean().openapi({ description: 'Nothing runs any more: the process may be stopped.' }),
  })
  .openapi('DrainStatus')

const drainStatus = { 200: { description: 'This process’s drain, and what still runs here.', content: { 'application/json': { schema: DrainStatus } } } }

const beginDrainRoute = createRoute({
  method: 'post',
  path: '/api/internal/drain',
  operationId: 'beginDrain',
  summary: 'Drain this process for a rolling deploy',
  description:
    'From now on this process takes no new chat turns, webhooks or background tasks (503 with Retry-After), stops claiming queued channel work and polling mailboxes, ' +
    'and /readyz answers 503 "draining" so the balancer moves traffic away. What runs finishes. Ask GET until `empty`, then stop the process. Calling it again only reports.',
  tags: ['Internal'],
  security: [{ internalSecret: [] }],
  responses: { ...drainStatus, ...commonErrors, 503: { description: 'INTERNAL_API_SECRET is not set, so internal endpoints are off.' } },
})

const drainStatusRoute = createRoute({
  method: 'get',
  path: '/api/internal/drain',
  operationId: 'getDrain',
  summary: 'Whether this process drains, and what still runs here',
  tags: ['Internal'],
  security: [{ internalSecret: [] }],
  responses: { ...drainStatus, ...commonErrors, 503: { description: 'INTERNAL_API_SECRET is not set, so internal endpoints are off.' } },
})

const statusRoute = createRoute({
  method: 'get',
  path: '/api/internal/status',
  operationId: 'getPlatformStatus',
  summary: 'The platform’s processes, versions, event-bus lag and queue depths',
  description: 'The processes heard from in the last 30 seconds (each beats every 10), the one answering first; the event bus as this process hears it; the channel queues, shared by all.',
  tags: ['Internal'],
  security: [{ internalSecret: [] }],
  responses: {
    200: {
      description: 'The status.',
      content: {
        'application/json': {
          schema: z
            .object({
              process: z.string().openapi({ description: 'The id of the process that answered.' }),
              version: z.string(),
              processes: z.array(
                z.object({ id: z.string(), host: z.string(), pid: z.int(), version: z.string(), started_at: z.string(), last_seen_at: z.string(), draining: z.boolean() }),
              ),
              event_bus: z.object({
                listening: z.boolean(),
                lag_seconds: z.number().nullable().openapi({ description: 'How long the last event of another process took to arrive here; null before any (or with one process).' }),
              }),
              queues: z.object({
                inbox: z.object({ pending: z.int(), failed: z.int() }),
                outbox: z.object({ pending: z.int(), failed: z.int() }),
              }),
            })
            .openapi('PlatformStatus'),
        },
      },
    },
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
  // A drain is this process's: behind a balancer, the caller reaches the process to drain by its own address.
  app.openapi(beginDrainRoute, async (c) => {
    const { drain, clock, log } = c.var.services
    if (!drain.draining) log.info('draining for a restart')
    await drain.begin(new Date(clock.now()))
    return c.json(drain.status(), 200)
  })
  app.openapi(drainStatusRoute, (c) => c.json(c.var.services.drain.status(), 200))
  mountBridge(app)
  app.openapi(statusRoute, async (c) => {
    const { presence, events, db } = c.var.services
    const [processes, queues] = await Promise.all([presence.alive(), queueDepths(db)])
    return c.json({ process: presence.id, version: VERSION, processes, event_bus: { listening: events.listening(), lag_seconds: events.lag() }, queues }, 200)
  })
}
