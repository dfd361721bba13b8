import type { Context, Hono } from 'hono'
import { clientAddress } from '../http/client-address.ts'

export interface ApiReply<T = any> {
  status: number
  body: T
  /** The answer's headers: an ETag to send back in If-Match, a Location. */
  headers: Headers
}

/** What a call sends besides its JSON body: If-Match, to refuse a stale edit. */
export interface CallOptions {
  ifMatch?: string
  /** The company the call works in, when the caller belongs to several (X-Switchboard-Company). */
  company?: string
}

/**
 * Who a call is made for: the browser's cookie, origin and address as its request carried them. Kept by a web chat
 * socket to act for the same person later, under the same checks as each of their requests.
 */
export interface Credentials {
  headers: Record<string, string>
  address: string
}

/**
 * The admin app's only way to data: the public api app, called in process with the browser's own cookie (and
 * its origin and address), so every console action is a documented endpoint a script could call too, under the
 * same permissions, CSRF check and throttle.
 */
export interface ApiClient {
  call<T = any>(c: Context, method: string, path: string, json?: unknown, options?: CallOptions): Promise<ApiReply<T>>
  credentials(c: Context): Credentials
  callAs<T = any>(who: Credentials, method: string, path: string, json?: unknown, options?: CallOptions): Promise<ApiReply<T>>
  /** The raw response, for a body that is not JSON (an upload) or an answer that streams. */
  fetchAs(who: Credentials, method: string, path: string, body?: { json: unknown } | { form: FormData }, options?: CallOptions): Promise<Response>
}

const JSON_TYPE = /^application\/(?:[\w.-]+\+)?json\s*(?:;|$)/i

/**
 * Parsed only when the answer says it is JSON, else its text: an answer in another format (an HTML or text route)
 * is a failed call for the page to show, not a crash. Pages read `body?.detail`, which a string simply lacks.
 */
export async function bodyOf(response: Response): Promise<any> {
  const text = await response.text()
  if (!text) return undefined
  if (!JSON_TYPE.test(response.headers.get('content-type') ?? '')) return text
  try {
    return JSON.parse(text)
  } catch {
    return text
  }
}

export function createApiClient(api: Pick<Hono<any>, 'request'>): ApiClient {
  function credentials(c: Context): Credentials {
    const headers: Record<string, string> = {}
    for (const name of ['cookie', 'origin', 'sec-fetch-site']) {
      const value = c.req.header(name)
      if (value !== undefined) headers[name] = value
    }
    return { headers, address: clientAddress(c) }
  }

  function fetchAs(who: Credentials, method: string, path: string, body?: { json: unknown } | { form: FormData }, options: CallOptions = {}): Promise<Response> {
    const headers: Record<string, string> = { accept: 'application/json', ...who.headers }
    if (body && 'json' in body) headers['content-type'] = 'application/json'
    if (options.ifMatch) headers['if-match'] = options.ifMatch
    if (options.company) headers['x-switchboard-company'] = options.company
    const payload = body === undefined ? undefined : 'json' in body ? JSON.stringify(body.json) : body.form
    return Promise.resolve(api.request(path, { method, headers, body: payload }, { requestIP: () => ({ address: who.address }) }))
  }

  async function callAs<T>(who: Credentials, method: string, path: string, json?: unknown, options?: CallOptions): Promise<ApiReply<T>> {
    const response = await fetchAs(who, method, path, json === undefined ? undefined : { json }, options)
    return { status: response.status, body: await bodyOf(response), headers: response.headers }
  }

  return { call: (c, method, path, json, options) => callAs(credentials(c), method, path, json, options), credentials, callAs, fetchAs }
}
