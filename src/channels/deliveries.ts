import type { Actor } from '../auth/actor.ts'
import { displayName } from '../chat/conversations.ts'
import { DocumentError } from '../documents/errors.ts'
import { SlotsBusy } from '../documents/slots.ts'
import { hashSecret } from '../auth/secrets.ts'
import { readDocument } from '../documents/read.ts'
import { sanitizeFilename } from '../documents/filename.ts'
import { EXTRACTED_TEXT_CAP, KB } from '../documents/text-cap.ts'
import { describeBytes } from '../documents/sizes.ts'
import { jsonb } from '../db/jsonb.ts'
import { ApiError } from '../errors.ts'
import { createRecord } from '../models/records.ts'
import { WebchatConversation } from '../models/webchat.ts'
import type { Rate } from '../throttle/buckets.ts'
import type { Channels, ChannelsOptions } from './channels.ts'
import type { ChannelEndpoint, ChannelPlatform, InboundAttachment, InboundMessage } from './contract.ts'
import { redeemLinkCode } from './link-codes.ts'
import { record, type Claim, type InboxRow } from './queue.ts'
import { badCodeReply, LINK_COMMAND, linkedReply, skippedAttachments, strangerReply, tooManyCodesReply, turnFailedReply } from './replies.ts'
import { linkSpeaker, speakerOf } from './speakers.ts'
import { ChannelApprovals } from './approvals.ts'
import type { Outcome } from './worker.ts'
import { audioType, VoiceError } from '../voice/audio.ts'
import { spokenAttachments, type VoiceAgent } from '../voice/voice.ts'

/** A message waits this long for a turn running in its conversation (begun in the web chat) before giving up. */
const BUSY_GIVE_UP_MS = 30 * 60_000
/** Typing indicators fade after about five seconds on the platforms that have them. */
const TYPING_EVERY_MS = 4_000
/** Attachments of one message, together, at most (they wait in the inbox as base64), and how many. */
export const ATTACHMENTS_MAX_BYTES = 20 * 1024 * 1024
const ATTACHMENTS_MAX = 20
/** The longest message kept, as in the web chat. */
const TEXT_MAX = 100_000
/** Longer ids and keys (an email's References) are kept as their hash: indexes have a size limit. */
const KEY_MAX = 200
/** A stranger is told how to link at most once an hour per platform account, however often they write. */
const STRANGER_REPLY_EVERY_MS = 3_600_000
/** Wrong link codes allowed per platform account, and per company from all its accounts, each an hour. */
export const LINK_TRIES_PER_ACCOUNT: Rate = { burst: 5, perSecond: 5 / 3600 }
export const LINK_TRIES_PER_COMPANY: Rate = { burst: 50, perSecond: 50 / 3600 }

/** Where answers to a message go, and the thread they belong to. */
interface Place {
  companyId: string
  agentId: string
  platform: ChannelPlatform
  threadKey: string
  target: InboundMessage['thread']['target']
}

/** The first attachment whose bytes are audio is the voice note heard; the others are read as documents. */
async function voiceNoteOf(attachments: InboundAttachment[]) {
  let voiceNote: { name: string; bytes: Uint8Array } | undefined
  const others: InboundAttachment[] = []
  for (const attachment of attachments) {
    const bytes = new Uint8Array(Buffer.from(attachment.base64, 'base64'))
    if (!voiceNote && (await audioType(bytes))) voiceNote = { name: attachment.name, bytes }
    else others.push(attachment)
  }
  return { voiceNote, others }
}

/** A message as the inbox keeps it, with what its processing has done so far (a retry goes on from there). */
type Kept = InboundMessage & {
  /** Attachments left out for their size. */
  dropped?: string[]
  /** The documents read from the attachments, and what was said of those not read. */
  documents?: string[]
  notes?: string[]
  /** The turn was admitted: a retry after that must not run it again. */
  started?: boolean
  /** The voice note heard, and what was made out of it: a retry says it without hearing it again. */
  heard?: { clip_id: string; text: string }
}

function shortKey(value: string): string {
  return value.length <= KEY_MAX ? value : `sha256:${hashSecret(value)}`
}

