import type { Principal, TestPlatform } from './platform.ts'
import { until } from './until.ts'

export type ChatEvent = Record<string, any> & { type: string }

/** Starts POST /api/chat; `events` yields the NDJSON lines as they arrive. */
export async function startChatTurn(p: TestPlatform, json: Record<string, unknown>, as: Principal = p.root) {
  const response = await p.api.request('/api/chat', {
    method: 'POST',
    headers: { authorization: `Bearer ${as.token}`, 'content-type': 'application/json' },
    body: JSON.stringify(json),
  })
  async function* events(): AsyncGenerator<ChatEvent> {
    let buffer = ''
    for await (const chunk of response.body!.pipeThrough(new TextDecoderStream())) {
      buffer += chunk
      let newline: number
      while ((newline = buffer.indexOf('\n')) !== -1) {
        yield JSON.parse(buffer.slice(0, newline))
        buffer = buffer.slice(newline + 1)
      }
    }
  }
  return { response, events }
}

/** A whole turn's events; `onEvent` sees each as it arrives, with the turn's conversation id. */
export async function chatTurn(
  p: TestPlatform,
  json: Record<string, unknown>,
  options: { as?: Principal; onEvent?: (event: ChatEvent, conversation: string) => Promise<void> } = {},
): Promise<ChatEvent[]> {
  const started = await startChatTurn(p, json, options.as)
  if (started.response.status !== 200) throw new Error(`POST /api/chat answered ${started.response.status}: ${await started.response.text()}`)
  const events: ChatEvent[] = []
  for await (const event of started.events()) {
    events.push(event)
    await options.onEvent?.(event, events[0]!.conversation_id)
  }
  return events
}

/**
 * A turn that is stopped once the provider has had one more request than `before` (one the provider refused, so
 * the runner is waiting to retry): the turn's end and what the provider received after it say whether the wait
 * was cut short.
 */
export async function stopWhileRetrying(p: TestPlatform, turn: (onEvent: (event: ChatEvent, conversation: string) => Promise<void>) => Promise<ChatEvent[]>, requests: () => number) {
  const before = requests()
  const started = Date.now()
  const events = await turn(async (event, conversation) => {
    if (event.type !== 'conversation') return
    await until(() => requests() > before, { what: 'the provider to refuse the first request' })
    await p.call('POST', '/api/chat/abort', { json: { conversation_id: conversation } })
  })
  return { events, elapsedMs: Date.now() - started, sent: requests() - before }
}
