import type { ChannelEndpoint, PluginContext } from '../../src/plugin-host/sdk.ts'

/** Where the manifest mounts the plugin's routes (public_api_prefix). */
const MOUNTED_AT = '/channels/telegram'

export function webhookPath(endpoint: ChannelEndpoint<'telegram'>): string {
  return `${MOUNTED_AT}/${endpoint.agentId}`
}

/** The address Telegram must deliver the agent's updates to. */
export function webhookUrl(context: PluginContext, endpoint: ChannelEndpoint<'telegram'>): string {
  return `${context.channels.publicBaseUrl.replace(/\/+$/, '')}${webhookPath(endpoint)}`
}
