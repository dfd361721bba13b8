import type { Actor } from '../auth/actor.ts'
import type { AgentConfig, Db } from '../db/schema.ts'
import type { Logger } from '../logger.ts'
import type { RunnerModels } from '../runners/registry.ts'
import type { ChatMessage, ModelEntry, Runner, RunnerEvent } from '../runners/contract.ts'
import type { Attachment, ChatEvent } from './events.ts'
import { expiredSessionEnd, history, insertMessage, supersede, type MessageStatus } from './messages.ts'
import type { DocumentContext } from '../documents/context.ts'
import type { ConversationDocuments } from '../documents/conversation-documents.ts'
import { ToolSetupError, type ToolExecutor, type TurnTools } from './tools.ts'
import { unlessAborted, untilAborted } from './abortable.ts'
import { recordTurnUsage, type TurnUsage } from './turn-usage.ts'
import type { Metrics } from '../metrics/metrics.ts'
import type { Tracing } from '../tracing/tracing.ts'
import type { Budgets } from '../usage/budgets.ts'

/** How many times one turn may go back to the model with tool results. */
const MAX_TOOL_ROUNDS = 8

/** What of an agent a turn reads. */
export type TurnAgent = Pick<
  AgentConfig,
  'id' | 'company_id' | 'name' | 'personality' | 'runner' | 'model' | 'timeout_seconds' | 'mcp_permissions' | 'plugins' | 'context_options' | 'voice'
>

export interface Turn {
  actor: Actor
  /** As stored when the turn began (agents are cached until any write of one): model and timeout changes apply without a reload. */
  agent: TurnAgent
  conversation: { id: string; context_prompt: string }
  /** The conversation so far, read while the agent and conversation were; empty for a new conversation. */
  history: ChatMessage[]
  /** The conversation's documents, where they were read with the history; else the turn reads them. */
  documents?: Promise<DocumentContext>
  text: string
  /**
   * The user's message: its id (published before it is stored) and the documents it attaches. A `system` message is
   * the platform's (a plan's continuation): the model reads it as the user's turn, people see it as the platform's.
   */
  message: { id: string; attachments: Attachment[]; role?: 'user' | 'system'; stored?: true }
  /** Answers the question again: the new answer is a version of this group's, which it replaces once stored. */
  regenerates?: { group: string }
  /** Aborted by POST /api/chat/abort or by the client going away. */
  signal: AbortSignal
  /** Said to the people before the answer, found while the turn was admitted (a budget nearly spent). */
  notices?: string[]
}

export interface TurnDeps {
  db: Db
  runners: ReadonlyMap<string, Runner>
  models: RunnerModels
  tools: ToolExecutor
  log: Logger
  metrics: Metrics
  tracing: Tracing
  /** Monthly budgets: judged before a turn is admitted, told what each turn cost. */
  budgets: Budgets
  /** The conversation's documents, which the model is given on every turn. */
  documents: ConversationDocuments
}

class TurnFailure extends Error {
  constructor(readonly event: Extract<ChatEvent, { type: 'error' }>) {
    super(event.text)
  }
}

function failure(text: string, details: string, error_type: string): TurnFailure {
  return new TurnFailure({ type: 'error', text, details, error_type })
}

/**
 * One conversation turn: stores the user's message, streams the runner's answer (running the tools it asks
 * for), and stores the answer. An aborted or failed answer is stored with that status, never as if complete.
 */
export async function* runTurn(deps: TurnDeps, turn: Turn): AsyncGenerator<ChatEvent> {
  const timeout = AbortSignal.timeout(turn.agent.timeout_seconds * 1000)
  const answer = new Answer(deps, turn)
  yield { type: 'typing' }
  for (const text of turn.notices ?? []) yield { type: 'notice', text, kind: 'budget' }
  try {
    const prepared = await prepareTurn(deps, turn, AbortSignal.any([turn.signal, timeout]), answer)
    for (const text of prepared.notices) yield { type: 'notice', text }
    for await (const event of toolRounds(prepared, answer)) yield event
    yield* settleTurn(turn, answer, timeout)
  } catch (error) {
    if (!(error instanceof TurnFailure)) deps.log.error('chat turn failed', { conversation_id: turn.conversation.id, error: String((error as Error)?.stack ?? error) })
    // An unexpected failure is logged in full; the client learns that it happened, not the internals.
    const event = error instanceof TurnFailure ? error.event : failure('The turn failed on our side.', `conversation ${turn.conversation.id}`, 'internal_error').event
    await answer.settle('error', answer.text || event.text)
    yield event
  } finally {
    // A reader that went away mid-turn ends this generator early: the cost record is closed all the same.
    await answer.settle('aborted')
  }
}