/**
 * What came in on a channel: kept once (the platform's delivery id is the key, across processes), then answered
 * as the person the sender is linked to, in the conversation of their thread.
 */
export class Deliveries {
  readonly #approvals: ChannelApprovals

  constructor(
    private readonly options: ChannelsOptions,
    private readonly channels: Channels,
  ) {
    this.#approvals = new ChannelApprovals(options, channels)
    // Whatever the agent says later in a channel's conversation (a background task's result, a plan's next step)
    // goes to the platform too, and so does a tool call waiting for the person's yes. The process that said it
    // queues it; the key keeps it once.
    this.options.events.subscribe('chat.event', ({ conversation_id, event }, origin) => {
      if (origin !== 'here') return
      const said =
        event.type === 'message' ? this.#forward(conversation_id, event.message_id, event.text) : event.type === 'approval' ? this.#approvals.tell(event.approval) : undefined
      void said?.catch((error) => this.options.log.error('channel forward failed', { conversation_id, error: String(error) }))
    })
  }

  async receive(endpoint: ChannelEndpoint, message: InboundMessage): Promise<boolean> {
    // A draining process takes no webhook: the platform's retry (or the balancer) brings it to another process.
    this.options.drain?.refuse('webhooks')
    // An answer to a tool call the thread's turn waits on is taken now: queued, it would wait behind that turn.
    if (await this.#approvals.answer(endpoint, message, shortKey(message.thread.key))) {
      await this.channels.recordDelivery(endpoint)
      return true
    }
    const attachments = message.attachments ?? []
    const size = attachments.reduce((sum, a) => sum + a.base64.length * 0.75, 0)
    const fits = size <= ATTACHMENTS_MAX_BYTES && attachments.length <= ATTACHMENTS_MAX
    const kept: Kept = {
      ...message,
      text: message.text.slice(0, TEXT_MAX),
      thread: { ...message.thread, key: shortKey(message.thread.key) },
      attachments: fits ? attachments : [],
      ...(fits ? {} : { dropped: attachments.map((a) => a.name) }),
    }
    const inserted = await this.options.db
      .insertInto('channel_inbox')
      .values({
        id: Bun.randomUUIDv7(),
        company_id: endpoint.companyId,
        agent_id: endpoint.agentId,
        platform: endpoint.platform,
        delivery_id: shortKey(message.deliveryId),
        thread_key: kept.thread.key,
        message: jsonb(kept),
        next_attempt_at: new Date(this.options.clock.now()),
      })
      .onConflict((oc) => oc.columns(['agent_id', 'platform', 'delivery_id']).doNothing())
      .returning('id')
      .executeTakeFirst()
    await this.channels.recordDelivery(endpoint)
    if (inserted) this.channels.wake()
    return inserted !== undefined
  }

