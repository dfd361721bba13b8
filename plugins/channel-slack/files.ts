import { cappedBody, type ChannelEndpoint, type InboundMessage, type PluginContext } from '../../src/plugin-host/sdk.ts'
import type { SlackFile } from './events.ts'

/** The most a shared file is downloaded to, as a channel's attachments together may be. */
const FILE_MAX_BYTES = 20 * 1024 * 1024

/**
 * Whether the bot token may go to this address: Slack's own file hosts, or the host the operator pointed the Web
 * API at (a Slack-compatible server, a test double). A download address is read from the event, and the token must
 * never follow one anywhere else.
 */
function isSlackHost(url: URL, apiBaseUrl: string): boolean {
  return url.protocol === 'https:' ? url.hostname === 'slack.com' || url.hostname.endsWith('.slack.com') || url.host === new URL(apiBaseUrl).host : url.host === new URL(apiBaseUrl).host
}

async function download(context: PluginContext, endpoint: ChannelEndpoint<'slack'>, file: SlackFile): Promise<Uint8Array> {
  const apiBaseUrl = context.settings.api_base_url ?? 'https://slack.com/api/'
  const url = new URL(file.url)
  if (!isSlackHost(url, apiBaseUrl)) throw new Error(`its address is not Slack's (${url.host}).`)
  if ((file.size ?? 0) > FILE_MAX_BYTES) throw new Error(`it is larger than ${FILE_MAX_BYTES} bytes.`)
  const token = await endpoint.secret(endpoint.settings.bot_token_secret)
  if (!token) throw new Error('the bot token is not in the vault.')
  const response = await fetch(url, { headers: { authorization: `Bearer ${token}` }, redirect: 'error', signal: AbortSignal.timeout(60_000) })
  if (!response.ok) throw new Error(`Slack answered ${response.status} to its download (the app needs the files:read scope).`)
  return cappedBody(response, FILE_MAX_BYTES, 'it')
}

/** An audio file shared with a message, fetched for the kernel to hear; one that cannot be is named back to the sender. */
export async function fetchAudio(context: PluginContext, endpoint: ChannelEndpoint<'slack'>, message: InboundMessage, file: SlackFile): Promise<void> {
  try {
    message.attachments = [{ name: file.name, base64: Buffer.from(await download(context, endpoint, file)).toString('base64') }]
  } catch (error) {
    const why = error instanceof Error ? error.message : String(error)
    await context.channels.failed(endpoint, `An audio file sent to ${endpoint.agentName} on Slack could not be fetched: ${why}`)
    message.lost = [{ name: file.name, why }]
  }
}
