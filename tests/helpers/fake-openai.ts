/**
 * A fake OpenAI-compatible provider on loopback, speaking the real wire protocol: POST /v1/chat/completions with
 * `stream: true` answered as server-sent events of chat.completion.chunk objects, ending in `data: [DONE]`.
 * Each request takes the next scripted answer; what was asked, and when a client hung up, is recorded.
 */
export type Script =
  | { text: string[]; delayMs?: number; usage?: Usage }
  | { toolCall: { name: string; argumentChunks: string[] }; usage?: Usage }
  /** An HTTP error instead of an answer, to this many requests in a row (default 1): how retries are tested. */
  | { status: number; body: string; headers?: Record<string, string>; times?: number }

/** What an answer's last chunk reports it cost, as `stream_options.include_usage` asks. */
interface Usage {
  prompt_tokens: number
  completion_tokens: number
}

export interface Received {
  body: any
  authorization: string | null
  /** The W3C trace context the caller sent, if any. */
  traceparent: string | null
  /** When the request arrived (Date.now()). */
  at: number
  /** Set when the client closed the connection before the answer ended. */
  closedAt?: number
}

/** `fallback` answers every request that finds no script queued (a benchmark's endless stream of turns). */
export function startFakeOpenAI(options: { fallback?: Script } = {}) {
  const scripts: Script[] = []
  const received: Received[] = []
  /** What GET /v1/models lists; `null` makes it fail with 500. */
  const catalogue: { ids: string[] | null } = { ids: [] }
  const encoder = new TextEncoder()
  const chunk = (delta: object, extra: object = {}) => `data: ${JSON.stringify({ id: 'chatcmpl-1', object: 'chat.completion.chunk', choices: [{ index: 0, delta, finish_reason: null }], ...extra })}\n\n`

  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    idleTimeout: 30,
    async fetch(req) {
      if (new URL(req.url).pathname === '/v1/models' && req.method === 'GET') {
        if (!catalogue.ids) return new Response('{"error":"down"}', { status: 500 })
        return Response.json({ object: 'list', data: catalogue.ids.map((id) => ({ id, object: 'model', owned_by: 'fake' })) })
      }
      if (new URL(req.url).pathname !== '/v1/chat/completions' || req.method !== 'POST') return new Response('not found', { status: 404 })
      const record: Received = { body: await req.json(), authorization: req.headers.get('authorization'), traceparent: req.headers.get('traceparent'), at: Date.now() }
      received.push(record)
      req.signal.addEventListener('abort', () => (record.closedAt ??= Date.now()))
      const script = scripts.shift() ?? options.fallback ?? { text: ['(no script)'] }
      if ('status' in script) {
        if ((script.times ?? 1) > 1) scripts.unshift({ ...script, times: script.times! - 1 })
        return new Response(script.body, { status: script.status, headers: script.headers })
      }
      const body = new ReadableStream({
        async start(controller) {
          const send = (text: string) => controller.enqueue(encoder.encode(text))
          try {
            send(chunk({ role: 'assistant', content: '' }))
            if ('toolCall' in script) {
              script.toolCall.argumentChunks.forEach((args, i) =>
                send(chunk({ tool_calls: [{ index: 0, ...(i === 0 ? { id: 'call_1', type: 'function' } : {}), function: { ...(i === 0 ? { name: script.toolCall.name } : {}), arguments: args } }] })),
              )
            } else {
              for (const piece of script.text) {
                // A slow provider is what the script asks for: the pause between pieces is the behaviour under test.
                if (script.delayMs) await Bun.sleep(script.delayMs)
                if (req.signal.aborted) return
                send(chunk({ content: piece }))
              }
            }
            if (script.usage) send(`data: ${JSON.stringify({ id: 'chatcmpl-1', object: 'chat.completion.chunk', choices: [], usage: script.usage })}\n\n`)
            send('data: [DONE]\n\n')
            controller.close()
          } catch {
            // The client went away while we wrote.
          }
        },
      })
      return new Response(body, { headers: { 'content-type': 'text/event-stream' } })
    },
  })
  return {
    url: `http://127.0.0.1:${server.port}/v1`,
    scripts,
    received,
    catalogue,
    stop: () => server.stop(true),
  }
}

/** The OpenAI runner's settings for `fake`: its models (id:api_id) and their prices (api_id=in/out, US$ per million). */
export function openAIRunnerEnv(fake: { url: string }, { models = 'fast:gpt-fast-2026', prices = 'gpt-fast-2026=2/8' }: { models?: string; prices?: string } = {}): Record<string, string> {
  return {
    SWITCHBOARD_PLUGIN_RUNNER_OPENAI_BASE_URL: fake.url,
    SWITCHBOARD_PLUGIN_RUNNER_OPENAI_API_KEY: 'sk-test-key',
    SWITCHBOARD_PLUGIN_RUNNER_OPENAI_MODELS: models,
    SWITCHBOARD_PLUGIN_RUNNER_OPENAI_PRICES: prices,
  }
}
