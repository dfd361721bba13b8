import { context, propagation } from '@opentelemetry/api'
import type { RunnerEvent } from './contract.ts'

/**
 * The error classes a provider's SDK throws (OpenAI's and Anthropic's are made by the same generator and share
 * this shape): its client class carries them as statics.
 */
export interface ProviderSdk {
  APIError: abstract new (...args: never[]) => Error & { status?: number | undefined; headers?: Headers | undefined; error?: unknown }
  APIConnectionError: abstract new (...args: never[]) => Error
  APIUserAbortError: abstract new (...args: never[]) => Error
}

/** The most a provider's `retry-after` may ask us to wait before trying again: a person is waiting for the answer. */
export const LONGEST_RETRY_WAIT_MS = 30_000

/**
 * What went wrong with a request to a model provider, as the person waiting should hear it, with the provider's
 * own words in `details`. Silent when we hung up ourselves (an abort or the turn's timeout). `started` says the
 * answer had begun to stream: a failure then is an answer that broke off, not a provider out of reach.
 */
export function providerFailure(sdk: ProviderSdk, error: unknown, signal: AbortSignal, started: boolean): RunnerEvent[] {
  if (signal.aborted || error instanceof sdk.APIUserAbortError) return []
  const message = error instanceof Error ? error.message : String(error)
  if (error instanceof sdk.APIConnectionError || !(error instanceof sdk.APIError)) {
    return started
      ? [{ type: 'error', text: 'The model provider’s answer broke off.', details: message, error_type: 'provider_error' }]
      : [{ type: 'error', text: 'The model provider could not be reached.', details: message, error_type: 'provider_unreachable' }]
  }
  if (error.status === undefined) return [streamError(error.error)]
  const details = `HTTP ${error.status}: ${(error.error === undefined ? message : JSON.stringify(error.error)).slice(0, 500)}`
  if (error.status === 401 || error.status === 403) return [{ type: 'error', text: 'The model provider refused the credentials.', details, error_type: 'auth' }]
  if (error.status === 429) {
    const wait = error.headers?.get('retry-after')
    return [{ type: 'error', text: `The model provider is rate limiting us${wait ? `; retry in ${wait} s` : ''}.`, details, error_type: 'rate_limited' }]
  }
  if (error.status >= 500) return [{ type: 'error', text: 'The model provider is unavailable.', details, error_type: 'provider_unavailable' }]
  return [{ type: 'error', text: 'The model provider rejected the request.', details, error_type: 'provider_error' }]
}

/** An error the provider sent inside its stream (`{error: {type, message}}`, alone or wrapped once more). */
function streamError(body: unknown): RunnerEvent {
  const outer = (body ?? {}) as { error?: { type?: unknown; message?: unknown }; type?: unknown; message?: unknown }
  const inner = outer.error && typeof outer.error === 'object' ? outer.error : outer
  const type = String(inner.type ?? 'error')
  const kind = type === 'overloaded_error' ? 'provider_unavailable' : type === 'rate_limit_error' ? 'rate_limited' : 'provider_error'
  return { type: 'error', text: 'The model provider stopped with an error.', details: `${type}: ${String(inner.message ?? '')}`.slice(0, 500), error_type: kind }
}

export type Fetch = (input: string | URL | Request, init?: RequestInit) => Promise<Response>

/**
 * A fetch for a provider's SDK that keeps its retries to waits a person sits through: an answer whose
 * `retry-after` (seconds or a date) or `retry-after-ms` asks for longer than LONGEST_RETRY_WAIT_MS is marked
 * `x-should-retry: false`, which both SDKs obey, so the person hears at once when to try again. (Left alone, the
 * SDKs would ignore a wait over a minute and retry within seconds, against the provider's word.)
 */
export function patientFetch(base: Fetch = (input, init) => fetch(input, init)): Fetch {
  return async (input, init) => {
    // The runner call's traceparent, when tracing is on (the propagator is registered only then).
    const sent = new Headers(init?.headers)
    propagation.inject(context.active(), sent, { set: (h, key, value) => h.set(key, value) })
    const response = await base(input, { ...init, headers: sent })
    const wait = retryWaitMs(response.headers)
    if (response.ok || wait === undefined || wait <= LONGEST_RETRY_WAIT_MS) return response
    const headers = new Headers(response.headers)
    headers.set('x-should-retry', 'false')
    return new Response(response.body, { status: response.status, statusText: response.statusText, headers })
  }
}

/** The wait a response asks for before a retry, in milliseconds; undefined when it names none. */
export function retryWaitMs(headers: Headers): number | undefined {
  const ms = Number.parseFloat(headers.get('retry-after-ms') ?? '')
  if (Number.isFinite(ms)) return ms
  const after = headers.get('retry-after')
  if (!after) return undefined
  const seconds = Number.parseFloat(after)
  if (Number.isFinite(seconds)) return seconds * 1000
  const date = Date.parse(after)
  return Number.isNaN(date) ? undefined : date - Date.now()
}
