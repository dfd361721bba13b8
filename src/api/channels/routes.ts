import { createRoute, z } from '@hono/zod-openapi'
import { UserPlatform } from '../../models/user.ts'
import { IdParam } from '../params.ts'
import { commonErrors, notFoundError, signedIn } from '../responses.ts'

const Platform = z.enum(['telegram', 'slack', 'whatsapp', 'email', 'bridge'])

const ChannelState = z
  .object({
    platform: Platform,
    configured: z.boolean().openapi({ description: 'The channel is in the agent’s settings and enabled, and the agent is enabled.' }),
    plugin: z.object({ name: z.string(), enabled: z.boolean() }).nullable().openapi({ description: 'The plugin serving the platform; null when none is installed.' }),
    webhook_url: z.string().nullable().openapi({ description: 'Where the platform must deliver; null for email, which the platform fetches.' }),
    reachable: z.boolean().nullable().openapi({ description: 'Whether the platform reaches the webhook (null: not known yet).' }),
    reachable_detail: z.string(),
    last_seen_at: z.iso.datetime().nullable().openapi({ description: 'The last request of the platform that passed verification.' }),
    last_delivery_at: z.iso.datetime().nullable(),
    last_error: z.string().nullable(),
    last_error_at: z.iso.datetime().nullable(),
    pending_replies: z.int().openapi({ description: 'Replies waiting to go out (being retried).' }),
    failed_replies: z.int().openapi({ description: 'Replies given up on after their retries; kept, with the error.' }),
  })
  .openapi('ChannelState')

export const channelStatesRoute = createRoute({
  method: 'get',
  path: '/api/agents/{id}/channels',
  operationId: 'getAgentChannels',
  summary: 'How each of the agent’s channels fares',
  description:
    'For each platform in the agent’s `channels` (or the one `platform` names): configured, webhook reachable, last delivery, last error, replies waiting or failed. ' +
    'Reachability is asked of the platform where it can tell, for up to 3 seconds. Company admins.',
  tags: ['Agents'],
  security: signedIn,
  request: {
    params: IdParam,
    query: z.object({ platform: Platform.optional().openapi({ description: 'Only this platform: an empty list when the agent has no settings for it.' }) }),
  },
  responses: {
    200: { description: 'One entry per platform the agent has settings for.', content: { 'application/json': { schema: z.object({ data: z.array(ChannelState) }) } } },
    ...commonErrors,
    ...notFoundError,
  },
})

export const linkCodeRoute = createRoute({
  method: 'post',
  path: '/api/me/channel-links',
  operationId: 'createChannelLinkCode',
  summary: 'A code that links a chat platform account to you',
  description:
    'Send the code to an agent on Telegram, Slack, WhatsApp or email as `/link <code>` (on Telegram, `/start <code>` works too): that account then speaks as you, in this company. ' +
    'A code works once, for 15 minutes; asking again replaces it.',
  tags: ['Auth'],
  security: signedIn,
  responses: {
    201: {
      description: 'The code, shown once.',
      content: { 'application/json': { schema: z.object({ code: z.string().openapi({ example: 'K7M2Q-9XW4T' }), expires_at: z.iso.datetime() }).openapi('ChannelLinkCode') } },
    },
    ...commonErrors,
  },
})

export const myPlatformsRoute = createRoute({
  method: 'get',
  path: '/api/me/platforms',
  operationId: 'listMyPlatforms',
  summary: 'Your linked chat platform accounts, in this company',
  tags: ['Auth'],
  security: signedIn,
  responses: { 200: { description: 'Your links.', content: { 'application/json': { schema: z.object({ data: z.array(UserPlatform.record) }) } } }, ...commonErrors },
})

export const unlinkPlatformRoute = createRoute({
  method: 'delete',
  path: '/api/me/platforms/{id}',
  operationId: 'unlinkMyPlatform',
  summary: 'Unlink one of your chat platform accounts',
  description: 'That account becomes a stranger to the agents again. Someone else’s link answers 404.',
  tags: ['Auth'],
  security: signedIn,
  request: { params: IdParam },
  responses: { 204: { description: 'Unlinked.' }, ...commonErrors, ...notFoundError },
})
