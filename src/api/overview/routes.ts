import { createRoute, z } from '@hono/zod-openapi'
import { commonErrors, conflictErrors, signedIn } from '../responses.ts'

const ChannelFailure = z
  .object({
    agent_id: z.uuid(),
    agent_name: z.string(),
    platform: z.string(),
    direction: z.enum(['inbound', 'reply']).openapi({ description: 'A message from the platform that could not be answered, or a reply that could not be sent.' }),
    error: z.string(),
    at: z.string(),
  })
  .openapi('ChannelFailure')

export const Overview = z
  .object({
    since: z.string().openapi({ description: 'The start of the day (UTC) the day’s figures count from.' }),
    turns: z.int().openapi({ description: 'Answers agents gave today, in the web chat and on the channels.' }),
    failed_turns: z.int().openapi({ description: 'Of those, answers that failed.' }),
    active_conversations: z.int().openapi({ description: 'Conversations with a message in the last 24 hours.' }),
    channels: z.object({
      waiting_inbound: z.int().openapi({ description: 'Messages from the platforms not answered yet.' }),
      waiting_replies: z.int().openapi({ description: 'Replies not delivered yet.' }),
      failed: z.int().openapi({ description: 'Deliveries and replies that failed for good today.' }),
      latest_failures: z.array(ChannelFailure).openapi({ description: 'The latest five of them.' }),
    }),
    background_tasks: z.object({ running: z.int(), failed: z.int().openapi({ description: 'Failed or interrupted today.' }) }),
    breakers_open: z.array(z.string()).openapi({ description: 'MCP servers whose circuit breaker is open on the process that answered.' }),
  })
  .openapi('Overview')

export const overviewRoute = createRoute({
  method: 'get',
  path: '/api/overview',
  operationId: 'getOverview',
  summary: 'Is everything all right? The company’s day at a glance',
  description: 'For the company’s admins: today’s turns and failures, active conversations, channel queues and failures, background tasks and open breakers.',
  tags: ['Operations'],
  security: signedIn,
  responses: {
    200: { description: 'The overview.', content: { 'application/json': { schema: Overview } } },
    ...commonErrors,
    ...conflictErrors,
  },
})
