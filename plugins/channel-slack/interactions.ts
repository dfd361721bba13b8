import { ApiError, createRoute, problem, z, type InboundMessage, type PluginContext } from '../../src/plugin-host/sdk.ts'
import { verifiedRequest } from './signature.ts'

/**
 * Slack's interactivity deliveries: a press of one of the bot's buttons (a tool approval's Approve or Deny) is
 * read as the presser saying the button's value, in the DM or thread the button was posted in.
 */

const Press = z.looseObject({
  type: z.literal('block_actions'),
  trigger_id: z.string().min(1).max(200),
  user: z.looseObject({ id: z.string().min(1) }),
  channel: z.looseObject({ id: z.string().min(1) }),
  message: z.looseObject({ ts: z.string(), thread_ts: z.string().optional() }).optional(),
  actions: z.array(z.looseObject({ value: z.string().optional() })).min(1),
})

const interactionsRoute = createRoute({
  method: 'post',
  path: '/{agent_id}/interactions',
  operationId: 'receiveSlackInteractions',
  summary: 'Slack button presses for an agent',
  description:
    'The Interactivity Request URL of the agent’s Slack app. Signed like the events (X-Slack-Signature over the exact ' +
    'body, within five minutes). A press of one of the bot’s buttons (block_actions) counts as the presser sending ' +
    'the button’s value in that conversation; other interactions are acknowledged and ignored.',
  tags: ['Channels'],
  request: {
    params: z.object({ agent_id: z.uuid().openapi({ description: 'The agent whose Slack app this is.' }) }),
    body: {
      required: true,
      content: { 'application/x-www-form-urlencoded': { schema: { type: 'object' as const, properties: { payload: { type: 'string' as const, description: 'The interaction, as JSON.' } } } } },
    },
  },
  responses: {
    200: { description: 'Acknowledged.' },
    400: problem('The body carries no interaction as Slack sends it.'),
    401: problem('The signature or its timestamp is missing, wrong or stale, or the agent’s signing secret is not in the vault.'),
    404: problem('No enabled agent with this id answers on Slack.'),
  },
})

/** The press as the message it stands for; undefined for an interaction that says nothing to the agent. */
export function readPress(payload: unknown): InboundMessage | undefined {
  const type = typeof payload === 'object' && payload !== null && 'type' in payload ? payload.type : undefined
  if (type !== 'block_actions') return undefined
  const parsed = Press.safeParse(payload)
  if (!parsed.success) throw new ApiError('bad_request', `The block_actions interaction is not shaped as Slack sends it: ${parsed.error.issues[0]?.message ?? 'unreadable'}.`)
  const { trigger_id, user, channel, message, actions } = parsed.data
  const value = actions[0]!.value?.trim()
  if (!value) return undefined
  // A DM is one conversation; a button in a thread belongs to that thread (as events.ts keys them).
  const direct = channel.id.startsWith('D')
  const threadTs = message?.thread_ts ?? message?.ts
  const thread = direct || !threadTs ? { key: channel.id, target: { channel: channel.id } } : { key: `${channel.id}:${threadTs}`, target: { channel: channel.id, thread_ts: threadTs } }
  return { deliveryId: `press:${trigger_id}`, sender: { id: user.id }, thread, text: value }
}

export function receiveInteractions(context: PluginContext): void {
  context.router.openapi(interactionsRoute, async (c) => {
    const { endpoint, body } = await verifiedRequest(context, c, c.req.valid('param').agent_id)
    const raw = new URLSearchParams(new TextDecoder().decode(body)).get('payload')
    if (!raw) throw new ApiError('bad_request', 'The body has no payload field.')
    let payload: unknown
    try {
      payload = JSON.parse(raw)
    } catch {
      throw new ApiError('bad_request', 'The payload is not JSON.')
    }
    const message = readPress(payload)
    if (message) await context.channels.receive(endpoint, message)
    return c.body(null, 200)
  })
}
