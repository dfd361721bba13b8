import type { WebhookInfo } from 'grammy/types'
import { ChannelSendError, type ChannelDriver, type ChannelTarget, type PluginContext, type WebhookReport } from '../../src/plugin-host/sdk.ts'
import { botApi, described, grammyModule, sendError } from './bot-api.ts'
import { telegramTarget, type TelegramTarget } from './update.ts'
import { webhookPath, webhookUrl } from './webhook-url.ts'

/** Telegram's limit on the text of one message. */
const MESSAGE_MAX_LENGTH = 4096

function target(stored: ChannelTarget): TelegramTarget {
  try {
    return telegramTarget(stored)
  } catch (error) {
    throw new ChannelSendError((error as Error).message, false)
  }
}

const topicOf = ({ message_thread_id: topic }: TelegramTarget) => (topic === undefined ? {} : { message_thread_id: topic })

/** What getWebhookInfo says, in a sentence for the console: reachable when it delivers to us and nothing failed. */
function reportOf(info: WebhookInfo, ours: string): WebhookReport {
  if (!info.url) return { reachable: false, detail: `Telegram has no webhook for this bot; it should deliver to ${ours}.` }
  if (info.url !== ours) return { reachable: false, detail: `Telegram delivers this bot's updates to ${info.url}, not to ${ours}.` }
  const waiting = `${info.pending_update_count} update${info.pending_update_count === 1 ? '' : 's'} waiting`
  if (!info.last_error_message) return { reachable: true, detail: `Telegram delivers to ${info.url}; ${waiting}.` }
  const when = info.last_error_date ? ` at ${new Date(info.last_error_date * 1000).toISOString()}` : ''
  return { reachable: false, detail: `Telegram delivers to ${info.url}; ${waiting}; its last delivery failed${when}: ${info.last_error_message}` }
}

export function telegramDriver(context: PluginContext): ChannelDriver<'telegram'> {
  return {
    platform: 'telegram',
    maxLength: MESSAGE_MAX_LENGTH,
    async send(endpoint, stored, text) {
      const to = target(stored)
      const api = await botApi(context, endpoint)
      try {
        await api.sendMessage(to.chat_id, text, topicOf(to))
      } catch (error) {
        throw sendError(error)
      }
    },
    async sendChoices(endpoint, stored, text, choices) {
      const to = target(stored)
      const api = await botApi(context, endpoint)
      // A button's callback data comes back as the presser's message (webhook.ts), at most 64 bytes of it.
      const keyboard = [choices.map((choice) => ({ text: choice.label, callback_data: choice.text.slice(0, 64) }))]
      try {
        await api.sendMessage(to.chat_id, text, { ...topicOf(to), reply_markup: { inline_keyboard: keyboard } })
      } catch (error) {
        throw sendError(error)
      }
    },
    async sendVoice(endpoint, stored, voice) {
      const to = target(stored)
      const api = await botApi(context, endpoint, 60)
      const { InputFile } = await grammyModule()
      const duration = voice.durationMs === undefined ? {} : { duration: Math.max(1, Math.round(voice.durationMs / 1000)) }
      try {
        // OGG/Opus is what Telegram shows as a voice note (with its waveform), not as a file.
        await api.sendVoice(to.chat_id, new InputFile(voice.bytes, voice.filename), { ...topicOf(to), ...duration })
      } catch (error) {
        throw sendError(error)
      }
    },
    async typing(endpoint, stored) {
      const to = target(stored)
      await (await botApi(context, endpoint, 10)).sendChatAction(to.chat_id, 'typing', topicOf(to))
    },
    webhookPath,
    async webhookReport(endpoint) {
      try {
        const info = await (await botApi(context, endpoint, 10)).getWebhookInfo()
        return reportOf(info, webhookUrl(context, endpoint))
      } catch (error) {
        return { reachable: null, detail: `Telegram could not be asked about the webhook: ${described(error)}` }
      }
    },
  }
}