  async process(row: InboxRow, claim: Claim): Promise<Outcome> {
    const platform = row.platform as ChannelPlatform
    const endpoint = await this.channels.endpoint(row.agent_id, platform)
    if (!endpoint) return { failed: true, error: `The agent's ${platform} channel was switched off before the message was answered.` }
    const message = row.message as Kept
    // A try before this one got the turn going (and stopped, or its process did): its answer, if any, went out.
    if (message.started) return {}
    const notice = (text: string, noticeKey = `notice:${row.id}`) => this.channels.enqueue({ ...this.#place(endpoint, message), key: noticeKey, text })
    const adminBaseUrl = this.options.adminBaseUrl

    const link = message.sender.verified === false ? null : LINK_COMMAND.exec(message.text)
    if (link) {
      const tries = await this.#linkTries(endpoint, message)
      if (!tries.allowed) {
        // Told once an hour, like a stranger: a flood of guesses must not become a flood of answers.
        await notice(tooManyCodesReply(tries.retryAfter), `link-limit:${shortKey(message.sender.id)}:${Math.floor(this.options.clock.now() / STRANGER_REPLY_EVERY_MS)}`)
        return {}
      }
      const userId = await redeemLinkCode(this.options.db, this.options.clock, endpoint.companyId, link[1]!)
      if (!userId) return (await notice(badCodeReply(adminBaseUrl)), {})
      await tries.giveBack()
      await linkSpeaker(this.options.db, endpoint.companyId, userId, platform, message.sender)
      await notice(linkedReply(endpoint, await displayName(this.options.db, userId)))
      return {}
    }

    const userId = await speakerOf(this.options.db, endpoint.companyId, platform, message.sender)
    const actor = userId ? await this.options.authenticator.memberActor(userId, endpoint.companyId).catch(() => undefined) : undefined
    if (!actor || actor.companyId !== endpoint.companyId) {
      // A mail whose sender nobody vouched for gets no answer: it would go to whoever the From address names.
      if (message.sender.verified === false) {
        await this.channels.recordError(endpoint, `A message from ${message.sender.id} was not answered: its sender is not authenticated.`)
        return {}
      }
      // Keyed by the hour, so a stranger who writes often hears it once an hour, not after every message.
      await notice(strangerReply(endpoint, adminBaseUrl), `stranger:${shortKey(message.sender.id)}:${Math.floor(this.options.clock.now() / STRANGER_REPLY_EVERY_MS)}`)
      return {}
    }
    return this.#answer(row, claim, endpoint, message, actor)
  }

  /**
   * Link codes tried: each platform account may get a few wrong in an hour, and a company's accounts together a
   * few dozen, so codes cannot be guessed by writing many times, nor from many accounts. A code that works is given
   * back, so people linking never use the limit up.
   */
  async #linkTries(endpoint: ChannelEndpoint, message: Kept) {
    const now = this.options.clock.now()
    const keys: Array<[string, Rate]> = [
      [`link:${endpoint.companyId}:${endpoint.platform}:${shortKey(message.sender.id)}`, LINK_TRIES_PER_ACCOUNT],
      [`link:${endpoint.companyId}`, LINK_TRIES_PER_COMPANY],
    ]
    const taken: Array<[string, Rate]> = []
    let retryAfter = 0
    for (const [key, rate] of keys) {
      const take = await this.options.guesses.take(key, rate, now)
      if (take.allowed) taken.push([key, rate])
      else retryAfter = Math.max(retryAfter, take.retryAfter)
    }
    const giveBack = () => Promise.all(taken.map(([key, rate]) => this.options.guesses.give(key, rate, this.options.clock.now()))).then(() => undefined)
    // One bucket refusing: the other's token goes back, since no code was tried.
    if (retryAfter > 0) await giveBack()
    return { allowed: retryAfter === 0, retryAfter, giveBack }
  }

  /** Tells the sender their message was given up on after its tries (the turn kept failing). */
  async gaveUp(row: InboxRow, error: string): Promise<void> {
    const endpoint = await this.channels.endpoint(row.agent_id, row.platform as ChannelPlatform)
    if (!endpoint) return
    const message = row.message as Kept
    if (message.sender.verified === false) return
    await this.channels.recordError(endpoint, `A message was given up on: ${error}`)
    await this.channels.enqueue({ ...this.#place(endpoint, message), key: `gave-up:${row.id}`, text: turnFailedReply(endpoint, 'something went wrong on our side; please send it again later.') })
  }

  /** Runs the turn as the person, in their thread's conversation; its answer reaches the platform through the outbox. */
  async #answer(row: InboxRow, claim: Claim, endpoint: ChannelEndpoint, message: Kept, actor: Actor): Promise<Outcome> {
    const { db, clock } = this.options
    const place = this.#place(endpoint, message)
    const conversationId = await this.#conversation(endpoint, message, actor)
    const agent = await this.#voiceAgent(endpoint)
    if (!message.documents) {
      // Heard and read once: a retry (the conversation was busy) reuses them rather than storing them again.
      const { voiceNote, others } = await voiceNoteOf(message.attachments ?? [])
      const heard = voiceNote ? await this.#hear(agent, conversationId, actor, voiceNote) : undefined
      const read = await this.#documents(endpoint, conversationId, { ...message, attachments: others }, actor, row.id).catch((error) => {
        if (error instanceof SlotsBusy) return undefined
        throw error
      })
      if (!read) return { retryAt: new Date(clock.now() + 5_000), error: 'Many documents are being read just now.', countAttempt: false }
      const notes = [
        ...(typeof heard === 'string' ? [heard] : []),
        ...read.skipped,
        ...(message.dropped?.length ? [skippedAttachments(message.dropped, `more than ${ATTACHMENTS_MAX} or 20 MiB together`)] : []),
        ...(message.lost ?? []).slice(0, ATTACHMENTS_MAX).map((file) => skippedAttachments([sanitizeFilename(file.name)], file.why.slice(0, 300))),
      ]
      Object.assign(message, { documents: read.documents, notes, attachments: [], ...(typeof heard === 'object' ? { heard } : {}) })
      await record(db, claim, { message: jsonb(message) })
      if (notes.length > 0) await this.channels.enqueue({ ...place, key: `attachments:${row.id}`, text: notes.join('\n') })
    }
    const text = [message.text.trim(), message.heard?.text].filter(Boolean).join('\n\n')
    // A voice note alone that could not be heard: its sender was told why, and there is nothing to answer.
    if (text === '' && !message.documents?.length) return {}
    let started
    try {
      started = await this.options.chat.start(
        actor,
        { conversation_id: conversationId, text: text || '(attachments)', attachments: message.documents, ...(message.heard ? { voice_clip_id: message.heard.clip_id } : {}) },
        'channel',
      )
    } catch (error) {
      const busy = error instanceof ApiError && error.code === 'conflict' && error.message.startsWith('A turn is already running')
      if (busy && clock.now() - new Date(row.created_at).getTime() < BUSY_GIVE_UP_MS) {
        return { retryAt: new Date(clock.now() + 1_000), error: error.message, countAttempt: false }
      }
      if (error instanceof ApiError) {
        await this.channels.enqueue({ ...place, key: `error:${row.id}`, text: turnFailedReply(endpoint, error.message) })
        return { failed: true, error: error.message }
      }
      throw error
    }
    await record(db, claim, { message: jsonb({ ...message, started: true }) })
    const driver = this.channels.driver(endpoint.platform)
    const type = () => void driver?.typing?.(endpoint, place.target).catch(() => {})
    type()
    const typing = setInterval(type, TYPING_EVERY_MS)
    const said: Array<{ messageId: string; text: string }> = []
    try {
      for await (const event of started.events) {
        if (event.type === 'message') said.push({ messageId: event.message_id, text: event.text })
        if (event.type === 'message') await this.channels.enqueue({ ...place, key: `message:${event.message_id}`, text: event.text })
        else if (event.type === 'error') await this.channels.enqueue({ ...place, key: `error:${row.id}`, text: turnFailedReply(endpoint, event.text) })
        else if (event.type === 'notice' && event.kind === 'budget') await this.channels.enqueue({ ...place, key: `budget:${row.id}`, text: event.text })
      }
    } finally {
      clearInterval(typing)
    }
    // Spoken after the text has been queued, so the words never wait for the voice.
    if (this.options.voice.aloud(agent, message.heard !== undefined)) {
      for (const answer of said) await this.#speak(endpoint, agent, place, conversationId, actor, answer)
    }
    return {}
  }

