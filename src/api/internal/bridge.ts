import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi'
import { inboundOf, takeReplies } from '../../channels/bridge.ts'
import { ApiError } from '../../errors.ts'
import type { ApiEnv } from '../../http/env.ts'
import { commonErrors, notFoundError, validationErrors } from '../responses.ts'

const security = [{ internalSecret: [] }]
const params = z.object({ agent_id: z.uuid().openapi({ param: { name: 'agent_id', in: 'path' }, description: 'The agent whose bridge channel is on.' }) })
const network = z.string().regex(/^[a-z][a-z0-9-]{0,31}$/, 'a lowercase name, e.g. discord').openapi({ example: 'discord' })

const BridgeMessage = z
  .strictObject({
    network,
    delivery_id: z.string().min(1).max(200).openapi({ description: 'The platform’s id of this message: a second post of it is taken once.' }),
    thread: z.string().min(1).max(500).openapi({ description: 'The platform’s id of the thread (channel, room, chat) the replies go to.' }),
    sender: z.strictObject({
      id: z.string().min(1).max(200).openapi({ description: 'The platform’s id of the person: linked to a user as UserPlatform platform `bridge`, platform_user_id `<network>:<id>`.' }),
      name: z.string().max(200).optional(),
    }),
    text: z.string().max(100_000),
    attachments: z.array(z.strictObject({ name: z.string().min(1).max(200), base64: z.string() })).max(10).optional(),
  })
  .openapi('BridgeMessage', { example: { network: 'discord', delivery_id: '1177', thread: 'channel-42', sender: { id: '8812', name: 'Ada' }, text: 'Where is my order?' } })

const unavailable = { 503: { description: 'INTERNAL_API_SECRET is not set, or this process drains (Retry-After).' } }

const postMessageRoute = createRoute({
  method: 'post',
  path: '/api/internal/bridge/{agent_id}/messages',
  operationId: 'bridgeMessage',
  summary: 'A message from a bridged platform (Discord, Matrix, Teams…) to an agent',
  description:
    'For an out-of-process bot of a platform without a plugin. Each delivery is taken once (by network and delivery_id), answered as the linked user, ' +
    'with the same linking and permission rules as the channel plugins (an unknown sender is invited to link, or refused, as the agent’s bridge settings say). ' +
    'The replies go to the agent’s callback_url, or wait for GET …/replies.',
  tags: ['Internal'],
  security,
  request: { params, body: { required: true, content: { 'application/json': { schema: BridgeMessage } } } },
  responses: {
    202: { description: 'Taken; `fresh` is false for a delivery taken before.', content: { 'application/json': { schema: z.object({ fresh: z.boolean() }) } } },
    ...commonErrors,
    ...notFoundError,
    ...validationErrors,
    ...unavailable,
  },
})

const Reply = z.object({ network: z.string(), thread: z.string(), text: z.string(), created_at: z.string() }).openapi('BridgeReply')

const repliesRoute = createRoute({
  method: 'get',
  path: '/api/internal/bridge/{agent_id}/replies',
  operationId: 'bridgeReplies',
  summary: 'The agent’s replies waiting for a bridge without a callback (a long poll)',
  description: 'Oldest first; each reply is handed out once, to whichever bridge asks first. With `wait`, answers as soon as a reply is there, or empty after that many seconds.',
  tags: ['Internal'],
  security,
  request: {
    params,
    query: z.object({
      network: network.optional(),
      wait: z.coerce.number().int().min(0).max(30).default(0).openapi({ description: 'Seconds to wait for a reply (0 to 30).' }),
      limit: z.coerce.number().int().min(1).max(100).default(50),
    }),
  },
  responses: { 200: { description: 'The replies.', content: { 'application/json': { schema: z.object({ data: z.array(Reply) }) } } }, ...commonErrors, ...notFoundError, ...unavailable },
})

const POLL_MS = 250

/** /api/internal/bridge: platforms without a plugin, through a bot that runs beside the platform. */
export function mountBridge(app: OpenAPIHono<ApiEnv>): void {
  const endpointOf = async (c: { var: ApiEnv['Variables'] }, agentId: string) => {
    const endpoint = await c.var.services.channels.endpoint(agentId, 'bridge')
    if (!endpoint) throw new ApiError('not_found', 'No enabled agent with a bridge channel switched on has this id.')
    return endpoint
  }

  app.openapi(postMessageRoute, async (c) => {
    const endpoint = await endpointOf(c, c.req.valid('param').agent_id)
    const fresh = await c.var.services.channels.deliveries.receive(endpoint, inboundOf(c.req.valid('json')))
    return c.json({ fresh }, 202)
  })

  app.openapi(repliesRoute, async (c) => {
    const { agent_id } = c.req.valid('param')
    await endpointOf(c, agent_id)
    const { network, wait, limit } = c.req.valid('query')
    const { db, clock } = c.var.services
    const until = clock.now() + wait * 1000
    for (;;) {
      const data = await takeReplies(db, agent_id.toLowerCase(), network, limit)
      if (data.length > 0 || clock.now() >= until || c.req.raw.signal.aborted) return c.json({ data }, 200)
      await Bun.sleep(POLL_MS)
    }
  })
}
