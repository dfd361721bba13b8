import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'
import type { TaskRow } from './store.ts'

/** The most of a tool's answer a task keeps: enough for batch output, not a store-filling stream. */
export const RESULT_MAX_CHARS = 100_000
/**
 * The most of it the conversation is told: the message stays in the model's history for later turns, where a long
 * one would crowd out the conversation itself. The whole result stays in the task.
 */
export const MESSAGE_RESULT_CHARS = 4_000

export const INTERRUPTED =
  'The server running it stopped before the tool finished (a restart, a deployment or a crash), so its result is lost. Start it again if it is still needed.'

/** What a tool answered, as a task stores it: text, an error flag, and whether it was cut. */
export interface ToolOutcome {
  text: string
  isError: boolean
}

/** An MCP tool result as text, the way a model reads one. */
export function outcomeOfResult(result: CallToolResult): ToolOutcome {
  const text = result.content
    .map((part) => (part.type === 'text' ? part.text : part.type === 'resource_link' ? `[${part.name}](${part.uri})` : `[${part.type} content]`))
    .join('\n')
  return { text, isError: result.isError === true }
}

/** A chat turn's tool answer: the turn marks an error result by prefixing `Error: `. */
export function outcomeOfText(text: string): ToolOutcome {
  return text.startsWith('Error: ') ? { text: text.slice('Error: '.length), isError: true } : { text, isError: false }
}

/** Cuts text to `max` characters, saying whether it did. */
export function capped(text: string, max: number): { text: string; truncated: boolean } {
  return text.length > max ? { text: text.slice(0, max), truncated: true } : { text, truncated: false }
}

/**
 * What the conversation is told when a task ends: in the agent's name, so the model reads it as its own note in
 * later turns and the people see it as the answer arriving.
 */
export function outcomeNotice(task: Pick<TaskRow, 'id' | 'tool' | 'status' | 'result' | 'result_truncated' | 'error'>): string {
  const head = `Background task ${task.id} (${task.tool})`
  switch (task.status) {
    case 'completed': {
      const shown = capped(task.result ?? '', MESSAGE_RESULT_CHARS)
      const cut = shown.truncated || task.result_truncated
      const note = cut ? `\n\n[The result is cut here${task.result_truncated ? ' (and was cut when stored, too)' : ''}: async_task_status shows what the task kept.]` : ''
      return `${head} completed:\n\n${shown.text}${note}`
    }
    case 'failed':
      return `${head} failed: ${task.error ?? 'the tool gave no reason.'}`
    case 'cancelled':
      return `${head} was cancelled.`
    case 'interrupted':
      return `${head} was interrupted. ${task.error ?? INTERRUPTED}`
    default:
      return `${head} is ${task.status}.`
  }
}