  async #voiceAgent(endpoint: ChannelEndpoint): Promise<VoiceAgent> {
    return this.options.db.selectFrom('agent_configs').select(['id', 'company_id', 'name', 'runner', 'voice']).where('id', '=', endpoint.agentId).executeTakeFirstOrThrow()
  }

  /** The voice note heard, or why not, in words for its sender. */
  async #hear(agent: VoiceAgent, conversationId: string, actor: Actor, note: { name: string; bytes: Uint8Array }): Promise<Kept['heard'] | string> {
    try {
      const heard = await this.options.voice.hear(agent, { userId: actor.userId, conversationId }, note.bytes)
      return { clip_id: heard.clipId, text: heard.text }
    } catch (error) {
      if (error instanceof VoiceError) return `Your voice note was not heard: ${error.message}`
      throw error
    }
  }

  /** The answer spoken, each part queued as a voice message; a failure is reported, as the text has gone already. */
  async #speak(endpoint: ChannelEndpoint, agent: VoiceAgent, place: Place, conversationId: string, actor: Actor, answer: { messageId: string; text: string }) {
    try {
      const clips = await this.options.voice.speak(agent, { userId: actor.userId, conversationId }, answer.messageId, answer.text)
      for (const clip of clips) await this.channels.enqueue({ ...place, key: `voice:${answer.messageId}:${clip.part}`, text: '', voiceClipId: clip.clipId })
      // Whoever has the conversation open in the web chat gets the players too, after the answer they play.
      await this.options.feed.publish(conversationId, { type: 'voice', message_id: answer.messageId, attachments: spokenAttachments(clips) })
    } catch (error) {
      await this.channels.recordError(endpoint, `An answer could not be spoken (it went as text): ${error instanceof Error ? error.message : String(error)}`)
    }
  }

  /** Where answers to this message go, and the thread they belong to. */
  #place(endpoint: ChannelEndpoint, message: InboundMessage): Place {
    return { companyId: endpoint.companyId, agentId: endpoint.agentId, platform: endpoint.platform, threadKey: message.thread.key, target: message.thread.target }
  }

  /** The person's conversation of this thread, begun with the first message; the thread remembers where to answer. */
  async #conversation(endpoint: ChannelEndpoint, message: InboundMessage, actor: Actor): Promise<string> {
    const { db } = this.options
    const key = { agent_id: endpoint.agentId, platform: endpoint.platform, thread_key: message.thread.key, user_id: actor.userId }
    const known = await db
      .updateTable('channel_threads')
      .set({ target: jsonb(message.thread.target), updated_at: new Date(this.options.clock.now()) })
      .where('agent_id', '=', key.agent_id)
      .where('platform', '=', key.platform)
      .where('thread_key', '=', key.thread_key)
      .where('user_id', '=', key.user_id)
      .returning('conversation_id')
      .executeTakeFirst()
    if (known) return known.conversation_id
    const title = `${endpoint.platform === 'email' ? 'Email' : endpoint.platform[0]!.toUpperCase() + endpoint.platform.slice(1)}: ${message.text.replace(/\s+/g, ' ').trim().slice(0, 60) || 'conversation'}`
    // The conversation and the thread that leads to it commit together: a thread never points at nothing.
    return this.options.writes.transaction(actor, async (scope) => {
      const { record } = await createRecord(scope, WebchatConversation, WebchatConversation.create.parse({ agent_id: endpoint.agentId, title }))
      await scope.db
        .insertInto('channel_threads')
        .values({ id: Bun.randomUUIDv7(), company_id: endpoint.companyId, ...key, conversation_id: record.id, target: jsonb(message.thread.target) })
        .execute()
      return record.id
    })
  }

  /** Attachments that are documents, read as web chat uploads are; the others are named back to the sender. */
  async #documents(endpoint: ChannelEndpoint, conversationId: string, message: InboundMessage, actor: Actor, inboxId: string) {
    const documents: string[] = []
    const skipped: string[] = []
    for (const attachment of message.attachments ?? []) {
      const filename = sanitizeFilename(attachment.name)
      const bytes = new Uint8Array(Buffer.from(attachment.base64, 'base64'))
      if (bytes.length > this.options.documentMaxBytes) {
        skipped.push(skippedAttachments([filename], `larger than ${describeBytes(this.options.documentMaxBytes)}`))
        continue
      }
      try {
        const { mediaType, text, truncated } = await readDocument(bytes, filename, { companyId: endpoint.companyId, userId: actor.userId }, this.options.sandbox)
        if (truncated) skipped.push(`Only the first ${EXTRACTED_TEXT_CAP / KB} KB of text of ${filename} was kept.`)
        documents.push(
          await this.options.documents.add({
            companyId: endpoint.companyId,
            conversationId,
            uploadedBy: actor.userId,
            filename,
            mediaType,
            sizeBytes: bytes.length,
            extractedText: text,
            truncated,
          }),
        )
      } catch (error) {
        if (!(error instanceof DocumentError)) throw error
        skipped.push(skippedAttachments([filename], error.message))
        this.options.log.info('channel attachment not read', { inbox_id: inboxId, filename, error: error.message })
      }
    }
    return { documents, skipped }
  }

  /** Queues an agent's message said in a channel's conversation outside a channel's turn. */
  #forward(conversationId: string, messageId: string, text: string): Promise<void> {
    return this.channels.enqueueInConversation(conversationId, () => ({ key: `message:${messageId}`, text }))
  }
}
