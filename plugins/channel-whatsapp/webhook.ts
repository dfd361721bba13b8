import { ApiError, createRoute, hmacSha256, problem, secretsEqual, z, type ChannelEndpoint, type InboundMessage, type PluginContext } from '../../src/plugin-host/sdk.ts'
import { callerOf } from './driver.ts'
import { downloadMedium } from './graph.ts'
import { inboundMessages, Notification } from './payload.ts'

const AgentParam = z.object({
  agent_id: z.uuid().openapi({ param: { name: 'agent_id', in: 'path' }, description: 'The agent whose WhatsApp number this is.' }),
})

// Optional so that a request missing one is refused like a wrong one (403), not picked apart by the validator.
const Handshake = z.object({
  'hub.mode': z.string().optional().openapi({ example: 'subscribe' }),
  'hub.verify_token': z.string().optional().openapi({ description: 'The verify token typed into the Meta dashboard.' }),
  'hub.challenge': z.string().optional().openapi({ description: 'What to answer when the token is right.', example: '1158201444' }),
})

const handshakeRoute = createRoute({
  method: 'get',
  path: '/{agent_id}',
  operationId: 'whatsappWebhookHandshake',
  summary: 'Meta’s subscription handshake for the agent’s WhatsApp webhook',
  description: 'Answers hub.challenge when hub.mode is subscribe and hub.verify_token is the vault secret the agent’s whatsapp.verify_token_secret names.',
  tags: ['Channels'],
  security: [],
  request: { params: AgentParam, query: Handshake },
  responses: {
    200: { description: 'The challenge, echoed.', content: { 'text/plain': { schema: z.string() } } },
    400: problem('The agent id is not a UUID, or the handshake carries no hub.challenge.'),
    403: problem('Not a subscribe request, a wrong verify token, or the agent has none set.'),
    404: problem('No agent of that id answers on WhatsApp.'),
  },
})

const notificationRoute = createRoute({
  method: 'post',
  path: '/{agent_id}',
  operationId: 'whatsappWebhookNotification',
  summary: 'Messages to the agent’s WhatsApp number, as Meta delivers them',
  description:
    'The body must be signed: X-Hub-Signature-256 is sha256= and the hex HMAC-SHA256 of the exact body bytes under the app secret ' +
    '(the vault secret the agent’s whatsapp.app_secret_secret names). Text messages and voice notes (audio, fetched and transcribed) to the agent’s phone_number_id are answered ' +
    'on WhatsApp; receipts, other message types and other numbers’ changes are acknowledged and left alone. A message id seen ' +
    'before is acknowledged and not answered again.',
  tags: ['Channels'],
  security: [],
  request: {
    params: AgentParam,
    headers: z.object({ 'x-hub-signature-256': z.string().optional().openapi({ example: 'sha256=6f1c…' }) }),
    // A reference, not the zod schema: the signature is over the raw bytes, which a validator would consume first.
    body: { required: true, content: { 'application/json': { schema: { $ref: '#/components/schemas/WhatsAppNotification' } } } },
  },
  responses: {
    200: { description: 'Received; the answers follow on WhatsApp.' },
    400: problem('The agent id is not a UUID, or the signed body is not JSON or not a WhatsApp Business Account notification.'),
    401: problem('The signature is missing or wrong, or the agent has no app secret set.'),
    404: problem('No agent of that id answers on WhatsApp.'),
  },
})

/** The vault secret a setting names, or undefined when the setting or the secret is missing. */
async function secretOf(endpoint: ChannelEndpoint<'whatsapp'>, name: string | undefined): Promise<string | undefined> {
  return name ? endpoint.secret(name) : undefined
}

/** What is wrong with a parsed body, for the 400 a misconfigured sender reads. */
function firstIssue(error: z.ZodError): string {
  const issue = error.issues[0]
  return issue ? `${issue.path.join('.') || '(body)'}: ${issue.message}` : 'unexpected shape'
}

/** A voice note's bytes, fetched for the kernel to hear; one that cannot be fetched is named back to its sender. */
async function fetchAudio(context: PluginContext, endpoint: ChannelEndpoint<'whatsapp'>, message: InboundMessage, audioId: string): Promise<void> {
  try {
    const { bytes } = await downloadMedium(await callerOf(endpoint, context.settings), audioId)
    message.attachments = [{ name: 'voice.ogg', base64: Buffer.from(bytes).toString('base64') }]
  } catch (error) {
    const why = error instanceof Error ? error.message : String(error)
    await context.channels.failed(endpoint, `A voice note sent to ${endpoint.agentName} on WhatsApp could not be fetched: ${why}`)
    message.lost = [{ name: 'voice note', why }]
  }
}

export function mountWebhook(context: PluginContext): void {
  async function endpointOf(agentId: string): Promise<ChannelEndpoint<'whatsapp'>> {
    const endpoint = await context.channels.endpoint(agentId, 'whatsapp')
    if (!endpoint) throw new ApiError('not_found', `No agent ${agentId} answers on WhatsApp: it does not exist, is disabled, or has its WhatsApp channel off.`)
    return endpoint
  }

  context.router.openapi(handshakeRoute, async (c) => {
    const endpoint = await endpointOf(c.req.valid('param').agent_id)
    const query = c.req.valid('query')
    const expected = await secretOf(endpoint, endpoint.settings.verify_token_secret)
    if (!expected) throw new ApiError('forbidden', 'The agent has no verify token in the vault (whatsapp.verify_token_secret), so no subscription is accepted.')
    if (query['hub.mode'] !== 'subscribe' || !secretsEqual(query['hub.verify_token'] ?? '', expected)) {
      throw new ApiError('forbidden', 'This is not a subscription handshake with the agent’s verify token.')
    }
    const challenge = query['hub.challenge']
    if (!challenge) throw new ApiError('bad_request', 'The handshake carries no hub.challenge to answer.')
    await context.channels.seen(endpoint)
    return c.text(challenge, 200)
  })

  context.router.openapi(notificationRoute, async (c) => {
    const endpoint = await endpointOf(c.req.valid('param').agent_id)
    const body = new Uint8Array(await c.req.arrayBuffer())
    const appSecret = await secretOf(endpoint, endpoint.settings.app_secret_secret)
    if (!appSecret) throw new ApiError('unauthorized', 'The agent has no app secret in the vault (whatsapp.app_secret_secret), so no notification can be verified.')
    const signature = c.req.header('x-hub-signature-256') ?? ''
    if (!secretsEqual(signature, `sha256=${hmacSha256(appSecret, body)}`)) {
      throw new ApiError('unauthorized', 'X-Hub-Signature-256 is missing or does not match the body signed with the app secret.')
    }
    await context.channels.seen(endpoint)
    let parsed: unknown
    try {
      parsed = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(body))
    } catch {
      throw new ApiError('bad_request', 'The body is not JSON.')
    }
    const notification = Notification.safeParse(parsed)
    if (!notification.success) throw new ApiError('bad_request', `The body is not a WhatsApp Business Account notification (${firstIssue(notification.error)}).`)
    // Stored, not answered: the turn runs after the 200, so Meta never waits on the model.
    for (const { message, audioId } of inboundMessages(notification.data, endpoint.settings.phone_number_id)) {
      if (audioId) await fetchAudio(context, endpoint, message, audioId)
      await context.channels.receive(endpoint, message)
    }
    return c.body(null, 200)
  })

  // The body's schema, for the document: the route refers to it by name.
  context.router.openAPIRegistry.register('WhatsAppNotification', Notification)
}
