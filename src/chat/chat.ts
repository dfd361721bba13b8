import { sql } from 'kysely'
import type { AgentConfigs } from '../agents/configs.ts'
import type { AgentSupervisor } from '../agents/supervisor.ts'
import type { Actor } from '../auth/actor.ts'
import { ApiError } from '../errors.ts'
import type { EventBus } from '../events/bus.ts'
import { createRecord } from '../models/records.ts'
import { WebchatConversation, WebchatParticipant } from '../models/webchat.ts'
import type { Writes } from '../events/writes.ts'
import type { Drain } from '../lifecycle/drain.ts'
import { whoStarts, type SystemSettings } from '../settings/system.ts'
import { hasRole } from '../auth/actor.ts'
import type { ActiveTurns, Reservation } from './active-turns.ts'
import { LRUCache } from 'lru-cache'
import { TtlCache } from '../cache.ts'
import { systemClock } from '../clock.ts'
import { attachmentsOf, chatConversation, colleagues, displayName, listConversations, markRead, nameUntitled, participantIds, type ConversationFilter, type ConversationSummary } from './conversations.ts'
import { titleOf } from './title.ts'
import type { ChatEvent, FeedEvent } from './events.ts'
import type { ChatFeed } from './feed.ts'
import { mentions } from './mention.ts'
import { history, insertMessage, lastExchange } from './messages.ts'
import { runTurn, type Turn, type TurnDeps } from './turn.ts'
import { spokenAttachments, type Voice } from '../voice/voice.ts'

export interface TurnRequest {
  /** The agent of a new conversation; for an existing one it may be left out, and must be the conversation's. */
  agent_id?: string
  /** Continue this conversation; left out, a new one is started. */
  conversation_id?: string
  text: string
  /** Documents of the conversation the message refers to, by id. */
  attachments?: string[]
  /** The voice note (heard in this conversation, by the kernel's voice) that `text` is the transcript of. */
  voice_clip_id?: string
}

/** A turn that has been admitted and runs as its events are read. */
export interface StartedTurn {
  /** `conversation` first, then the turn's own events. Reading them to the end (or stopping) frees the turn. */
  events: AsyncGenerator<ChatEvent>
  /** Stops the turn as an abort would (the client went away). */
  stop(reason: Error): void
  /** Aborted once the turn is told to stop, from here or from another process. */
  signal: AbortSignal
}

/**
 * Which door a message came through: the web chat and the API (`web`), which an agent's `channels.webchat.enabled`
 * closes, or one of the agent's other channels, which their own settings govern.
 */
export type Door = 'web' | 'channel'

/** How a turn ended: answered whole, stopped, or failed. */
export type TurnOutcome = 'complete' | 'aborted' | 'error'

/** How often one person's typing reaches the others, at most. */
const TYPING_INTERVAL_MS = 2_000

/**
 * Conversation turns on behalf of a signed-in caller, for scripts (POST /api/chat) and the web chat alike. Whoever
 * starts it, what the turn says is published to the conversation's feed, so every participant's browser sees it.
 */
export class Chat {
  /** The answer streamed so far by each turn of this process, for clients that come back mid-answer. */
  readonly #streaming = new Map<string, () => string>()
  readonly #typedAt = new Map<string, number>()
  readonly #turnEnded = new Set<(conversationId: string, outcome: TurnOutcome) => void>()
  // The TTL only backs up the events that drop an entry, for rows changed behind the API's back.
  readonly #participants = new TtlCache<string, ReadonlySet<string>>(systemClock, 60_000, 10_000)
  /**
   * Who had a turn admitted in a conversation lately: their next turn there takes the conversation's lock beside its
   * reads instead of after them. Only a hint (the reads still decide who may speak); it is dropped with the
   * participants, so a person removed from a conversation cannot hold its lock even for a round trip.
   */
  readonly #recentSpeakers = new LRUCache<string, Set<string>>({ max: 10_000, ttl: 60_000 })

