import type { ModelEntry, RunnerEvent } from '../runners/contract.ts'

/** Parses a `models` setting: comma-separated `id` or `id:api_id`. */
export function modelList(text: string): ModelEntry[] {
  return text
    .split(',')
    .map((entry) => entry.trim())
    .filter(Boolean)
    .map((entry) => {
      const [id = '', apiId] = entry.split(':')
      return { id, name: id, api_id: apiId || id }
    })
}

export type Prices = Map<string, { input: number; output: number }>

/** What every provider runner reads from its settings. */
export interface ProviderSettings {
  baseUrl: string
  /** The key: the setting when there is one (deployment configuration wins), else the one kept in the vault. */
  apiKey: () => Promise<string | undefined>
  models: ModelEntry[]
  prices: Prices
}

/** Reads base_url, api_key, models (id or id:api_id, comma-separated) and prices (api_id=in/out per million). */
export function readProviderSettings(
  raw: Readonly<Record<string, string>>,
  defaults: { baseUrl: string; models: string },
  vaultKey: () => Promise<string | undefined>,
): ProviderSettings {
  return {
    baseUrl: (raw.base_url ?? defaults.baseUrl).replace(/\/$/, ''),
    apiKey: async () => raw.api_key ?? (await vaultKey()),
    models: modelList(raw.models ?? defaults.models),
    prices: priceList(raw.prices ?? ''),
  }
}

/** Parses a `prices` setting: comma-separated `api_id=input/output`, US$ per million tokens. */
export function priceList(text: string): Prices {
  return new Map(
    text
      .split(',')
      .filter((entry) => entry.trim())
      .map((entry) => {
        const [apiId = '', pair = ''] = entry.trim().split('=')
        const [input, output] = pair.split('/').map(Number)
        if (!apiId || !Number.isFinite(input) || !Number.isFinite(output)) throw new Error(`prices: "${entry}" is not api_id=input/output`)
        return [apiId, { input: input!, output: output! }] as const
      }),
  )
}

/** A usage event, priced by the model's api_id when a price is known. */
export function usage(prices: Prices, apiId: string, input: number, output: number): RunnerEvent {
  const price = prices.get(apiId)
  return { type: 'usage', input_tokens: input, output_tokens: output, cost_usd: price ? (input * price.input + output * price.output) / 1e6 : 0 }
}

/** What an HTTP failure of a model provider means for the person waiting, with the provider's own words. */
async function providerFailure(response: Response): Promise<RunnerEvent> {
  const details = `HTTP ${response.status}: ${(await response.text()).slice(0, 500)}`
  if (response.status === 401 || response.status === 403) return { type: 'error', text: 'The model provider refused the credentials.', details, error_type: 'auth' }
  if (response.status === 429) {
    const wait = response.headers.get('retry-after')
    return { type: 'error', text: `The model provider is rate limiting us${wait ? `; retry in ${wait} s` : ''}.`, details, error_type: 'rate_limited' }
  }
  if (response.status >= 500) return { type: 'error', text: 'The model provider is unavailable.', details, error_type: 'provider_unavailable' }
  return { type: 'error', text: 'The model provider rejected the request.', details, error_type: 'provider_error' }
}

/** A tool call as providers stream it: by index, its JSON arguments arriving in fragments. */
export interface PartialToolCall {
  id: string
  name: string
  json: string
}

/**
 * The end of a provider's answer: its tool calls in index order with their arguments parsed, then `done`; or an
 * error event, if arguments are not JSON.
 */
export function finishAnswer(calls: ReadonlyMap<number, PartialToolCall>): RunnerEvent[] {
  const events: RunnerEvent[] = []
  for (const call of [...calls.entries()].sort(([a], [b]) => a - b).map(([, c]) => c)) {
    try {
      events.push({ type: 'tool_call', call: { id: call.id, name: call.name, arguments: call.json ? JSON.parse(call.json) : {} } })
    } catch {
      return [{ type: 'error', text: `The model asked for ${call.name} with arguments that are not JSON.`, details: call.json.slice(0, 500), error_type: 'provider_error' }]
    }
  }
  return [...events, { type: 'done' }]
}

/** An answer that broke off: silent when we hung up ourselves (abort or timeout), an error event otherwise. */
export function brokenOff(error: unknown, signal: AbortSignal): RunnerEvent[] {
  if (signal.aborted) return []
  return [{ type: 'error', text: 'The model provider’s answer broke off.', details: (error as Error).message, error_type: 'provider_error' }]
}

/**
 * Sends a request to a model provider. The answer's body stream when it accepted; otherwise the events that say
 * why (unreachable, or its HTTP error) — none when we hung up ourselves.
 */
export async function callProvider(url: string, init: RequestInit & { signal: AbortSignal }): Promise<ReadableStream<Uint8Array> | RunnerEvent[]> {
  let response: Response
  try {
    response = await fetch(url, init)
  } catch (error) {
    if (init.signal.aborted) return []
    return [{ type: 'error', text: 'The model provider could not be reached.', details: (error as Error).message, error_type: 'provider_unreachable' }]
  }
  if (!response.ok || !response.body) return [await providerFailure(response)]
  return response.body
}
