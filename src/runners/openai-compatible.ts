import type { DeviceSignIn } from './device-sign-in.ts'
/**
 * A runner for any endpoint that speaks OpenAI's chat completions (OpenAI itself, Moonshot's Kimi, vLLM, Ollama,
 * llama.cpp, OpenRouter), on OpenAI's own SDK: its stream parsing, typed errors, and retries that honour the
 * provider's `retry-after`. It is offered through the plugin SDK so every plugin for such a provider shares it.
 */
import type OpenAI from 'openai'
import type { ChatCompletionMessageParam, ChatCompletionTool } from 'openai/resources/chat/completions'
import type { ChatMessage, ModelEntry, Runner, RunnerEvent, RunnerRequest, SpeakRequest, TranscribeRequest } from './contract.ts'
import { audioDuration } from '../voice/audio.ts'
import { patientFetch, providerFailure } from './provider-failures.ts'
import { audioCost, clientPerKey, usage, type ProviderSettings } from './provider-settings.ts'
import { finishAnswer, type PartialToolCall } from './tool-calls.ts'

/** The contract's messages in the chat completions shape. */
function wireMessages(messages: ChatMessage[]): ChatCompletionMessageParam[] {
  return messages.map((m): ChatCompletionMessageParam => {
    if (m.role === 'tool') return { role: 'tool', tool_call_id: m.tool_call_id ?? '', content: m.content }
    if (m.role === 'assistant' && m.tool_calls?.length) {
      return {
        role: 'assistant',
        content: m.content || null,
        tool_calls: m.tool_calls.map((call) => ({ id: call.id, type: 'function', function: { name: call.name, arguments: JSON.stringify(call.arguments) } })),
      }
    }
    return { role: m.role, content: m.content }
  })
}

function wireTools(request: RunnerRequest): ChatCompletionTool[] {
  return request.tools.map((t) => ({ type: 'function', function: { name: t.name, description: t.description, parameters: t.parameters } }))
}

/** The SDK, loaded with the first request to the provider rather than at start-up. */
let sdk: Promise<typeof import('openai')> | undefined
const loadSdk = () => (sdk ??= import('openai'))

/** OpenAI's client for a key; without one no Authorization header goes out at all, as local servers expect. */
async function clientFor(settings: ProviderSettings, key: string | undefined): Promise<OpenAI> {
  const { default: OpenAI } = await loadSdk()
  return new OpenAI({
    baseURL: settings.baseUrl,
    // The SDK will not start without a key; a keyless server gets none, as the header below is taken away.
    apiKey: key ?? 'none',
    ...(key ? {} : { defaultHeaders: { Authorization: null } }),
    // Named so the SDK never reads them from the platform's environment: a runner's settings say everything.
    adminAPIKey: null,
    organization: null,
    project: null,
    webhookSecret: null,
    maxRetries: settings.maxRetries,
    fetch: patientFetch(),
    logLevel: 'off',
  })
}

async function* stream(client: OpenAI, settings: ProviderSettings, request: RunnerRequest): AsyncGenerator<RunnerEvent> {
  let started = false
  // Tool calls arrive in pieces, by index: the name once, the arguments as fragments of JSON.
  const calls = new Map<number, PartialToolCall>()
  try {
    const chunks = await client.chat.completions.create(
      {
        model: request.model.api_id,
        stream: true,
        stream_options: { include_usage: true },
        messages: wireMessages(request.messages),
        ...(request.tools.length ? { tools: wireTools(request) } : {}),
      },
      { signal: request.signal },
    )
    started = true
    for await (const chunk of chunks) {
      const delta = chunk.choices[0]?.delta
      if (delta?.content) yield { type: 'text', text: delta.content }
      for (const part of delta?.tool_calls ?? []) {
        const call = calls.get(part.index) ?? { id: '', name: '', json: '' }
        call.id ||= part.id ?? ''
        call.name ||= part.function?.name ?? ''
        call.json += part.function?.arguments ?? ''
        calls.set(part.index, call)
      }
      if (chunk.usage) yield usage(settings.prices, request.model.api_id, chunk.usage.prompt_tokens, chunk.usage.completion_tokens)
    }
  } catch (error) {
    yield* providerFailure((await loadSdk()).default, error, request.signal, started)
    return
  }
  if (request.signal.aborted) return
  yield* finishAnswer(calls)
}

/** GET {base}/models: the provider's catalogue, ids as they are used on the wire. */
async function catalogue(client: OpenAI, signal: AbortSignal): Promise<ModelEntry[]> {
  const models: ModelEntry[] = []
  for await (const model of client.models.list({ signal })) models.push({ id: model.id, name: model.id, api_id: model.id })
  return models
}

/** POST {base}/audio/transcriptions: the recording as a multipart upload, its text back as JSON. */
async function transcribe(client: OpenAI, settings: ProviderSettings, request: TranscribeRequest) {
  const file = await (await loadSdk()).toFile(request.audio, request.filename, { type: request.mediaType })
  const language = request.language?.split('-')[0]?.toLowerCase()
  const result = await client.audio.transcriptions.create(
    { file, model: request.model, response_format: 'json', ...(language ? { language } : {}) },
    { signal: request.signal },
  )
  return { text: result.text.trim(), cost_usd: audioCost(settings.audioPrices, request.model, { ms: request.durationMs }) }
}

/** POST {base}/audio/speech: the text in, the audio's bytes back in the format asked for. */
async function speak(client: OpenAI, settings: ProviderSettings, request: SpeakRequest) {
  const response = await client.audio.speech.create({ model: request.model, voice: request.voice, input: request.text, response_format: request.format }, { signal: request.signal })
  const audio = new Uint8Array(await response.arrayBuffer())
  // Some speech models are paid by the minute of what they said: measured from the bytes, as nothing else says.
  const priced = settings.audioPrices.get(request.model)?.per === 'min' ? ((await audioDuration(audio, `audio/${request.format === 'opus' ? 'ogg' : request.format}`).catch(() => 0)) ?? 0) : 0
  return { audio, cost_usd: audioCost(settings.audioPrices, request.model, { ms: priced, chars: request.text.length }) }
}

/** A runner for an OpenAI-compatible endpoint, offered to agents under `name`. */
export function openAICompatibleRunner(name: string, settings: ProviderSettings, device?: DeviceSignIn): Runner {
  const client = clientPerKey((key) => clientFor(settings, key))
  // An API key set wins; else the device sign-in's access token, refreshed as it ends.
  const key = async () => (await settings.apiKey()) ?? (await device?.token())
  return {
    name,
    models: () => settings.models,
    catalogue: async (signal) => catalogue(await client(await key()), signal),
    auth: device ? { method: 'device', device, configured: async () => Boolean(await key()) } : { method: 'api_key', configured: async () => Boolean(await settings.apiKey()) },
    stream: async function* (request) {
      yield* stream(await client(await key()), settings, request)
    },
    ...(settings.speech
      ? {
          transcribe: async (request: TranscribeRequest) => transcribe(await client(await key()), settings, request),
          speak: async (request: SpeakRequest) => speak(await client(await key()), settings, request),
        }
      : {}),
  }
}
