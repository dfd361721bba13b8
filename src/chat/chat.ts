import type { AgentSupervisor } from '../agents/supervisor.ts'
import type { Actor } from '../auth/actor.ts'
import { ApiError } from '../errors.ts'
import { AgentConfigRecord } from '../models/agent-config.ts'
import { createRecord, getRecord } from '../models/records.ts'
import { WebchatConversation } from '../models/webchat.ts'
import type { ActiveTurns } from './active-turns.ts'
import type { ChatEvent } from './events.ts'
import { history } from './messages.ts'
import { runTurn, type TurnDeps } from './turn.ts'

export interface TurnRequest {
  agent_id: string
  /** Continue this conversation; left out, a new one is started. */
  conversation_id?: string
  text: string
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

/** Conversation turns on behalf of a signed-in caller, for scripts (POST /api/chat) and the web chat alike. */
export class Chat {
  constructor(private readonly deps: TurnDeps & { turns: ActiveTurns; agents: AgentSupervisor }) {}

  /**
   * Admits a turn: the agent and the conversation must be the caller's to see, the agent enabled, and no other
   * turn running in the conversation. A new conversation is created, titled by the message.
   */
  async start(actor: Actor, request: TurnRequest): Promise<StartedTurn> {
    const { db, turns, agents } = this.deps
    const { agent_id, conversation_id, text } = request
    // Independent reads, so concurrent: every round trip here is time before the first token. The history is
    // read alongside; if the conversation turns out not to be the caller's, it is never used.
    const [{ record: agent }, existing, earlier] = await Promise.all([
      getRecord(db, actor, AgentConfigRecord, agent_id),
      conversation_id ? getRecord(db, actor, WebchatConversation, conversation_id) : undefined,
      conversation_id ? history(db, conversation_id) : [],
    ])
    if (!agent.enabled) throw new ApiError('conflict', `The agent ${agent.name} is disabled.`)
    const conversation =
      existing?.record ?? (await createRecord(db, actor, WebchatConversation, WebchatConversation.create.parse({ agent_id, title: text.slice(0, 80) }))).record
    const controller = await turns.start(conversation.id)
    // The turn runs on the agent's live instance: a reload meanwhile waits for it before stopping that instance.
    const release = agents.instance(agent.id).lease()
    const turn = { actor, agent, conversation, history: earlier, text, signal: controller.signal }
    const deps = this.deps
    async function* events(): AsyncGenerator<ChatEvent> {
      try {
        yield { type: 'conversation', conversation_id: conversation.id }
        yield* runTurn(deps, turn)
      } finally {
        release()
        await turns.finish(conversation.id, controller)
      }
    }
    return { events: events(), stop: (reason) => controller.abort(reason), signal: controller.signal }
  }

  /** Stops the conversation's running turn; true when one was running. Only a participant may, or learn of it. */
  async abort(actor: Actor, conversationId: string): Promise<boolean> {
    // The id as stored (lower case): turns, locks and events know a conversation by it.
    const { record } = await getRecord(this.deps.db, actor, WebchatConversation, conversationId.toLowerCase())
    return this.deps.turns.abort(record.id)
  }
}
