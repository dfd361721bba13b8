/**
 * A fake OpenAI-compatible provider on loopback, speaking the real wire protocol: POST /v1/chat/completions with
 * `stream: true` answered as server-sent events of chat.completion.chunk objects, ending in `data: [DONE]`; speech at
 * POST /v1/audio/transcriptions (multipart, the recording judged by its bytes) and /v1/audio/speech (real audio
 * made by espeak-ng and ffmpeg, in the format asked for).
 * Each request takes the next scripted answer; what was asked, and when a client hung up, is recorded.
 */
import { fileTypeFromBuffer } from 'file-type'
import { speech } from './speech.ts'
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

/** A request to the audio endpoints, as it arrived. */
export interface AudioReceived {
  path: '/v1/audio/transcriptions' | '/v1/audio/speech'
  authorization: string | null
  /** The form fields (transcription) or the JSON body (speech), the uploaded file as its bytes. */
  fields: Record<string, unknown>
  file?: { name: string; type: string; bytes: Uint8Array }
}

const openAIError = (status: number, message: string) => Response.json({ error: { message, type: 'invalid_request_error', param: null, code: null } }, { status })

/** `fallback` answers every request that finds no script queued (a benchmark's endless stream of turns). */
export function startFakeOpenAI(options: { fallback?: Script } = {}) {
  const scripts: Script[] = []
  const received: Received[] = []
  const audio: AudioReceived[] = []
  /**
   * What the transcription endpoint makes out of a recording, by the SHA-256 of its bytes (the test registers what
   * it said); a recording it does not know is heard as `unknownSpeech` (a browser re-encodes what it records).
   */
  const hearing = { known: new Map<string, string>(), unknownSpeech: '', failWith: null as number | null }

  async function transcription(req: Request): Promise<Response> {
    const form = await req.formData().catch(() => null)
    if (!form) return openAIError(400, 'Could not parse multipart form')
    const file = form.get('file')
    if (!(file instanceof File)) return openAIError(400, "Missing required parameter: 'file'.")
    const bytes = new Uint8Array(await file.arrayBuffer())
    const fields = Object.fromEntries([...form.entries()].filter(([key]) => key !== 'file'))
    audio.push({ path: '/v1/audio/transcriptions', authorization: req.headers.get('authorization'), fields, file: { name: file.name, type: file.type, bytes } })
    if (hearing.failWith) return openAIError(hearing.failWith, 'The server had an error while processing your request.')
    if (typeof fields.model !== 'string' || fields.model === '') return openAIError(400, "Missing required parameter: 'model'.")
    // As OpenAI does: the container is judged by the bytes, and the name must say a format it takes.
    const type = await fileTypeFromBuffer(bytes)
    if (!type || !/^(ogg|opus|oga|webm|wav|mp3|m4a|flac|mp4|mpeg|mpga)$/.test(type.ext) || !/\.(ogg|oga|opus|webm|wav|mp3|m4a|flac|mp4|mpeg|mpga)$/.test(file.name)) {
      return openAIError(400, 'Invalid file format. Supported formats: flac, m4a, mp3, mp4, mpeg, mpga, oga, ogg, wav, webm')
    }
    const digest = new Bun.CryptoHasher('sha256').update(bytes).digest('hex')
    return Response.json({ text: hearing.known.get(digest) ?? hearing.unknownSpeech, usage: { type: 'duration', seconds: 2 } })
  }

  async function speechOf(req: Request): Promise<Response> {
    const body = (await req.json().catch(() => null)) as { model?: string; input?: string; voice?: string; response_format?: string } | null
    if (!body) return openAIError(400, 'We could not parse the JSON body of your request.')
    audio.push({ path: '/v1/audio/speech', authorization: req.headers.get('authorization'), fields: body })
    if (!body.model || !body.voice || typeof body.input !== 'string' || body.input === '') return openAIError(400, "Missing required parameter: 'input', 'model' or 'voice'.")
    if (body.input.length > 4096) return openAIError(400, "Invalid 'input': string too long. Expected a string with maximum length 4096.")
    const format = body.response_format ?? 'mp3'
    const made = format === 'opus' ? speech(body.input, 'ogg') : format === 'mp3' || format === 'wav' ? speech(body.input, format) : undefined
    if (!made) return openAIError(400, `Invalid 'response_format': ${format}.`)
    const types: Record<string, string> = { opus: 'audio/ogg', mp3: 'audio/mpeg', wav: 'audio/wav' }
    return new Response(made, { headers: { 'content-type': types[format]! } })
  }
  /** What GET /v1/models lists; `null` makes it fail with 500. */
  const catalogue: { ids: string[] | null } = { ids: [] }
  const encoder = new TextEncoder()
  const chunk = (delta: object, extra: object = {}) => `data: ${JSON.stringify({ id: 'chatcmpl-1', object: 'chat.completion.chunk', choices: [{ index: 0, delta, finish_reason: null }], ...extra })}\n\n`

  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    idleTimeout: 30,
    async fetch(req) {
      const path = new URL(req.url).pathname
      if (path === '/v1/audio/transcriptions' && req.method === 'POST') return transcription(req)
      if (path === '/v1/audio/speech' && req.method === 'POST') return speechOf(req)
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
    audio,
    hearing,
    /** Registers what `bytes` say, for the transcription endpoint to hear. */
    willHear(bytes: Uint8Array, text: string) {
      hearing.known.set(new Bun.CryptoHasher('sha256').update(bytes).digest('hex'), text)
    },
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
