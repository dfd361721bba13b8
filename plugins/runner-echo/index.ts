import { definePlugin, type ChatMessage, type Runner, type RunnerEvent, type RunnerRequest } from '../../src/plugin-host/sdk.ts'

/**
 * Answers "Echo: <what the user said>", one word at a time. Two commands make it useful for demos and tests:
 *   /tool <name> [json arguments]   asks for that tool, then reports what it answered
 *   /slow <ms> <text>               waits that long before each word (to watch streaming, or to abort)
 *   /quote <phrase>                 answers the first line of its context (system messages: the personality,
 *                                   the conversation's documents) that holds the phrase: proof of what it was given
 */
const TOOL = /^\/tool\s+(\S+)\s*(\{.*\})?\s*$/s
const SLOW = /^\/slow\s+(\d{1,5})\s+(.*)$/s
const QUOTE = /^\/quote\s+(.+)$/s

/** The first line of the system messages holding `phrase` (case ignored). */
function quote(messages: ChatMessage[], phrase: string): string {
  const wanted = phrase.trim().toLowerCase()
  for (const m of messages) {
    if (m.role !== 'system') continue
    const line = m.content.split('\n').find((l) => l.toLowerCase().includes(wanted))
    if (line !== undefined) return `Quoted: ${line.trim()}`
  }
  return `Not in my context: ${phrase.trim()}`
}

function words(messages: ChatMessage[]): number {
  return messages.reduce((sum, m) => sum + m.content.split(/\s+/).filter(Boolean).length, 0)
}

async function* echo(request: RunnerRequest): AsyncGenerator<RunnerEvent> {
  const last = request.messages.at(-1)
  let reply: string
  let pause = 0
  if (last?.role === 'tool') {
    reply = `The tool answered: ${last.content}`
  } else {
    const text = last?.content ?? ''
    // In a shared conversation the agent is addressed as @name first: its commands follow the mention.
    const command = text.replace(/^@[\w.-]+\s+/, '')
    const tool = TOOL.exec(command)
    if (tool) {
      let args: Record<string, unknown> = {}
      try {
        args = tool[2] ? JSON.parse(tool[2]) : {}
      } catch {
        yield { type: 'error', text: 'The tool arguments are not JSON.', details: tool[2], error_type: 'bad_request' }
        return
      }
      yield { type: 'tool_call', call: { id: `call-${crypto.randomUUID()}`, name: tool[1]!, arguments: args } }
      yield { type: 'done' }
      return
    }
    const slow = SLOW.exec(command)
    const quoted = QUOTE.exec(command)
    pause = slow ? Number(slow[1]) : 0
    reply = quoted ? quote(request.messages, quoted[1]!) : `Echo: ${slow ? slow[2] : text}`
  }
  for (const [i, word] of reply.split(' ').entries()) {
    if (pause > 0) await pauseFor(pause, request.signal)
    if (request.signal.aborted) return
    yield { type: 'text', text: i === 0 ? word : ` ${word}` }
  }
  yield { type: 'usage', input_tokens: words(request.messages), output_tokens: reply.split(' ').length, cost_usd: 0 }
  yield { type: 'done' }
}

const runner: Runner = {
  name: 'echo',
  models: () => [{ id: 'echo-1', name: 'Echo', api_id: 'echo-1' }],
  stream: echo,
}

export default definePlugin({
  setup(context) {
    context.registerRunner(runner)
  },
})

/** Waits `ms`, or less when the turn is stopped meanwhile. */
function pauseFor(ms: number, signal: AbortSignal): Promise<void> {
  if (signal.aborted) return Promise.resolve()
  return new Promise((resolve) => {
    const done = () => {
      clearTimeout(timer)
      signal.removeEventListener('abort', done)
      resolve()
    }
    const timer = setTimeout(done, ms)
    signal.addEventListener('abort', done, { once: true })
  })
}
