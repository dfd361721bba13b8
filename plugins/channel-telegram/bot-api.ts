import type { Api } from 'grammy'
import { ChannelSendError, type ChannelEndpoint, type PluginContext } from '../../src/plugin-host/sdk.ts'

const DEFAULT_API_ROOT = 'https://api.telegram.org'

/** The Bot API root the operator set (a local Bot API server, or a test double), without a trailing slash. */
export function apiRoot(context: PluginContext): string {
  return (context.settings.api_base_url || DEFAULT_API_ROOT).replace(/\/+$/, '')
}

/** The agent's bot token from the vault; a missing one is a setting to fix, not an outage to wait out. */
export async function botToken(endpoint: ChannelEndpoint<'telegram'>): Promise<string> {
  const name = endpoint.settings.bot_token_secret
  const token = await endpoint.secret(name)
  if (!token) throw new ChannelSendError(`The vault holds no secret named ${name} for the agent ${endpoint.agentName}'s Telegram bot token.`, false)
  return token
}

// grammY, loaded when a Telegram bot is first called: most deployments have none, and it took 30-35 ms of each
// start. Its errors exist only once it is loaded.
let grammy: typeof import('grammy') | undefined

/** grammY's module, loaded on first use. */
export async function grammyModule(): Promise<typeof import('grammy')> {
  return (grammy ??= await import('grammy'))
}

/** A Bot API client for the agent's bot, read afresh so a changed token or API root counts at once. */
export async function botApi(context: PluginContext, endpoint: ChannelEndpoint<'telegram'>, timeoutSeconds = 30): Promise<Api> {
  const token = await botToken(endpoint)
  return new (await grammyModule()).Api(token, { apiRoot: apiRoot(context), timeoutSeconds })
}

/**
 * What a failed Bot API call means for the kernel: 429 asks to wait retry_after seconds, 5xx and network failures
 * may pass, any other refusal (a chat that does not exist, a bot the person blocked, a revoked token) will not.
 */
export function sendError(error: unknown): ChannelSendError {
  if (error instanceof ChannelSendError) return error
  if (grammy && error instanceof grammy.GrammyError) {
    const message = `Telegram refused ${error.method}: ${error.error_code} ${error.description}`
    if (error.error_code === 429) {
      const seconds = error.parameters.retry_after
      return new ChannelSendError(message, true, seconds === undefined ? undefined : seconds * 1000)
    }
    return new ChannelSendError(message, error.error_code >= 500)
  }
  if (grammy && error instanceof grammy.HttpError) {
    const cause = error.error instanceof Error ? `: ${error.error.message}` : ''
    return new ChannelSendError(withoutToken(`${error.message}${cause}`), true)
  }
  return new ChannelSendError(withoutToken(`Telegram could not be reached: ${error instanceof Error ? error.message : String(error)}`), true)
}

// The token is part of every Bot API URL, and a network error may quote the URL: it must not reach the console.
function withoutToken(text: string): string {
  return text.replace(/bot\d+:[\w-]+/g, 'bot<token>')
}

/** A failure as one sentence, for the console and the log. */
export function described(error: unknown): string {
  if (error instanceof ChannelSendError || (grammy && (error instanceof grammy.GrammyError || error instanceof grammy.HttpError))) return sendError(error).message
  return withoutToken(error instanceof Error ? error.message : String(error))
}
