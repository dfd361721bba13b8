import { hmacSha256, type ChannelEndpoint } from '../../src/plugin-host/sdk.ts'

/**
 * The secret token Telegram sends in X-Telegram-Bot-Api-Secret-Token: the vault secret the agent names in
 * webhook_secret_secret, else one derived from the bot token, so a bot works with no second secret to keep and a
 * new token changes it too. Hex fits what Telegram allows (A-Z a-z 0-9 _ -). Undefined when a secret is missing.
 */
export async function webhookSecret(endpoint: ChannelEndpoint<'telegram'>): Promise<string | undefined> {
  const named = endpoint.settings.webhook_secret_secret
  if (named) return endpoint.secret(named)
  const token = await endpoint.secret(endpoint.settings.bot_token_secret)
  return token ? hmacSha256(token, `switchboard telegram webhook ${endpoint.agentId}`) : undefined
}
