import type { RunnerEvent } from './contract.ts'

/** A tool call as providers stream it: by index, its JSON arguments arriving in fragments. */
export interface PartialToolCall {
  id: string
  name: string
  json: string
}

/**
 * The end of a provider's answer: its tool calls in index order with their arguments parsed, then `done`; or an
 * error event, if arguments are not JSON.
 */
export function finishAnswer(calls: ReadonlyMap<number, PartialToolCall>): RunnerEvent[] {
  const events: RunnerEvent[] = []
  for (const call of [...calls.entries()].sort(([a], [b]) => a - b).map(([, c]) => c)) {
    try {
      events.push({ type: 'tool_call', call: { id: call.id, name: call.name, arguments: call.json ? JSON.parse(call.json) : {} } })
    } catch {
      return [{ type: 'error', text: `The model asked for ${call.name} with arguments that are not JSON.`, details: call.json.slice(0, 500), error_type: 'provider_error' }]
    }
  }
  return [...events, { type: 'done' }]
}
