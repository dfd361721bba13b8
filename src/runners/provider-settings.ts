import type { DeviceSignInSettings } from './device-sign-in.ts'
import type { ModelEntry, RunnerEvent } from './contract.ts'

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

/** Speech is priced by the minute of audio (transcription, some speech models) or by the million characters said. */
export type AudioPrices = Map<string, { usd: number; per: 'min' | 'Mchar' }>

/** What every provider runner reads from its settings. */
export interface ProviderSettings {
  baseUrl: string
  /** The key: the setting when there is one (deployment configuration wins), else the one kept in the vault. */
  apiKey: () => Promise<string | undefined>
  models: ModelEntry[]
  prices: Prices
  audioPrices: AudioPrices
  /** The provider serves /audio/transcriptions and /audio/speech: the runner offers transcribe and speak. */
  speech: boolean
  /** How many times a request the provider answered 408, 409, 429 or 5xx is sent again (its SDK waits between). */
  maxRetries: number
  /** Where the provider's device-authorization sign-in is served, when it offers one (and no API key is set). */
  device?: DeviceSignInSettings
}

/** Sent again at most this many times unless `max_retries` says otherwise: the SDKs' own default. */
const DEFAULT_RETRIES = 2

/**
 * Reads base_url, api_key, models (id or id:api_id, comma-separated), prices (api_id=in/out per million) and
 * max_retries (0 to 10).
 */
export function readProviderSettings(
  raw: Readonly<Record<string, string>>,
  defaults: { baseUrl: string; models: string; audioPrices?: string; speech?: boolean },
  vaultKey: () => Promise<string | undefined>,
): ProviderSettings {
  const maxRetries = Number(raw.max_retries ?? DEFAULT_RETRIES)
  if (!Number.isInteger(maxRetries) || maxRetries < 0 || maxRetries > 10) throw new Error(`max_retries: "${raw.max_retries}" is not a whole number from 0 to 10`)
  return {
    baseUrl: (raw.base_url ?? defaults.baseUrl).replace(/\/$/, ''),
    apiKey: async () => raw.api_key ?? (await vaultKey()),
    models: modelList(raw.models ?? defaults.models),
    prices: priceList(raw.prices ?? ''),
    // The operator's prices win over the ones the plugin knows, model by model.
    audioPrices: new Map([...audioPriceList(defaults.audioPrices ?? ''), ...audioPriceList(raw.audio_prices ?? '')]),
    speech: raw.speech === undefined ? (defaults.speech ?? false) : raw.speech === 'true',
    maxRetries,
    ...(raw.device_authorization_url && raw.token_url && raw.client_id
      ? { device: { deviceAuthorizationUrl: raw.device_authorization_url, tokenUrl: raw.token_url, clientId: raw.client_id, ...(raw.scope ? { scope: raw.scope } : {}) } }
      : {}),
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

/** Parses an `audio_prices` setting: comma-separated `model=usd/min` or `model=usd/Mchar`. */
export function audioPriceList(text: string): AudioPrices {
  return new Map(
    text
      .split(',')
      .filter((entry) => entry.trim())
      .map((entry) => {
        const match = /^\s*([^=\s]+)\s*=\s*([0-9.]+)\s*\/\s*(min|Mchar)\s*$/.exec(entry)
        const usd = Number(match?.[2])
        if (!match || !Number.isFinite(usd)) throw new Error(`audio_prices: "${entry.trim()}" is not model=usd/min or model=usd/Mchar`)
        return [match[1]!, { usd, per: match[3] as 'min' | 'Mchar' }] as const
      }),
  )
}

/** What speech cost: `ms` of audio, or `chars` characters said, as the model is priced (0 when no price is known). */
export function audioCost(prices: AudioPrices, model: string, amount: { ms: number; chars?: number }): number {
  const price = prices.get(model)
  if (!price) return 0
  return price.per === 'min' ? (price.usd * amount.ms) / 60_000 : (price.usd * (amount.chars ?? 0)) / 1e6
}

/** A usage event, priced by the model's api_id when a price is known. */
export function usage(prices: Prices, apiId: string, input: number, output: number): RunnerEvent {
  const price = prices.get(apiId)
  return { type: 'usage', input_tokens: input, output_tokens: output, cost_usd: price ? (input * price.input + output * price.output) / 1e6 : 0 }
}

/**
 * The SDK client for the key the settings hold now (the vault's may change at any time): `make` runs again only
 * when the key changes, so a provider's client and its connections are kept while the key stays.
 */
export function clientPerKey<C>(make: (key: string | undefined) => C): (key: string | undefined) => C {
  let last: { key: string | undefined; client: C } | undefined
  return (key) => {
    if (!last || last.key !== key) last = { key, client: make(key) }
    return last.client
  }
}