/** The agent's answer as it grows, and how it is stored once the turn settles. */
class Answer {
  text = ''
  /** What the provider reported the turn's model calls cost, summed over its tool rounds. */
  usage = { input_tokens: 0, output_tokens: 0, cost_usd: 0 }
  /** How many tools the model called. */
  toolCalls = 0
  /** The user's message, stored while the model answers; the answer is stored after it. */
  stored: Promise<unknown> = Promise.resolve()
  #settled: Promise<string | null> | undefined
  readonly #startedAt = performance.now()
  #firstWordAt: number | undefined

  /** The answer grows by a piece the runner streamed. */
  add(text: string): void {
    this.#firstWordAt ??= performance.now()
    this.text += text
  }

  constructor(
    private readonly deps: Pick<TurnDeps, 'db' | 'log' | 'metrics' | 'budgets'>,
    private readonly turn: Turn,
  ) {}

  /**
   * Ends the turn's record, once: the answer stored with how the turn ended (a stop before any word stores nothing)
   * and, beside it in the same round trip, the turn's cost record closed. Both are done before the last event goes
   * out, so the conversation is free for the next message as soon as the person sees the answer end. Answers the
   * stored message's id.
   */
  settle(outcome: 'complete' | 'error', text?: string): Promise<string>
  settle(outcome: 'aborted'): Promise<string | null>
  settle(outcome: TurnUsage['outcome'], text = this.text): Promise<string | null> {
    // Settled already (the turn ended, then its reader went away): the same record, not a second one.
    this.#settled ??= Promise.all([outcome === 'aborted' && !text ? null : this.#save(outcome, text), this.#closeCost(outcome)]).then(([id]) => id)
    return this.#settled
  }

  async #save(status: MessageStatus, text: string): Promise<string> {
    await this.stored
    const { agent, conversation, regenerates } = this.turn
    const base = { company_id: agent.company_id, conversation_id: conversation.id, sender_id: null, agent_id: agent.id, role: 'agent', text, status } as const
    if (!regenerates) return insertMessage(this.deps.db, base)
    const id = await insertMessage(this.deps.db, { ...base, version_of: regenerates.group })
    await supersede(this.deps.db, conversation.id, regenerates.group, id)
    return id
  }

  async #closeCost(outcome: TurnUsage['outcome']): Promise<void> {
    this.#count(outcome)
    await recordTurnUsage(this.deps.db, this.turn, { ...this.usage, tool_calls: this.toolCalls, outcome }).then(
      () => this.deps.budgets.charged(this.turn.agent.company_id),
      (error) => this.deps.log.error('a chat turn’s usage was not recorded', { conversation_id: this.turn.conversation.id, error: String(error) }),
    )
  }

  /** The turn in this process's metrics: its outcome, how long it took, its first word, its tokens and cost. */
  #count(outcome: TurnUsage['outcome']): void {
    const { agent } = this.turn
    this.deps.metrics.turn({
      agent: agent.id,
      runner: agent.runner,
      model: agent.model,
      outcome,
      seconds: (performance.now() - this.#startedAt) / 1000,
      ...(this.#firstWordAt === undefined ? {} : { firstWordSeconds: (this.#firstWordAt - this.#startedAt) / 1000 }),
      inputTokens: this.usage.input_tokens,
      outputTokens: this.usage.output_tokens,
      costUsd: this.usage.cost_usd,
    })
  }
}

interface PreparedTurn {
  tracing: Tracing
  runner: Runner
  model: ModelEntry
  messages: ChatMessage[]
  tools: TurnTools
  signal: AbortSignal
  /** Said to the people in the conversation before the answer (a session that expired, documents cut); never the model's. */
  notices: string[]
}

/**
 * Step one: judges the session, stores the user's message, finds the runner, model and tools, and builds what
 * the model reads. Independent round trips run concurrently: each is time before the first token.
 */
async function prepareTurn(deps: TurnDeps, turn: Turn, signal: AbortSignal, answer: Answer): Promise<PreparedTurn> {
  const { db } = deps
  const { actor, agent, conversation } = turn
  const ttl = agent.context_options.session_ttl_minutes
  // Judged before the new message is stored, or the new message would always be fresh.
  const sessionEnd = ttl ? await expiredSessionEnd(db, conversation.id, ttl) : undefined
  const earlier = sessionEnd ? await history(db, conversation.id, { afterId: sessionEnd }) : turn.history
  const base = { company_id: agent.company_id, conversation_id: conversation.id }
  const { id, attachments, role = 'user' } = turn.message
  const author = role === 'user' ? { sender_id: actor.userId, agent_id: null } : { sender_id: null, agent_id: agent.id }
  // A regeneration answers a question already stored.
  answer.stored = turn.message.stored ? Promise.resolve() : insertMessage(db, { ...base, ...author, role, text: turn.text, status: 'complete', attachments }, id)
  answer.stored.catch(() => {}) // awaited when the answer is stored; this only stops it counting as unhandled meanwhile

  const runner = deps.runners.get(agent.runner)
  if (!runner) throw failure(`The agent's runner "${agent.runner}" is not installed.`, `Installed runners: ${[...deps.runners.keys()].join(', ') || 'none'}.`, 'runner_unavailable')
  const [model, tools, documents] = await Promise.all([
    deps.models.resolve(agent.runner, agent.model),
    deps.tools.forTurn(actor, agent, signal, conversation.id).catch((error) => {
      throw error instanceof ToolSetupError ? failure(error.message, `agent ${agent.id}`, 'tool_setup') : error
    }),
    // Every document of the conversation, on every turn: what was attached earlier stays in view.
    turn.documents ?? deps.documents.context(conversation.id),
  ])
  if (!model) {
    const known = (await deps.models.list(runner.name)).map((m) => m.id)
    throw failure(`The runner "${runner.name}" has no model "${agent.model}".`, `Models: ${known.join(', ')}.`, 'model_not_found')
  }

  const attached = documents.text ? `Documents attached to this conversation:\n\n${documents.text}` : ''
  const system = [agent.personality, conversation.context_prompt, attached].filter(Boolean).join('\n\n')
  const messages: ChatMessage[] = [...(system ? [{ role: 'system' as const, content: system }] : []), ...earlier, { role: 'user', content: turn.text }]
  const notices = [sessionEnd ? sessionNotice(db, turn, answer, ttl!) : undefined, documents.notice, ...(tools.notices ?? [])].filter((n) => n !== undefined)
  return { tracing: deps.tracing, runner, model, messages, tools, signal, notices }
}

