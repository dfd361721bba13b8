import {
  brokenOff,
  callProvider,
  definePlugin,
  finishAnswer,
  readProviderSettings,
  sseData,
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

const VERSION = '2023-06-01'

function readSettings(raw: Readonly<Record<string, string>>, vaultKey: () => Promise<string | undefined>): Settings {
  const maxTokens = Number(raw.max_tokens ?? 4096)
  if (!Number.isInteger(maxTokens) || maxTokens < 1) throw new Error(`max_tokens: "${raw.max_tokens}" is not a positive whole number`)
  return { ...readProviderSettings(raw, { baseUrl: 'https://api.anthropic.com', models: 'claude-sonnet:claude-sonnet-4-5' }, vaultKey), maxTokens }
}

type Block = { type: 'text'; text: string } | { type: 'tool_use'; id: string; name: string; input: unknown } | { type: 'tool_result'; tool_use_id: string; content: string }

/** The contract's messages as the Messages API wants them: system apart, tool results as user turns, roles alternating. */
function wire(messages: ChatMessage[]) {
  const system = messages.filter((m) => m.role === 'system').map((m) => m.content).join('\n\n')
  const turns: Array<{ role: 'user' | 'assistant'; content: Block[] }> = []
  for (const m of messages) {
    if (m.role === 'system') continue
    const role = m.role === 'assistant' ? 'assistant' : 'user'
    const blocks: Block[] =
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

async function* stream(settings: Settings, request: RunnerRequest): AsyncGenerator<RunnerEvent> {
  const { system, messages } = wire(request.messages)
  const key = await settings.apiKey()
  const answer = await callProvider(`${settings.baseUrl}/v1/messages`, {
    method: 'POST',
    signal: request.signal,
    headers: { 'content-type': 'application/json', 'anthropic-version': VERSION, ...(key ? { 'x-api-key': key } : {}) },
    body: JSON.stringify({
      model: request.model.api_id,
      max_tokens: settings.maxTokens,
      stream: true,
      ...(system ? { system } : {}),
      messages,
      ...(request.tools.length ? { tools: request.tools.map((t) => ({ name: t.name, description: t.description, input_schema: t.parameters })) } : {}),
    }),
  })
  if (Array.isArray(answer)) {
    yield* answer
    return
  }

  const tools = new Map<number, PartialToolCall>()
  let inputTokens = 0
  try {
    for await (const data of sseData(answer)) {
      const event = JSON.parse(data)
      if (event.type === 'message_start') inputTokens = event.message?.usage?.input_tokens ?? 0
      else if (event.type === 'content_block_start' && event.content_block?.type === 'tool_use') {
        tools.set(event.index, { id: event.content_block.id, name: event.content_block.name, json: '' })
      } else if (event.type === 'content_block_delta') {
        if (event.delta?.type === 'text_delta' && event.delta.text) yield { type: 'text', text: event.delta.text }
        if (event.delta?.type === 'input_json_delta') {
          const tool = tools.get(event.index)
          if (tool) tool.json += event.delta.partial_json ?? ''
        }
      } else if (event.type === 'message_delta' && event.usage) {
        yield usage(settings.prices, request.model.api_id, inputTokens, event.usage.output_tokens ?? 0)
      } else if (event.type === 'error') {
        const kind = event.error?.type === 'overloaded_error' ? 'provider_unavailable' : event.error?.type === 'rate_limit_error' ? 'rate_limited' : 'provider_error'
        yield { type: 'error', text: 'The model provider stopped with an error.', details: `${event.error?.type}: ${event.error?.message}`, error_type: kind }
        return
      } else if (event.type === 'message_stop') break
    }
  } catch (error) {
    yield* brokenOff(error, request.signal)
    return
  }
  yield* finishAnswer(tools)
}

async function catalogue(settings: Settings, signal: AbortSignal): Promise<ModelEntry[]> {
  const key = await settings.apiKey()
  const response = await fetch(`${settings.baseUrl}/v1/models`, {
    signal,
    headers: { 'anthropic-version': VERSION, ...(key ? { 'x-api-key': key } : {}) },
  })
  if (!response.ok) throw new Error(`the provider answered HTTP ${response.status} to GET /v1/models`)
  const body = (await response.json()) as { data?: Array<{ id?: unknown; display_name?: unknown }> }
  return (body.data ?? [])
    .filter((m): m is { id: string; display_name?: unknown } => typeof m.id === 'string')
    .map((m) => ({ id: m.id, name: typeof m.display_name === 'string' ? m.display_name : m.id, api_id: m.id }))
}

export default definePlugin({
  setup(context) {
    const settings = readSettings(context.settings, () => context.secret('api_key'))
    context.registerRunner({
      name: 'anthropic',
      models: () => settings.models,
      catalogue: (signal) => catalogue(settings, signal),
      auth: { method: 'api_key', configured: async () => Boolean(await settings.apiKey()) },
      stream: (request) => stream(settings, request),
    })
  },
})
