import type { Actor } from '../auth/actor.ts'
import type { Db } from '../db/schema.ts'
import type { Logger } from '../logger.ts'
import type { RunnerModels } from '../runners/registry.ts'
import type { ChatMessage, Runner, RunnerEvent } from '../runners/contract.ts'
import type { ChatEvent } from './events.ts'
import { expiredSessionEnd, history, insertMessage } from './messages.ts'
import { ToolSetupError, type ToolAgent, type ToolExecutor } from './tools.ts'

/** How many times one turn may go back to the model with tool results. */
const MAX_TOOL_ROUNDS = 8

export interface TurnAgent extends ToolAgent {
  id: string
  name: string
  personality: string
  runner: string
  model: string
  timeout_seconds: number
  context_options: ToolAgent['context_options'] & { session_ttl_minutes: number | null }
}

export interface Turn {
  actor: Actor
  /** Read from the store for this turn: model and timeout changes apply without a reload. */
  agent: TurnAgent
  conversation: { id: string; context_prompt: string }
  /** The conversation so far, read while the agent and conversation were; empty for a new conversation. */
  history: ChatMessage[]
  text: string
  /** Aborted by POST /api/chat/abort or by the client going away. */
  signal: AbortSignal
}

export interface TurnDeps {
  db: Db
  runners: ReadonlyMap<string, Runner>
  models: RunnerModels
  tools: ToolExecutor
  log: Logger
}

class TurnFailure extends Error {
  constructor(readonly event: Extract<ChatEvent, { type: 'error' }>) {
    super(event.text)
  }
}

/**
 * One conversation turn: stores the user's message, streams the runner's answer (running the tools it asks
 * for), and stores the answer. An aborted or failed answer is stored with that status, never as if complete.
 */
export async function* runTurn(deps: TurnDeps, turn: Turn): AsyncGenerator<ChatEvent> {
  const { db } = deps
  const { actor, agent, conversation } = turn
  const base = { company_id: agent.company_id, conversation_id: conversation.id }
  const ttl = agent.context_options.session_ttl_minutes
  // A stale session is not carried on: the model starts afresh, and the answer says so. Judged before the new
  // message is stored; the rest below is independent, so it runs concurrently (time before the first token).
  const sessionEnd = ttl ? await expiredSessionEnd(db, conversation.id, ttl) : undefined
  const earlier = sessionEnd ? await history(db, conversation.id, { afterId: sessionEnd }) : turn.history
  // The user's message is stored while the model answers; everything that depends on it awaits it first.
  const storing = insertMessage(db, { ...base, sender_id: actor.userId, agent_id: null, role: 'user', text: turn.text, status: 'complete' })
  storing.catch(() => {}) // awaited below; this only stops it counting as unhandled meanwhile
  const model = await deps.models.resolve(agent.runner, agent.model)
  yield { type: 'typing' }

  const timeout = AbortSignal.timeout(agent.timeout_seconds * 1000)
  const signal = AbortSignal.any([turn.signal, timeout])
  let answer = ''
  const save = async (status: 'complete' | 'aborted' | 'error', text = answer) => {
    await storing
    return insertMessage(db, { ...base, sender_id: null, agent_id: agent.id, role: 'agent', text, status })
  }

  try {
    const runner = deps.runners.get(agent.runner)
    if (!runner) throw failure(`The agent's runner "${agent.runner}" is not installed.`, `Installed runners: ${[...deps.runners.keys()].join(', ') || 'none'}.`, 'runner_unavailable')
    if (!model) {
      const known = (await deps.models.list(runner.name)).map((m) => m.id)
      throw failure(`The runner "${runner.name}" has no model "${agent.model}".`, `Models: ${known.join(', ')}.`, 'model_not_found')
    }

    const system = [agent.personality, conversation.context_prompt].filter(Boolean).join('\n\n')
    const messages: ChatMessage[] = [
      ...(system ? [{ role: 'system' as const, content: system }] : []),
      ...earlier,
      { role: 'user', content: turn.text },
    ]
    const tools = await deps.tools.forTurn(actor, agent, signal).catch((error) => {
      throw error instanceof ToolSetupError ? failure(error.message, `agent ${agent.id}`, 'tool_setup') : error
    })
    if (sessionEnd) {
      answer = `(The previous session ended after ${ttl} minutes without activity, so this conversation starts afresh.)\n\n`
      yield { type: 'stream', text: answer }
    }

    for (let round = 0; ; round++) {
      const calls: Extract<RunnerEvent, { type: 'tool_call' }>['call'][] = []
      for await (const event of runner.stream({ messages, tools: tools.specs, model, signal })) {
        if (signal.aborted) break
        if (event.type === 'text') {
          answer += event.text
          yield { type: 'stream', text: event.text }
        } else if (event.type === 'tool_call') {
          calls.push(event.call)
        } else if (event.type === 'error') {
          throw failure(event.text, event.details ?? '', event.error_type)
        }
      }
      if (signal.aborted) break
      if (calls.length === 0) break
      if (round === MAX_TOOL_ROUNDS) throw failure('The agent asked for tools too many times in one turn.', `Limit: ${MAX_TOOL_ROUNDS} rounds.`, 'tool_loop')
      messages.push({ role: 'assistant', content: answer, tool_calls: calls })
      for (const call of calls) {
        yield { type: 'tool_call', tool: call.name }
        let result: string
        try {
          result = await tools.call(call.name, call.arguments, signal)
        } catch (error) {
          result = `Error: ${(error as Error).message}`
        }
        yield { type: 'tool_result', tool: call.name, result }
        messages.push({ role: 'tool', content: result, tool_call_id: call.id })
      }
    }

    if (timeout.aborted) {
      const id = await save('error')
      yield { type: 'error', text: `The agent did not finish within ${agent.timeout_seconds} s.`, details: `message ${id} keeps what it had written`, error_type: 'timeout' }
      return
    }
    if (turn.signal.aborted) {
      yield { type: 'aborted', message_id: answer ? await save('aborted') : null }
      return
    }
    yield { type: 'stream_end' }
    yield { type: 'message', text: answer, agent: agent.name, message_id: await save('complete') }
  } catch (error) {
    if (!(error instanceof TurnFailure)) deps.log.error('chat turn failed', { conversation_id: conversation.id, error: String((error as Error)?.stack ?? error) })
    // An unexpected failure is logged in full; the client learns that it happened, not the internals.
    const event = error instanceof TurnFailure ? error.event : failure('The turn failed on our side.', `conversation ${conversation.id}`, 'internal_error').event
    await save('error', answer || event.text)
    yield event
  }
}

function failure(text: string, details: string, error_type: string): TurnFailure {
  return new TurnFailure({ type: 'error', text, details, error_type })
}