/**
 * The notice that a stale session ended. Stored after the user's message as a system message: the people in the
 * conversation read it, the model does not (history skips system messages).
 */
function sessionNotice(db: Db, turn: Turn, answer: Answer, ttl: number): string {
  const text = `The previous session ended after ${ttl} minutes without activity, so this conversation starts afresh.`
  const { agent, conversation } = turn
  answer.stored = answer.stored.then(() =>
    insertMessage(db, { company_id: agent.company_id, conversation_id: conversation.id, sender_id: null, agent_id: agent.id, role: 'system', text, status: 'complete' }),
  )
  answer.stored.catch(() => {})
  return text
}

/** Step two: streams the model's answer, running the tools it asks for, until it answers without asking. */
async function* toolRounds(prepared: PreparedTurn, answer: Answer): AsyncGenerator<ChatEvent> {
  const { tracing, runner, model, messages, tools, signal } = prepared
  for (let round = 0; ; round++) {
    const calls: Extract<RunnerEvent, { type: 'tool_call' }>['call'][] = []
    const answering = tracing.spanned('runner call', { 'switchboard.runner': runner.name, 'gen_ai.request.model': model.api_id, 'switchboard.round': round }, () =>
      runner.stream({ messages, tools: tools.specs, model, signal }),
    )
    for await (const event of untilAborted(answering, signal)) {
      if (signal.aborted) return
      if (event.type === 'text') {
        answer.add(event.text)
        yield { type: 'stream', text: event.text }
      } else if (event.type === 'tool_call') {
        calls.push(event.call)
      } else if (event.type === 'usage') {
        answer.usage.input_tokens += event.input_tokens
        answer.usage.output_tokens += event.output_tokens
        answer.usage.cost_usd += event.cost_usd
      } else if (event.type === 'error') {
        throw failure(event.text, event.details ?? '', event.error_type)
      }
    }
    if (signal.aborted || calls.length === 0) return
    if (round === MAX_TOOL_ROUNDS) throw failure('The agent asked for tools too many times in one turn.', `Limit: ${MAX_TOOL_ROUNDS} rounds.`, 'tool_loop')
    messages.push({ role: 'assistant', content: answer.text, tool_calls: calls })
    for (const call of calls) {
      yield { type: 'tool_call', tool: call.name }
      answer.toolCalls++
      let result: string
      try {
        result = await unlessAborted(tracing.span('tool call', { 'gen_ai.tool.name': call.name }, () => tools.call(call.name, call.arguments, signal)), signal)
      } catch (error) {
        result = `Error: ${(error as Error).message}`
      }
      if (signal.aborted) return
      yield { type: 'tool_result', tool: call.name, result }
      messages.push({ role: 'tool', content: result, tool_call_id: call.id })
    }
  }
}

/** Step three: stores the answer with how the turn ended (complete, aborted, timed out) and says so. */
async function* settleTurn(turn: Turn, answer: Answer, timeout: AbortSignal): AsyncGenerator<ChatEvent> {
  if (timeout.aborted) {
    const id = await answer.settle('error')
    yield { type: 'error', text: `The agent did not finish within ${turn.agent.timeout_seconds} s.`, details: `message ${id} keeps what it had written`, error_type: 'timeout' }
    return
  }
  if (turn.signal.aborted) {
    yield { type: 'aborted', message_id: await answer.settle('aborted') }
    return
  }
  yield { type: 'stream_end' }
  const versionOf = turn.regenerates ? { version_of: turn.regenerates.group } : {}
  yield { type: 'message', text: answer.text, agent: turn.agent.name, message_id: await answer.settle('complete'), ...versionOf }
}
