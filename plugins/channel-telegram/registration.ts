import type { ChannelEndpoint, PluginContext } from '../../src/plugin-host/sdk.ts'
import { botApi, described } from './bot-api.ts'
import { webhookSecret } from './secret.ts'
import { webhookUrl } from './webhook-url.ts'

/**
 * Points the bot's webhook at us, with the secret token. Every time, though Telegram may already deliver here:
 * it never says which secret it holds, and a new token or webhook secret must reach it (setWebhook is idempotent).
 */
async function register(context: PluginContext, endpoint: ChannelEndpoint<'telegram'>): Promise<void> {
  const url = webhookUrl(context, endpoint)
  const api = await botApi(context, endpoint, 10)
  const secret = await webhookSecret(endpoint)
  if (!secret) throw new Error(`the vault holds no secret named ${endpoint.settings.webhook_secret_secret} for the webhook's secret token`)
  // Button presses too: an approval's Approve and Deny.
  await api.setWebhook(url, { secret_token: secret, allowed_updates: ['message', 'callback_query'] })
  context.log.info('Registered a Telegram webhook.', { agent_id: endpoint.agentId, url })
}

/**
 * ON_STARTUP: registers the webhook of every agent's bot. A bot Telegram refuses, or a Telegram that cannot be
 * reached, is reported on the agent's channel and in the log: the platform starts all the same.
 */
export async function registerWebhooks(context: PluginContext): Promise<void> {
  if (context.settings.register_webhooks === 'false') return
  const endpoints = await context.channels.endpoints('telegram')
  await Promise.all(
    endpoints.map(async (endpoint) => {
      try {
        await register(context, endpoint)
      } catch (error) {
        const reason = `The Telegram webhook of ${endpoint.agentName} could not be registered: ${described(error)}`
        context.log.warn(reason, { agent_id: endpoint.agentId })
        await context.channels.failed(endpoint, reason)
      }
    }),
  )
}
