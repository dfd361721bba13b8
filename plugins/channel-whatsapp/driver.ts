import { ChannelSendError, type ChannelDriver, type ChannelEndpoint, type ChannelTarget } from '../../src/plugin-host/sdk.ts'
import { GRAPH_API_BASE_URL, postMessages, uploadMedium, type GraphCaller } from './graph.ts'

/** The Cloud API's limit on a text message's body. */
const MAX_TEXT_LENGTH = 4096

/** The number, the token and the API root an agent's messages go out with; read at call time, so changes apply at once. */
export async function callerOf(endpoint: ChannelEndpoint<'whatsapp'>, settings: Readonly<Record<string, string>>): Promise<GraphCaller> {
  const name = endpoint.settings.access_token_secret
  const accessToken = await endpoint.secret(name)
  if (!accessToken) throw new ChannelSendError(`The agent ${endpoint.agentName} has no vault secret named ${name} for its WhatsApp access token.`, false)
  return { baseUrl: settings.api_base_url || GRAPH_API_BASE_URL, phoneNumberId: endpoint.settings.phone_number_id, accessToken }
}

/** A target this plugin wrote (InboundMessage.thread.target), read back. */
function targetOf(target: ChannelTarget): { to: string; messageId: string | undefined } {
  const { to, message_id: messageId } = target
  if (typeof to !== 'string' || to === '') throw new ChannelSendError('The thread names no WhatsApp recipient to answer.', false)
  return { to, messageId: typeof messageId === 'string' && messageId !== '' ? messageId : undefined }
}

export function whatsappDriver(settings: Readonly<Record<string, string>>): ChannelDriver<'whatsapp'> {
  return {
    platform: 'whatsapp',
    maxLength: MAX_TEXT_LENGTH,
    async send(endpoint, target, text) {
      const { to } = targetOf(target)
      await postMessages(await callerOf(endpoint, settings), {
        messaging_product: 'whatsapp',
        recipient_type: 'individual',
        to,
        type: 'text',
        // Answers are the agent's words: a link preview would fetch what it names and show someone else's page.
        text: { body: text, preview_url: false },
      })
    },
    async sendVoice(endpoint, target, voice) {
      const { to } = targetOf(target)
      const caller = await callerOf(endpoint, settings)
      // OGG/Opus uploaded as audio/ogg is what WhatsApp shows as a voice note.
      const id = await uploadMedium(caller, voice.bytes, 'audio/ogg', voice.filename)
      await postMessages(caller, { messaging_product: 'whatsapp', recipient_type: 'individual', to, type: 'audio', audio: { id } })
    },
    async typing(endpoint, target) {
      // WhatsApp shows typing against a received message (and marks it read); with none there is nothing to show.
      const { messageId } = targetOf(target)
      if (!messageId) return
      await postMessages(await callerOf(endpoint, settings), {
        messaging_product: 'whatsapp',
        status: 'read',
        message_id: messageId,
        typing_indicator: { type: 'text' },
      })
    },
    webhookPath: (endpoint) => `/channels/whatsapp/${endpoint.agentId}`,
  }
}
