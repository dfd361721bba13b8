import type { Update } from 'grammy/types'
import { ApiError, createRoute, problem, secretsEqual, z, type PluginContext } from '../../src/plugin-host/sdk.ts'
import { botApi, described } from './bot-api.ts'
import { downloadFile } from './documents.ts'
import { webhookSecret } from './secret.ts'
import { readUpdate } from './update.ts'

const SECRET_HEADER = 'x-telegram-bot-api-secret-token'

const webhookRoute = createRoute({
  method: 'post',
  path: '/{agent_id}',
  operationId: 'telegramWebhook',
  summary: 'Receive a Telegram update for an agent',
  description:
    'Where Telegram delivers the updates of an agent’s bot (setWebhook points here). The body is a Telegram Update ' +
    'object (JSON); requests without the secret token the webhook was registered with are refused. A message is ' +
    'kept and answered soon after this request has been acknowledged; a repeated update_id is acknowledged and ' +
    'not answered again; a press of one of the bot’s buttons (an approval’s Approve or Deny) counts as the presser ' +
    'sending its data; edits and other update types are acknowledged and ignored.',
  tags: ['Channels'],
  request: {
    params: z.object({ agent_id: z.uuid().openapi({ description: 'The agent the bot belongs to.' }) }),
    headers: z.object({
      [SECRET_HEADER]: z.string().optional().openapi({ description: 'The secret_token given to setWebhook, as Telegram sends it back.' }),
    }),
    // Described, not validated: the secret token is checked before the body is read at all.
    body: {
      required: true,
      content: {
        'application/json': {
          schema: { type: 'object' as const, description: 'A Telegram Update.', required: ['update_id'], properties: { update_id: { type: 'integer' as const } } },
        },
      },
    },
  },
  responses: {
    200: { description: 'The update is acknowledged.', content: { 'application/json': { schema: z.object({ ok: z.literal(true) }) } } },
    400: problem('The body is not a Telegram update.'),
    401: problem('The secret token is missing or wrong, or the agent’s Telegram secrets are not in the vault.'),
    404: problem('No enabled agent with this id is reachable on Telegram.'),
  },
})

function parsedUpdate(raw: string): Update {
  let update: unknown
  try {
    update = JSON.parse(raw)
  } catch {
    throw new ApiError('bad_request', 'The body is not JSON.')
  }
  const id = (update as { update_id?: unknown } | null)?.update_id
  if (typeof id !== 'number' || !Number.isSafeInteger(id)) throw new ApiError('bad_request', 'The body is not a Telegram update: it has no numeric update_id.')
  return update as Update
}

/** POST /channels/telegram/{agent_id}: checks the secret token, then hands the message to the kernel and acknowledges. */
export function serveWebhook(context: PluginContext): void {
  context.router.openapi(webhookRoute, async (c) => {
    const { agent_id: agentId } = c.req.valid('param')
    const endpoint = await context.channels.endpoint(agentId, 'telegram')
    if (!endpoint) throw new ApiError('not_found', 'No enabled agent with this id is reachable on Telegram.')
    const expected = await webhookSecret(endpoint)
    if (!expected) throw new ApiError('unauthorized', 'The agent’s Telegram secrets are not in the vault, so no request can be verified.')
    const given = c.req.header(SECRET_HEADER)
    if (!given || !secretsEqual(given, expected)) throw new ApiError('unauthorized', 'The Telegram secret token is missing or wrong.')
    const update = parsedUpdate(await c.req.text())
    await context.channels.seen(endpoint)
    const read = readUpdate(update)
    if (read) {
      const { message, file } = read
      if (file) {
        try {
          message.attachments = [await downloadFile(context, endpoint, file)]
        } catch (error) {
          // The words still reach the agent; the console says which file was lost, and why.
          const reason = `A file sent to ${endpoint.agentName} on Telegram could not be fetched: ${described(error)}`
          context.log.warn(reason, { agent_id: agentId })
          await context.channels.failed(endpoint, reason)
          message.lost = [{ name: file.name, why: described(error) }]
        }
      }
      if (message.text.trim() !== '' || message.attachments || message.lost) await context.channels.receive(endpoint, message)
      // Telegram shows a pressed button as busy until it is answered; what it did is said in the chat.
      if (read.callbackQueryId) {
        await (await botApi(context, endpoint, 10)).answerCallbackQuery(read.callbackQueryId).catch((error) => context.log.warn('a button press could not be acknowledged', { error: described(error) }))
      }
    }
    return c.json({ ok: true as const }, 200)
  })
}
