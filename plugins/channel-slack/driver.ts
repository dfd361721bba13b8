import type { LogLevel, Logger as SlackLogger, WebClient } from '@slack/web-api'
import { ChannelSendError, type ChannelDriver, type ChannelEndpoint, type ChannelTarget, type Logger } from '../../src/plugin-host/sdk.ts'

/** Slack advises keeping a message's text under 4,000 characters; it truncates far longer ones. */
const MAX_LENGTH = 4000

/** The most a Block Kit section's text may hold; the message's `text` keeps the whole, for notifications. */
const SECTION_MAX = 3000

/** Platform errors that say Slack itself is struggling, so the same call may pass later. */
const TRANSIENT = new Set(['internal_error', 'fatal_error', 'service_unavailable', 'request_timeout', 'ratelimited'])

/** Where the Web API is (asked at each call: an operator may change it meanwhile) and where its client logs. */
export interface SlackApi {
  baseUrl(): string
  log: Logger
}

/** How Switchboard answers on Slack: chat.postMessage into the DM or the mention's thread. */
export function slackDriver(api: SlackApi): ChannelDriver<'slack'> {
  return {
    platform: 'slack',
    maxLength: MAX_LENGTH,
    async send(endpoint, target, text) {
      const client = await clientOf(api, endpoint)
      const { channel, thread_ts } = readTarget(target)
      try {
        await client.chat.postMessage({ channel, text: escaped(text), ...(thread_ts ? { thread_ts } : {}) })
      } catch (error) {
        throw channelError(error)
      }
    },
    // Buttons (Block Kit): a press reaches the app's Interactivity Request URL (interactions.ts) as the presser
    // saying the button's value.
    async sendChoices(endpoint, target, text, choices) {
      const client = await clientOf(api, endpoint)
      const { channel, thread_ts } = readTarget(target)
      const blocks = [
        { type: 'section', text: { type: 'plain_text', text: text.slice(0, SECTION_MAX), emoji: false } },
        {
          type: 'actions',
          elements: choices.map((choice, i) => ({ type: 'button', action_id: `choice-${i}`, text: { type: 'plain_text', text: choice.label.slice(0, 75) }, value: choice.text.slice(0, 2000) })),
        },
      ]
      try {
        await client.chat.postMessage({ channel, text: escaped(text), blocks, ...(thread_ts ? { thread_ts } : {}) })
      } catch (error) {
        throw channelError(error)
      }
    },
    // Slack has no voice messages a bot may send: the spoken answer is an audio file in the same place.
    async sendVoice(endpoint, target, voice) {
      const client = await clientOf(api, endpoint)
      const { channel, thread_ts } = readTarget(target)
      try {
        const file = { file: Buffer.from(voice.bytes), filename: voice.filename, title: 'Spoken answer' }
        await client.filesUploadV2(thread_ts ? { ...file, channel_id: channel, thread_ts } : { ...file, channel_id: channel })
      } catch (error) {
        throw channelError(error)
      }
    },
    webhookPath: (endpoint) => `/channels/slack/${endpoint.agentId}`,
    // Slack has no call reporting on Events API deliveries; auth.test at least tells whether the bot token works.
    async webhookReport(endpoint) {
      try {
        const answer = await (await clientOf(api, endpoint)).auth.test()
        return { reachable: null, detail: `The bot token is valid for team ${answer.team ?? answer.team_id ?? '(unnamed)'}.` }
      } catch (error) {
        const failure = channelError(error)
        return { reachable: null, detail: failure instanceof Error ? failure.message : String(failure) }
      }
    },
  }
}

// Slack's Web API client, loaded when Slack is first called: most deployments have no Slack channel, and it took
// 35-40 ms of each start. Its errors exist only once it is loaded.
let slack: typeof import('@slack/web-api') | undefined

async function clientOf(api: SlackApi, endpoint: ChannelEndpoint<'slack'>): Promise<WebClient> {
  const name = endpoint.settings.bot_token_secret
  const token = await endpoint.secret(name)
  if (!token) throw new ChannelSendError(`The Slack bot token ${name} is not in the vault.`, false)
  slack ??= await import('@slack/web-api')
  // The kernel retries with backoff and keeps the message meanwhile, so the client must fail at once, 429s included.
  return new slack.WebClient(token, {
    slackApiUrl: api.baseUrl(),
    retryConfig: { retries: 0 },
    rejectRateLimitedCalls: true,
    timeout: 30_000,
    logger: slackLogger(api.log, slack.LogLevel.DEBUG),
  })
}

function readTarget(target: ChannelTarget): { channel: string; thread_ts?: string } {
  const { channel, thread_ts } = target
  if (typeof channel !== 'string' || channel === '') throw new ChannelSendError('The Slack target names no channel.', false)
  if (thread_ts !== undefined && typeof thread_ts !== 'string') throw new ChannelSendError('The Slack target’s thread_ts is not text.', false)
  return thread_ts === undefined ? { channel } : { channel, thread_ts }
}

/** Slack reads <…> as links and mentions and & as an entity; an answer's own characters must show as written. */
function escaped(text: string): string {
  return text.replaceAll('&', '&amp;').replaceAll('<', '&lt;').replaceAll('>', '&gt;')
}

/** Whether trying again may help: a rate limit or an outage may pass, a bad token or a missing channel will not. */
function channelError(error: unknown): unknown {
  if (!slack) return error
  const { WebAPIHTTPError, WebAPIPlatformError, WebAPIRateLimitedError, WebAPIRequestError } = slack
  if (error instanceof WebAPIRateLimitedError) {
    return new ChannelSendError(`Slack rate-limited the call and asks to wait ${error.retryAfter} s.`, true, error.retryAfter * 1000)
  }
  if (error instanceof WebAPIRequestError) return new ChannelSendError(`Slack could not be reached: ${error.original.message}`, true)
  if (error instanceof WebAPIHTTPError) return new ChannelSendError(`Slack answered HTTP ${error.statusCode}.`, error.statusCode >= 500 || error.statusCode === 408)
  if (error instanceof WebAPIPlatformError) return new ChannelSendError(`Slack refused the call: ${error.data.error}.`, TRANSIENT.has(error.data.error))
  return error
}

/** The Web API client's own log lines, into the plugin's log; its info lines (a rate limit hit) are debug here, as the kernel reports failures. */
function slackLogger(log: Logger, level: LogLevel): SlackLogger {
  const line = (write: (message: string) => void) => (...parts: unknown[]) => write(parts.map(String).join(' '))
  return {
    debug: line(log.debug),
    info: line(log.debug),
    warn: line(log.warn),
    error: line(log.error),
    setLevel() {},
    getLevel: () => level,
    setName() {},
  }
}