  constructor(
    private readonly deps: TurnDeps & { turns: ActiveTurns; agents: AgentSupervisor; agentConfigs: AgentConfigs; feed: ChatFeed; events: EventBus; writes: Writes; drain: Drain; settings: SystemSettings; voice?: Voice },
  ) {
    deps.events.subscribe('chat.resume', ({ conversation_id, socket }) => this.#resend(conversation_id, socket))
    deps.events.subscribe('chat.participants', ({ conversation_id }) => {
      this.#participants.delete(conversation_id)
      this.#recentSpeakers.delete(conversation_id)
    })
    deps.events.onMissed(() => {
      this.#participants.clear()
      this.#recentSpeakers.clear()
    })
  }

  /**
   * Stores the caller's message and, unless the conversation is shared and the agent not mentioned, admits a turn:
   * the agent must be enabled and no other turn running in the conversation. A new conversation is created, titled
   * by the message.
   */
  async start(actor: Actor, request: TurnRequest, door: Door = 'web'): Promise<StartedTurn> {
    const reserved = request.conversation_id && this.#recentSpeakers.get(request.conversation_id.toLowerCase())?.has(actor.userId)
      ? this.deps.turns.reserve(request.conversation_id.toLowerCase(), actor.userId)
      : undefined
    if (!reserved) return this.#start(actor, request, door)
    try {
      const started = await this.#start(actor, request, door, reserved)
      // A message the agent is not asked to answer runs no turn.
      if (started.quiet) await this.deps.turns.unreserve(reserved)
      return started
    } catch (error) {
      await this.deps.turns.unreserve(reserved)
      throw error
    }
  }

  async #start(actor: Actor, request: TurnRequest, door: Door, reserved?: Reservation): Promise<StartedTurn & { quiet?: true }> {
    const { db, turns, budgets, drain } = this.deps
    drain.refuse('turns')
    const { conversation_id, text } = request
    // Judged beside the reads (a company without budgets answers from memory); a spent budget refuses the turn.
    const admitted = budgets.admit(actor)
    admitted.catch(() => {})
    if (!conversation_id && request.attachments?.length) {
      throw new ApiError('validation_error', 'Documents belong to a conversation: upload them to it first.', { errors: [{ path: 'attachments', message: 'needs conversation_id' }] })
    }
    // Independent reads, so concurrent: every round trip here is time before the first token. The history is
    // read alongside; if the conversation turns out not to be the caller's, it is never used.
    const agentRead = request.agent_id ? this.deps.agentConfigs.get(actor, request.agent_id) : undefined
    agentRead?.catch(() => {})
    // A new conversation has no documents yet.
    const documents = conversation_id ? this.deps.documents.context(conversation_id) : Promise.resolve({ text: '', truncated: false })
    documents.catch(() => {})
    const [existing, earlier, sender, attachments] = await Promise.all([
      conversation_id ? chatConversation(db, actor, conversation_id) : undefined,
      conversation_id ? history(db, conversation_id) : [],
      displayName(db, actor.userId),
      conversation_id && (request.attachments?.length || request.voice_clip_id) ? attachmentsOf(db, actor, conversation_id, request.attachments ?? [], request.voice_clip_id) : [],
    ])
    const agentId = existing ? existing.agent_id : request.agent_id
    if (!agentId && !existing) throw new ApiError('validation_error', 'Name the agent to start a conversation with.', { errors: [{ path: 'agent_id', message: 'needed without conversation_id' }] })
    if (!agentId) throw new ApiError('validation_error', 'This conversation has no agent any more (it was deleted).', { errors: [{ path: 'conversation_id', message: 'no agent' }] })
    if (!existing && door === 'web' && !hasRole(actor, 'admin') && whoStarts(await this.deps.settings.get('chat.who_starts_conversations'), agentId.toLowerCase()) === 'admins') {
      throw new ApiError('forbidden', 'Only admins start new conversations with this agent (the System setting chat.who_starts_conversations); go on with one you take part in, or ask an admin.')
    }
    if (existing && request.agent_id && request.agent_id.toLowerCase() !== agentId) {
      throw new ApiError('validation_error', 'This conversation talks to another agent.', { errors: [{ path: 'agent_id', message: 'not the conversation’s agent' }] })
    }
    const agent = await (agentRead ?? this.deps.agentConfigs.get(actor, agentId))
    const shared = existing?.shared === true
    const answers = !shared || mentions(text, agent.name)
    if (answers && !agent.enabled) throw new ApiError('conflict', `The agent ${agent.name} is disabled.`)
    if (door === 'web' && agent.channels.webchat?.enabled === false) {
      throw new ApiError('conflict', `${agent.name} does not take conversations in the web chat (its web chat channel is switched off).`)
    }
    // Before anything is stored: a refused first message leaves no empty conversation behind.
    const notices = answers ? await admitted : []

    const conversation =
      existing ?? (await this.deps.writes.run(actor, (scope) => createRecord(scope, WebchatConversation, WebchatConversation.create.parse({ agent_id: agent.id, title: titleOf(text) })))).record
    const said: Extract<FeedEvent, { type: 'user_message' }> = {
      type: 'user_message',
      message_id: Bun.randomUUIDv7(),
      sender: actor.userId,
      display_name: sender,
      text,
      time: new Date().toISOString(),
      attachments,
    }
    if (!answers) {
      if (request.voice_clip_id) await this.#sayHeard(request.voice_clip_id, said.message_id)
      const base = { company_id: conversation.company_id, conversation_id: conversation.id, agent_id: null, role: 'user', status: 'complete' } as const
      await insertMessage(db, { ...base, sender_id: actor.userId, text, attachments }, said.message_id)
      await this.#announce(conversation, said, text)
      return { ...quietTurn(conversation.id, `Stored. In a shared conversation ${agent.name} answers only when mentioned (@${agent.name}).`), quiet: true }
    }
    const controller = await turns.start(conversation.id, actor.userId, reserved)
    // Taken once the turn is admitted: a busy conversation refuses the message and leaves the note to say again.
    if (request.voice_clip_id) {
      await this.#sayHeard(request.voice_clip_id, said.message_id).catch((error) => {
        void turns.finish(conversation.id, controller)
        throw error
      })
    }
    this.#spoke(conversation.id, actor.userId)
    // Published once the turn is admitted (a refused one stores nothing); the turn stores it under this id.
    await this.#announce(conversation, said, text, !existing).catch((error) => {
      void turns.finish(conversation.id, controller)
      throw error
    })
    // The web chat hears the answer spoken here; a channel's turn is spoken by its channel, as its platform sends it.
    const aloud = door === 'web' && this.deps.voice?.aloud(agent, request.voice_clip_id !== undefined) === true
    return this.#run({ actor, agent, conversation, history: earlier, documents, text, notices, message: { id: said.message_id, attachments }, signal: controller.signal }, controller, aloud)
  }

  /** The voice note becomes the message's: once, so two requests cannot both say it. */
  async #sayHeard(clipId: string, messageId: string): Promise<void> {
    const taken = await this.deps.db.updateTable('voice_clips').set({ message_id: messageId }).where('id', '=', clipId.toLowerCase()).where('message_id', 'is', null).returning('id').executeTakeFirst()
    if (!taken) throw new ApiError('conflict', 'That voice note was said already.')
  }

  /**
   * Answers the conversation's latest question again, edited first when `text` is given (only its writer may): the
   * new answer is a version of the latest one, which stays for people to flip back to but leaves what the model reads.
   */
  async regenerate(actor: Actor, request: { conversation_id: string; text?: string }, door: Door = 'web'): Promise<StartedTurn> {
    const { db, turns, budgets, drain, feed } = this.deps
    drain.refuse('turns')
    const conversation = await chatConversation(db, actor, request.conversation_id.toLowerCase())
    if (!conversation.agent_id) throw new ApiError('conflict', 'This conversation has no agent any more (it was deleted).')
    const agent = await this.deps.agentConfigs.get(actor, conversation.agent_id)
    if (!agent.enabled) throw new ApiError('conflict', `The agent ${agent.name} is disabled.`)
    if (door === 'web' && agent.channels.webchat?.enabled === false) {
      throw new ApiError('conflict', `${agent.name} does not take conversations in the web chat (its web chat channel is switched off).`)
    }
    const notices = await budgets.admit(actor)
    // Under the conversation's turn lock: what is the latest exchange cannot change while it is answered again.
    const controller = await turns.start(conversation.id, actor.userId)
    try {
      const last = await lastExchange(db, conversation.id)
      if (!last) throw new ApiError('conflict', 'There is nothing to answer again: the conversation does not end with an answer to a question.')
      if (last.question.sender_id !== actor.userId) throw new ApiError('forbidden', 'Only who asked the question has it answered again or edits it.')
      let text = last.question.text
      if (request.text !== undefined && request.text !== text) {
        text = request.text
        await db.updateTable('webchat_messages').set({ text, updated_at: new Date(), version: sql`version + 1` }).where('id', '=', last.question.id).execute()
        void feed.publish(conversation.id, { type: 'user_message_edited', message_id: last.question.id, text })
      }
      const earlier = await history(db, conversation.id, { beforeId: last.question.id })
      const message = { id: last.question.id, attachments: last.question.attachments, stored: true as const }
      return this.#run({ actor, agent, conversation, history: earlier, text, notices, message, regenerates: { group: last.answer.group }, signal: controller.signal }, controller)
    } catch (error) {
      await turns.finish(conversation.id, controller)
      throw error
    }
  }

  /**
   * Sends the agent a continuation message of the conversation's plan, as `actor` (who executed or resumed it), when
   * no turn is running there. `prompt` is asked once the turn is admitted, and answers the message, or nothing when
   * the plan may not go on (paused meanwhile, out of continuations): then no turn runs. True when one started; its
   * events go to the conversation's feed.
   */
  async continuePlan(actor: Actor, conversationId: string, prompt: () => Promise<string | undefined>): Promise<boolean> {
    const { db, turns, feed, log } = this.deps
    // Another process's turn end asks again.
    if (this.deps.drain.draining) return false
    const [conversation, earlier] = await Promise.all([chatConversation(db, actor, conversationId), history(db, conversationId)])
    if (!conversation.agent_id) return false
    const agent = await this.deps.agentConfigs.get(actor, conversation.agent_id)
    if (!agent.enabled) return false
    const refused = await this.deps.budgets.refusal(actor)
    if (refused) {
      // The plan stops here: the people are told why, and resuming it after the budget allows goes on.
      void feed.publish(conversation.id, { type: 'notice', text: `The plan cannot go on: ${refused}` })
      return false
    }
    const controller = await turns.start(conversation.id).catch((error) => {
      // Another turn runs there: its end asks again.
      if (error instanceof ApiError && error.code === 'conflict') return undefined
      throw error
    })
    if (!controller) return false
    const text = await prompt().catch(async (error) => {
      await turns.finish(conversation.id, controller)
      throw error
    })
    if (!text) {
      await turns.finish(conversation.id, controller)
      return false
    }
    void feed.publish(conversation.id, { type: 'notice', text })
    const message = { id: Bun.randomUUIDv7(), attachments: [], role: 'system' as const }
    const { events } = this.#run({ actor, agent, conversation, history: earlier, text, message, signal: controller.signal }, controller)
    void (async () => {
      for await (const _ of events);
    })().catch((error) => log.error('plan continuation failed', { conversation_id: conversation.id, error: String(error) }))
    return true
  }

  /** Hears each turn's end, in this process, with how it ended (after its lock is released). */
  onTurnEnd(listener: (conversationId: string, outcome: TurnOutcome) => void): () => void {
    this.#turnEnded.add(listener)
    return () => void this.#turnEnded.delete(listener)
  }

  /** Runs an admitted turn on the agent's live instance, publishing what it says to the conversation's feed. */
  #run(turn: Turn, controller: AbortController, aloud = false): StartedTurn {
    const { turns, agents, feed } = this.deps
    const conversation = turn.conversation
    // The turn runs on the agent's live instance: a reload meanwhile waits for it before stopping that instance.
    const release = agents.instance(turn.agent.id).lease()
    const deps = this.deps
    let streamed = ''
    this.#streaming.set(conversation.id, () => streamed)
    const streaming = this.#streaming
    const ended = this.#turnEnded
    async function* events(): AsyncGenerator<ChatEvent> {
      let outcome: TurnOutcome = 'aborted'
      try {
        yield { type: 'conversation', conversation_id: conversation.id }
        const turning = deps.tracing.spanned('chat turn', { 'switchboard.agent': turn.agent.id, 'switchboard.conversation': conversation.id }, () => runTurn(deps, turn))
        for await (const event of turning) {
          if (event.type === 'stream') {
            void feed.publish(conversation.id, { type: 'stream', text: event.text, offset: streamed.length })
            streamed += event.text
          } else if (event.type !== 'tool_result' && event.type !== 'conversation') {
            // Once the answer is settled, a client coming back gets it from the store, not as a stream after it.
            if (event.type === 'message' || event.type === 'aborted' || event.type === 'error') streaming.delete(conversation.id)
            void feed.publish(conversation.id, event)
          }
          if (event.type === 'message') {
            outcome = 'complete'
            answered = { id: event.message_id, text: event.text }
          } else if (event.type === 'error') outcome = 'error'
          yield event
        }
      } finally {
        streaming.delete(conversation.id)
        release()
        await turns.finish(conversation.id, controller)
        for (const listener of ended) listener(conversation.id, outcome)
      }
      // Spoken once the turn is over, so nobody waits on the voice to write again.
      if (aloud && answered) void speakAnswer(answered)
    }
    let answered: { id: string; text: string } | undefined
    const speakAnswer = async (answer: { id: string; text: string }) => {
      try {
        const clips = await deps.voice!.speak(turn.agent, { userId: turn.actor.userId, conversationId: conversation.id }, answer.id, answer.text)
        await feed.publish(conversation.id, { type: 'voice', message_id: answer.id, attachments: spokenAttachments(clips) })
      } catch (error) {
        deps.log.warn('an answer was not spoken', { conversation_id: conversation.id, error: String(error) })
        await feed.publish(conversation.id, { type: 'notice', text: `The answer could not be spoken: ${error instanceof Error ? error.message : String(error)}` }).catch(() => {})
      }
    }
    return { events: events(), stop: (reason) => controller.abort(reason), signal: controller.signal }
  }

  /** Stops the conversation's running turn; true when one was running. Only a participant may, or learn of it. */
  async abort(actor: Actor, conversationId: string): Promise<boolean> {
    // The id as stored (lower case): turns, locks and events know a conversation by it.
    const { id } = await chatConversation(this.deps.db, actor, conversationId.toLowerCase())
    return this.deps.turns.abort(id)
  }

  /** The caller's conversations, pinned first, with their unread counts. */
  conversations(actor: Actor, filter?: ConversationFilter): Promise<ConversationSummary[]> {
    return listConversations(this.deps.db, actor, filter)
  }

  /** Everything so far in the conversation counts as read by the caller. */
  read(actor: Actor, conversationId: string): Promise<void> {
    return markRead(this.deps.db, actor, conversationId.toLowerCase())
  }

  /** Members of the caller's company, to share a conversation with. */
  colleagues(actor: Actor, query: string) {
    return colleagues(this.deps.db, actor, query)
  }

  /** Who takes part in the conversation (user ids); cached, and dropped on every process when it changes. */
  participants(conversationId: string): Promise<ReadonlySet<string>> {
    return this.#participants.get(conversationId, async () => new Set(await participantIds(this.deps.db, conversationId)))
  }

  /** After participants were added or removed: every process forgets who takes part, and the people are told. */
  /**
   * Chat writes people see live, whoever made them: who takes part (sockets follow; a removed person's close), a
   * conversation's title, its end.
   */
  follow(writes: Writes): void {
    writes.on(async (write) => {
      if (write.type !== 'record') return
      const { model, verb, id, record } = write
      if (model === WebchatParticipant && verb !== 'update') {
        await this.participantsChanged(String(record.conversation_id), verb === 'delete' ? [String(record.user_id)] : [])
      }
      if (model === WebchatConversation && verb === 'delete') await this.participantsChanged(id, ['*'])
      if (model === WebchatConversation && verb === 'update') await this.renamed(id, String(record.title))
    })
  }

  async participantsChanged(conversationId: string, removed: string[] = []): Promise<void> {
    await this.deps.events.publish('chat.participants', { conversation_id: conversationId, ...(removed.length ? { removed } : {}) })
    await this.deps.feed.publish(conversationId, { type: 'participants' })
  }

  /** A conversation's title was written: every participant's list and page show the new one. */
  async renamed(conversationId: string, title: string): Promise<void> {
    await this.deps.feed.publish(conversationId, { type: 'conversation_update', title })
  }

  /** Tells the other participants that the caller is typing; repeated notices within a short while are dropped. */
  async typing(actor: Actor, conversationId: string): Promise<void> {
    const record = await chatConversation(this.deps.db, actor, conversationId.toLowerCase())
    const key = `${actor.userId}:${record.id}`
    const now = Date.now()
    if (now - (this.#typedAt.get(key) ?? 0) < TYPING_INTERVAL_MS) return
    if (this.#typedAt.size > 10_000) this.#typedAt.clear()
    this.#typedAt.set(key, now)
    const display_name = await displayName(this.deps.db, actor.userId)
    await this.deps.feed.publish(record.id, { type: 'user_typing', sender: actor.userId, display_name }, { exceptUser: actor.userId })
  }

  /** Notes that `userId` may speak in the conversation, so their next turn there reserves its lock early. */
  #spoke(conversationId: string, userId: string): void {
    const speakers = this.#recentSpeakers.get(conversationId)
    if (speakers) speakers.add(userId)
    else this.#recentSpeakers.set(conversationId, new Set([userId]))
  }

  /** The user's message to everyone in the conversation, and its first title where it had none. */
  async #announce(conversation: { id: string; company_id: string; title: string }, said: FeedEvent, text: string, created = false): Promise<void> {
    const { db, feed } = this.deps
    void feed.publish(conversation.id, said)
    if (created) void feed.publish(conversation.id, { type: 'conversation_update', title: conversation.title })
    else if (conversation.title === '' && (await nameUntitled(db, conversation, titleOf(text)))) {
      void feed.publish(conversation.id, { type: 'conversation_update', title: titleOf(text) })
    }
  }

  /** A socket came (back) mid-answer: the answer so far, from the start, to that socket; it keeps what it lacks. */
  #resend(conversationId: string, socket: string): void {
    const streamed = this.#streaming.get(conversationId)?.()
    if (streamed === undefined) return
    void this.deps.feed.publish(conversationId, { type: 'typing' }, { toSocket: socket })
    if (streamed) void this.deps.feed.publish(conversationId, { type: 'stream', text: streamed, offset: 0 }, { toSocket: socket })
  }
}

/** The answer to a message the agent does not answer: the conversation, and a notice saying why. */
function quietTurn(conversationId: string, notice: string): StartedTurn {
  async function* events(): AsyncGenerator<ChatEvent> {
    yield { type: 'conversation', conversation_id: conversationId }
    yield { type: 'notice', text: notice }
  }
  return { events: events(), stop: () => {}, signal: new AbortController().signal }
}
