import type Anthropic from '@anthropic-ai/sdk'
import type { ContentBlockParam, MessageParam, Tool } from '@anthropic-ai/sdk/resources/messages'
import {
  clientPerKey,
  definePlugin,
  finishAnswer,
  patientFetch,
  providerFailure,
  readProviderSettings,
  usage,
  type ChatMessage,
  type ModelEntry,
  type PartialToolCall,
  type ProviderSettings,
  type RunnerEvent,
  type RunnerRequest,
} from '../../src/plugin-host/sdk.ts'

interface Settings extends ProviderSettings {
  maxTokens: number
}

function readSettings(raw: Readonly<Record<string, string>>, vaultKey: () => Promise<string | undefined>): Settings {
  const maxTokens = Number(raw.max_tokens ?? 4096)
  if (!Number.isInteger(maxTokens) || maxTokens < 1) throw new Error(`max_tokens: "${raw.max_tokens}" is not a positive whole number`)
  return { ...readProviderSettings(raw, { baseUrl: 'https://api.anthropic.com', models: 'claude-sonnet:claude-sonnet-4-5' }, vaultKey), maxTokens }
}

/** The contract's messages as the Messages API wants them: system apart, tool results as user turns, roles alternating. */
function wire(messages: ChatMessage[]): { system: string; messages: MessageParam[] } {
  const system = messages.filter((m) => m.role === 'system').map((m) => m.content).join('\n\n')
  const turns: Array<{ role: 'user' | 'assistant'; content: ContentBlockParam[] }> = []
  for (const m of messages) {
    if (m.role === 'system') continue
    const role = m.role === 'assistant' ? 'assistant' : 'user'
    const blocks: ContentBlockParam[] =
      m.role === 'tool'
        ? [{ type: 'tool_result', tool_use_id: m.tool_call_id ?? '', content: m.content }]
        : [
            ...(m.content ? [{ type: 'text' as const, text: m.content }] : []),
            ...(m.tool_calls ?? []).map((call) => ({ type: 'tool_use' as const, id: call.id, name: call.name, input: call.arguments })),
          ]
    const previous = turns.at(-1)
    if (previous?.role === role) previous.content.push(...blocks)
    else turns.push({ role, content: blocks })
  }
  return { system, messages: turns }
}

/** The SDK, loaded with the first request to Anthropic rather than at start-up. */
let sdk: Promise<typeof Anthropic> | undefined
const loadSdk = () => (sdk ??= import('@anthropic-ai/sdk').then((module) => module.default))

/** Anthropic's client for a key. Every credential is named, so the SDK never looks for one in the platform's environment or files. */
async function clientFor(settings: Settings, key: string | undefined): Promise<Anthropic> {
  const Anthropic = await loadSdk()
  return new Anthropic({
    baseURL: settings.baseUrl,
    // Without a key the SDK would search the machine for credentials; a placeholder stops it, and no header carries it.
    apiKey: key ?? 'none',
    authToken: null,
    ...(key ? {} : { defaultHeaders: { Authorization: null, 'X-Api-Key': null } }),
    maxRetries: settings.maxRetries,
    fetch: patientFetch(),
    logLevel: 'off',
  })
}

async function* stream(client: Anthropic, settings: Settings, request: RunnerRequest): AsyncGenerator<RunnerEvent> {
  const { system, messages } = wire(request.messages)
  const tools: Tool[] = request.tools.map((t) => ({ name: t.name, description: t.description, input_schema: { type: 'object', ...t.parameters } }))
  const calls = new Map<number, PartialToolCall>()
  let inputTokens = 0
  let started = false
  try {
    const events = await client.messages.create(
      { model: request.model.api_id, max_tokens: settings.maxTokens, stream: true, ...(system ? { system } : {}), messages, ...(tools.length ? { tools } : {}) },
      { signal: request.signal },
    )
    started = true
    for await (const event of events) {
      if (event.type === 'message_start') inputTokens = event.message.usage.input_tokens
      else if (event.type === 'content_block_start' && event.content_block.type === 'tool_use') {
        calls.set(event.index, { id: event.content_block.id, name: event.content_block.name, json: '' })
      } else if (event.type === 'content_block_delta') {
        if (event.delta.type === 'text_delta' && event.delta.text) yield { type: 'text', text: event.delta.text }
        if (event.delta.type === 'input_json_delta') {
          const call = calls.get(event.index)
          if (call) call.json += event.delta.partial_json
        }
      } else if (event.type === 'message_delta') {
        yield usage(settings.prices, request.model.api_id, inputTokens, event.usage.output_tokens)
      }
    }
  } catch (error) {
    yield* providerFailure(await loadSdk(), error, request.signal, started)
    return
  }
  if (request.signal.aborted) return
  yield* finishAnswer(calls)
}

/** GET /v1/models, every page: the provider's catalogue with its display names. */
async function catalogue(client: Anthropic, signal: AbortSignal): Promise<ModelEntry[]> {
  const models: ModelEntry[] = []
  for await (const model of client.models.list({}, { signal })) models.push({ id: model.id, name: model.display_name || model.id, api_id: model.id })
  return models
}

export default definePlugin({
  setup(context) {
    const settings = readSettings(context.settings, () => context.secret('api_key'))
    const client = clientPerKey((key) => clientFor(settings, key))
    context.registerRunner({
      name: 'anthropic',
      models: () => settings.models,
      catalogue: async (signal) => catalogue(await client(await settings.apiKey()), signal),
      auth: { method: 'api_key', configured: async () => Boolean(await settings.apiKey()) },
      stream: async function* (request) {
        yield* stream(await client(await settings.apiKey()), settings, request)
      },
    })
  },
})
