import { ApiError, z, type InboundMessage } from '../../src/plugin-host/sdk.ts'

/**
 * Reading Slack's Events API envelopes: which deliveries are a person talking to the agent, and what they said.
 * Only direct messages and mentions count; everything else Slack sends an app (edits, joins, the bot's own posts,
 * channel chatter it is subscribed to) is acknowledged and left alone.
 */

const Event = z.looseObject({
  type: z.string(),
  subtype: z.string().optional(),
  user: z.string().optional(),
  bot_id: z.string().optional(),
  text: z.string().optional(),
  channel: z.string().optional(),
  channel_type: z.string().optional(),
  ts: z.string().optional(),
  thread_ts: z.string().optional(),
  files: z
    .array(
      z.looseObject({
        id: z.string(),
        name: z.string().optional(),
        mimetype: z.string().optional(),
        subtype: z.string().optional(),
        size: z.number().optional(),
        url_private_download: z.string().optional(),
      }),
    )
    .optional(),
})
type Event = z.infer<typeof Event>

/** A file that came with a message, to download with the bot token. */
export interface SlackFile {
  name: string
  url: string
  size?: number
}

const Envelope = z.discriminatedUnion('type', [
  z.looseObject({ type: z.literal('url_verification'), challenge: z.string().min(1).max(1000) }),
  z.looseObject({
    type: z.literal('event_callback'),
    event_id: z.string().min(1).max(200),
    api_app_id: z.string().optional(),
    // Who the app acts as in this workspace: its bot user, whose own messages come back as events too.
    authorizations: z.array(z.looseObject({ user_id: z.string().optional(), is_bot: z.boolean().optional() })).optional(),
    event: Event,
  }),
])
type Callback = Extract<z.infer<typeof Envelope>, { type: 'event_callback' }>

export type Delivery =
  | { kind: 'challenge'; challenge: string }
  | { kind: 'message'; message: InboundMessage; audio?: SlackFile }
  | { kind: 'ignored'; why: string }

/** What a verified delivery asks of the agent; `appId` (the agent's settings) turns away other apps' events. */
export function readDelivery(body: unknown, appId: string | undefined): Delivery {
  const type = typeof body === 'object' && body !== null && 'type' in body ? body.type : undefined
  if (type !== 'url_verification' && type !== 'event_callback') return { kind: 'ignored', why: `a delivery of type ${String(type)}` }
  const parsed = Envelope.safeParse(body)
  if (!parsed.success) throw new ApiError('bad_request', `The ${type} delivery is not shaped as Slack sends it: ${parsed.error.issues[0]?.message ?? 'unreadable'}.`)
  const envelope = parsed.data
  if (envelope.type === 'url_verification') return { kind: 'challenge', challenge: envelope.challenge }
  if (appId && envelope.api_app_id !== appId) return { kind: 'ignored', why: `an event of app ${envelope.api_app_id ?? '(none)'}, not ${appId}` }
  return messageOf(envelope)
}

function messageOf(envelope: Callback): Delivery {
  const { event } = envelope
  const direct = event.type === 'message' && event.channel_type === 'im'
  if (!direct && event.type !== 'app_mention') return { kind: 'ignored', why: `a ${event.type} event` }
  // A subtype is an edit, a join, a bot's post and the like: nothing a person said to the agent just now. A shared
  // file (an audio clip recorded in Slack, say) is a new message, with its files.
  if ((event.subtype !== undefined && event.subtype !== 'file_share') || event.bot_id !== undefined) return { kind: 'ignored', why: 'a message of a bot, or not a new message' }
  const bot = envelope.authorizations?.find((a) => a.is_bot)?.user_id
  const { user, channel, ts, text } = event
  if (!user || user === bot) return { kind: 'ignored', why: 'a message of the app’s own bot' }
  if (!channel || !ts || (text === undefined && !event.files)) throw new ApiError('bad_request', `The ${event.type} event lacks its channel, ts or text.`)
  const said = plainText(direct ? (text ?? '') : withoutMention(text ?? '', bot))
  const audio = audioOf(event)
  if (said === '' && !audio) return { kind: 'ignored', why: 'a message without text' }
  const message = { deliveryId: envelope.event_id, sender: { id: user }, thread: threadOf(event, channel, ts, direct), text: said }
  return { kind: 'message', message, ...(audio ? { audio } : {}) }
}

/** The first audio file of a message (a clip recorded in Slack is `slack_audio`): the one the agent hears. */
function audioOf(event: Event): SlackFile | undefined {
  const file = event.files?.find((f) => (f.subtype === 'slack_audio' || f.mimetype?.startsWith('audio/')) && f.url_private_download)
  return file && { name: file.name || 'audio', url: file.url_private_download!, ...(file.size === undefined ? {} : { size: file.size }) }
}

/** A direct message is one conversation per DM channel; a mention is answered in its thread (or starts one). */
function threadOf(event: Event, channel: string, ts: string, direct: boolean): InboundMessage['thread'] {
  if (direct) return { key: channel, target: { channel } }
  const threadTs = event.thread_ts ?? ts
  return { key: `${channel}:${threadTs}`, target: { channel, thread_ts: threadTs } }
}

/** "<@U0BOT> what is new?" is "what is new?" for the agent. Without a known bot id, the leading mention is the app's. */
function withoutMention(text: string, bot: string | undefined): string {
  const leading = /^\s*<@([A-Z0-9]+)(?:\|[^>]*)?>/.exec(text)
  return leading && (bot === undefined || leading[1] === bot) ? text.slice(leading[0].length) : text
}

/** Slack escapes these three in message text; the agent should read what the person typed. */
function plainText(text: string): string {
  return text.replaceAll('&lt;', '<').replaceAll('&gt;', '>').replaceAll('&amp;', '&').trim()
}
