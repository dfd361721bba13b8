/**
 * A runner for any endpoint that speaks OpenAI's chat completions (OpenAI itself, Moonshot's Kimi, local servers).
 * It lives in the SDK so that every plugin for such a provider shares it without importing another plugin.
 */
import type { ChatMessage, ModelEntry, Runner, RunnerEvent, RunnerRequest } from '../runners/contract.ts'
import { brokenOff, callProvider, finishAnswer, usage, type PartialToolCall, type ProviderSettings } from './runner-helpers.ts'
import { sseData } from './sse.ts'

/** The contract's messages in the chat completions shape. */
function wireMessages(messages: ChatMessage[]) {
  return messages.map((m) => {
    if (m.role === 'tool') return { role: 'tool', tool_call_id: m.tool_call_id, content: m.content }
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

async function* stream(settings: ProviderSettings, request: RunnerRequest): AsyncGenerator<RunnerEvent> {
  const key = await settings.apiKey()
  const answer = await callProvider(`${settings.baseUrl}/chat/completions`, {
    method: 'POST',
    signal: request.signal,
    headers: { 'content-type': 'application/json', accept: 'text/event-stream', ...(key ? { authorization: `Bearer ${key}` } : {}) },
    body: JSON.stringify({
      model: request.model.api_id,
      stream: true,
      stream_options: { include_usage: true },
      messages: wireMessages(request.messages),
      ...(request.tools.length
        ? { tools: request.tools.map((t) => ({ type: 'function', function: { name: t.name, description: t.description, parameters: t.parameters } })) }
        : {}),
    }),
  })
  if (Array.isArray(answer)) {
    yield* answer
    return
  }

  // Tool calls arrive in pieces, by index: the name once, the arguments as fragments of JSON.
  const calls = new Map<number, PartialToolCall>()
  try {
    for await (const data of sseData(answer)) {
      if (data === '[DONE]') break
      const chunk = JSON.parse(data)
      const delta = chunk.choices?.[0]?.delta
      if (typeof delta?.content === 'string' && delta.content) yield { type: 'text', text: delta.content }
      for (const part of delta?.tool_calls ?? []) {
        const call = calls.get(part.index) ?? { id: '', name: '', json: '' }
        call.id ||= part.id ?? ''
        call.name ||= part.function?.name ?? ''
        call.json += part.function?.arguments ?? ''
        calls.set(part.index, call)
      }
      if (chunk.usage) yield usage(settings.prices, request.model.api_id, chunk.usage.prompt_tokens ?? 0, chunk.usage.completion_tokens ?? 0)
    }
  } catch (error) {
    yield* brokenOff(error, request.signal)
    return
  }
  yield* finishAnswer(calls)
}

/** GET {base}/models: the provider's catalogue, ids as they are used on the wire. */
async function catalogue(settings: ProviderSettings, signal: AbortSignal): Promise<ModelEntry[]> {
  const key = await settings.apiKey()
  const response = await fetch(`${settings.baseUrl}/models`, { signal, headers: key ? { authorization: `Bearer ${key}` } : {} })
  if (!response.ok) throw new Error(`the provider answered HTTP ${response.status} to GET /models`)
  const body = (await response.json()) as { data?: Array<{ id?: unknown }> }
  return (body.data ?? []).filter((m): m is { id: string } => typeof m.id === 'string').map((m) => ({ id: m.id, name: m.id, api_id: m.id }))
}

/** A runner for an OpenAI-compatible endpoint, offered to agents under `name`. */
export function openAICompatibleRunner(name: string, settings: ProviderSettings): Runner {
  return {
    name,
    models: () => settings.models,
    catalogue: (signal) => catalogue(settings, signal),
    auth: { method: 'api_key', configured: async () => Boolean(await settings.apiKey()) },
    stream: (request) => stream(settings, request),
  }
}
