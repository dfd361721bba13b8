import { ApiError, createRoute, definePlugin, problem, z, type PluginContext } from '../../src/plugin-host/sdk.ts'
import { fetchAudio } from './files.ts'
import { slackDriver } from './driver.ts'
import { readDelivery } from './events.ts'
import { receiveInteractions } from './interactions.ts'
import { verifiedRequest } from './signature.ts'

const Acknowledged = z
  .object({ challenge: z.string().optional().openapi({ description: 'The url_verification handshake’s challenge, echoed.' }) })
  .openapi('SlackAcknowledgement')

const eventsRoute = createRoute({
  method: 'post',
  path: '/{agent_id}',
  operationId: 'receiveSlackEvents',
  summary: 'Slack Events API deliveries for an agent',
  description:
    'The Request URL of a Slack app’s Event Subscriptions. No sign-in: every request must carry Slack’s v0 signature ' +
    '(X-Slack-Signature over X-Slack-Request-Timestamp and the exact body, keyed with the signing secret the agent’s ' +
    'settings name) made within the last five minutes. Direct messages (message.im) and mentions (app_mention) are ' +
    'kept and answered soon after, a mention in its thread (an audio file shared with one is fetched and heard as a voice note); other events are acknowledged and ignored, as are ' +
    'deliveries Slack retries (X-Slack-Retry-Num) of an event already kept.',
  tags: ['Channels'],
  request: {
    params: z.object({ agent_id: z.uuid().openapi({ description: 'The agent whose Slack app this is.' }) }),
    // Described, not validated: the signature covers the exact bytes, so the handler reads them itself.
    body: {
      required: true,
      content: { 'application/json': { schema: { type: 'object' as const, description: 'An Events API envelope: url_verification or event_callback.' } } },
    },
  },
  responses: {
    200: { description: 'Acknowledged; for url_verification, the challenge.', content: { 'application/json': { schema: Acknowledged } } },
    400: problem('The body is not JSON, or not an envelope as Slack sends it.'),
    401: problem('The signature or its timestamp is missing, wrong or stale, or the agent’s signing secret is not in the vault.'),
    404: problem('No enabled agent with this id answers on Slack.'),
  },
})

function receiveEvents(context: PluginContext) {
  context.router.openapi(eventsRoute, async (c) => {
    const { endpoint, body } = await verifiedRequest(context, c, c.req.valid('param').agent_id)
    let parsed: unknown
    try {
      parsed = JSON.parse(new TextDecoder().decode(body))
    } catch {
      throw new ApiError('bad_request', 'The body is not JSON.')
    }
    const delivery = readDelivery(parsed, endpoint.settings.app_id)
    if (delivery.kind === 'challenge') return c.json({ challenge: delivery.challenge }, 200)
    // A delivery received before (Slack retries when we were slow) is acknowledged all the same, and not answered twice.
    if (delivery.kind === 'message') {
      if (delivery.audio) await fetchAudio(context, endpoint, delivery.message, delivery.audio)
      await context.channels.receive(endpoint, delivery.message)
    }
    else context.log.debug('Ignored a Slack delivery.', { agent_id: endpoint.agentId, why: delivery.why })
    return c.json({}, 200)
  })
}

export default definePlugin({
  setup(context) {
    context.channels.register(slackDriver({ baseUrl: () => context.settings.api_base_url ?? 'https://slack.com/api/', log: context.log }))
    receiveEvents(context)
    receiveInteractions(context)
  },
})
