/**
 * A fake of Anthropic's Messages API on loopback, speaking its streaming protocol: POST /v1/messages with
 * `stream: true` answered by named server-sent events (message_start, content_block_start/delta/stop,
 * message_delta, message_stop). Each request takes the next scripted answer.
 */
export type AnthropicScript =
  | { text: string[]; delayMs?: number; usage?: { input_tokens: number; output_tokens: number } }
  | { toolUse: { name: string; jsonChunks: string[] } }
  /** An HTTP error instead of an answer, to this many requests in a row (default 1): how retries are tested. */
  | { status: number; body: string; headers?: Record<string, string>; times?: number }
  | { streamError: { type: string; message: string } }

export interface AnthropicReceived {
  body: any
  headers: Headers
  /** When the request arrived (Date.now()). */
  at: number
  closedAt?: number
}

export function startFakeAnthropic() {
  const scripts: AnthropicScript[] = []
  const received: AnthropicReceived[] = []
  const encoder = new TextEncoder()
  const event = (name: string, data: object) => `event: ${name}\ndata: ${JSON.stringify({ type: name, ...data })}\n\n`

  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    idleTimeout: 30,
    async fetch(req) {
      if (new URL(req.url).pathname !== '/v1/messages' || req.method !== 'POST') return new Response('not found', { status: 404 })
      const record: AnthropicReceived = { body: await req.json(), headers: req.headers, at: Date.now() }
      received.push(record)
      req.signal.addEventListener('abort', () => (record.closedAt ??= Date.now()))
      const script = scripts.shift() ?? { text: ['(no script)'] }
      if ('status' in script) {
        if ((script.times ?? 1) > 1) scripts.unshift({ ...script, times: script.times! - 1 })
        return new Response(script.body, { status: script.status, headers: script.headers })
      }
      const body = new ReadableStream({
        async start(controller) {
          const send = (text: string) => controller.enqueue(encoder.encode(text))
          try {
            send(event('message_start', { message: { id: 'msg_1', role: 'assistant', content: [], usage: { input_tokens: 'text' in script ? (script.usage?.input_tokens ?? 0) : 0, output_tokens: 0 } } }))
            send(event('ping', {}))
            if ('streamError' in script) {
              send(event('error', { error: script.streamError }))
            } else if ('toolUse' in script) {
              send(event('content_block_start', { index: 0, content_block: { type: 'tool_use', id: 'toolu_1', name: script.toolUse.name, input: {} } }))
              for (const json of script.toolUse.jsonChunks) send(event('content_block_delta', { index: 0, delta: { type: 'input_json_delta', partial_json: json } }))
              send(event('content_block_stop', { index: 0 }))
              send(event('message_delta', { delta: { stop_reason: 'tool_use' }, usage: { output_tokens: 5 } }))
            } else {
              send(event('content_block_start', { index: 0, content_block: { type: 'text', text: '' } }))
              for (const piece of script.text) {
                // A slow provider is what the script asks for: the pause between pieces is the behaviour under test.
                if (script.delayMs) await Bun.sleep(script.delayMs)
                if (req.signal.aborted) return
                send(event('content_block_delta', { index: 0, delta: { type: 'text_delta', text: piece } }))
              }
              send(event('content_block_stop', { index: 0 }))
              send(event('message_delta', { delta: { stop_reason: 'end_turn' }, usage: { output_tokens: script.usage?.output_tokens ?? 1 } }))
            }
            send(event('message_stop', {}))
            controller.close()
          } catch {
            // The client went away while we wrote.
          }
        },
      })
      return new Response(body, { headers: { 'content-type': 'text/event-stream' } })
    },
  })
  return { url: `http://127.0.0.1:${server.port}`, scripts, received, stop: () => server.stop(true) }
}
