import type { Message, Update } from 'grammy/types'
import type { InboundMessage } from '../../src/plugin-host/sdk.ts'

/** Where an answer goes: the chat, and in a forum supergroup the topic the message came from. */
export interface TelegramTarget {
  chat_id: number
  message_thread_id?: number
}

/**
 * A message the agent should answer, and the file it carried, if any (downloaded by the webhook); or a button
 * of the bot's pressed (`callbackQueryId`, which Telegram wants answered), read as the presser saying its data.
 */
export interface ReadMessage {
  message: InboundMessage
  file?: TelegramFile
  callbackQueryId?: string
}

/** A file a message carried (a document, a voice note, an audio file), to fetch by its id. */
export interface TelegramFile {
  file_id: string
  name: string
  file_size?: number
}

/** The file of a message: a document, else a voice note (always OGG/Opus), else an audio file. */
function fileOf(message: Message): TelegramFile | undefined {
  const { document, voice, audio } = message
  if (document) return { file_id: document.file_id, name: document.file_name || 'document', ...(document.file_size ? { file_size: document.file_size } : {}) }
  if (voice) return { file_id: voice.file_id, name: 'voice.ogg', ...(voice.file_size ? { file_size: voice.file_size } : {}) }
  if (audio) return { file_id: audio.file_id, name: audio.file_name || 'audio', ...(audio.file_size ? { file_size: audio.file_size } : {}) }
  return undefined
}

// In a group, commands name the bot ("/link@switchboard_bot CODE"); the kernel reads "/link CODE".
const ADDRESSED_COMMAND = /^\/(\w+)@\w+(?=\s|$)/

/** Telegram's chat and topic as the kernel's thread: each topic of a forum is its own conversation. */
function thread(message: Pick<Message, 'chat' | 'is_topic_message' | 'message_thread_id'>): InboundMessage['thread'] {
  const topic = message.is_topic_message ? message.message_thread_id : undefined
  const target: TelegramTarget = topic === undefined ? { chat_id: message.chat.id } : { chat_id: message.chat.id, message_thread_id: topic }
  return { key: topic === undefined ? String(message.chat.id) : `${message.chat.id}:${topic}`, target: { ...target } }
}

/**
 * The message of an update, as the kernel reads it; undefined for what the agent does not answer: edits, updates
 * other than messages, messages of no one person (a channel posting, an anonymous admin, a bot) and messages with
 * nothing to read.
 */
export function readUpdate(update: Update): ReadMessage | undefined {
  if (update.callback_query) return readButton(update)
  const message = update.message
  if (!message?.from) return undefined
  // Messages sent as a chat (an anonymous group admin, a linked channel) or by a bot carry a placeholder sender
  // that many people share: no one of them may speak as whoever linked that id.
  if (message.sender_chat || message.from.is_bot || message.is_automatic_forward) return undefined
  const text = (message.text ?? message.caption ?? '').replace(ADDRESSED_COMMAND, '/$1')
  const file = fileOf(message)
  if (text.trim() === '' && !file) return undefined
  const { from } = message
  const displayName = [from.first_name, from.last_name].filter(Boolean).join(' ')
  return {
    message: {
      deliveryId: String(update.update_id),
      sender: { id: String(from.id), ...(from.username ? { username: from.username } : {}), ...(displayName ? { displayName } : {}) },
      thread: thread(message),
      text,
    },
    ...(file ? { file } : {}),
  }
}

/**
 * A pressed button of a message of the bot's (an approval's Approve): the presser says its data, in the chat and
 * topic of that message. Someone who cannot be one person (a bot) says nothing.
 */
function readButton(update: Update): ReadMessage | undefined {
  const query = update.callback_query!
  const pressedOn = query.message
  if (!pressedOn || query.from.is_bot || typeof query.data !== 'string' || query.data.trim() === '') return undefined
  const { from } = query
  const displayName = [from.first_name, from.last_name].filter(Boolean).join(' ')
  const topic = 'is_topic_message' in pressedOn ? pressedOn : { chat: pressedOn.chat }
  return {
    message: {
      deliveryId: String(update.update_id),
      sender: { id: String(from.id), ...(from.username ? { username: from.username } : {}), ...(displayName ? { displayName } : {}) },
      thread: thread(topic),
      text: query.data,
    },
    callbackQueryId: query.id,
  }
}

/** The target the kernel hands back, checked: it is the plugin's own JSON, yet it comes back from the store. */
export function telegramTarget(target: Record<string, unknown>): TelegramTarget {
  const { chat_id: chat, message_thread_id: topic } = target
  if (typeof chat !== 'number' || !Number.isSafeInteger(chat)) throw new Error(`A Telegram target needs a numeric chat_id, not ${JSON.stringify(chat)}.`)
  if (topic !== undefined && (typeof topic !== 'number' || !Number.isSafeInteger(topic))) throw new Error(`A Telegram topic is a number, not ${JSON.stringify(topic)}.`)
  return topic === undefined ? { chat_id: chat } : { chat_id: chat, message_thread_id: topic }
}
