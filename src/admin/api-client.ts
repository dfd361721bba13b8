import type { Context, Hono } from 'hono'
import createClient, { type Client, type ClientPathsWithMethod, type MethodResponse } from 'openapi-fetch'
import { clientAddress } from '../http/client-address.ts'
import type { components, paths } from './api-types.ts'

/** The API, typed by its own OpenAPI document (src/admin/api-types.ts, made by `npm run api-types`). */
export type Api = Client<paths>

/** A schema of the API's document by its name: `Schema<'UserPlatform'>`. */
export type Schema<Name extends keyof components['schemas']> = components['schemas'][Name]

/** What a route answers when it succeeds: `Answer<'post', '/api/me/channel-links'>`. */
export type Answer<Method extends 'get' | 'put' | 'post' | 'patch' | 'delete', Path extends ClientPathsWithMethod<Api, Method>> = MethodResponse<Api, Method, Path>

/** An answer of a route whose path is made at run time, so nothing types its body: the caller narrows it. */
export interface ApiReply<T = unknown> {
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
  /** The API as the person of this request, every route and body typed (openapi-fetch over the in-process app). */
  as(c: Context, options?: CallOptions): Api
  /** The same, for credentials kept from an earlier request (a web chat socket's). */
  asWho(who: Credentials, options?: CallOptions): Api
  credentials(c: Context): Credentials
  /**
   * A route whose path is made at run time (the console's record pages serve every model through one set of
   * handlers): its JSON as `unknown`, for the caller to narrow. Every path known when writing goes through `as`.
   */
  call(c: Context, method: string, path: string, json?: unknown, options?: CallOptions): Promise<ApiReply>
  /** The raw response, for a body that is not JSON (an upload) or an answer that streams. */
  fetchAs(who: Credentials, method: string, path: string, body?: { json: unknown } | { form: FormData }, options?: CallOptions): Promise<Response>
}

const JSON_TYPE = /^application\/(?:[\w.-]+\+)?json\s*(?:;|$)/i

/**
 * Parsed only when the answer says it is JSON, else its text: an answer in another format (an HTML or text route)
 * is a failed call for the page to show, not a crash. Pages read `body?.detail`, which a string simply lacks.
 */
export async function bodyOf(response: Response): Promise<unknown> {
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
    // The api's answer and what it audits carry the console request's id, so one id follows a click end to end.
    const requestId = c.get('requestId')
    if (typeof requestId === 'string') headers['x-request-id'] = requestId
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

  async function callAs(who: Credentials, method: string, path: string, json?: unknown, options?: CallOptions): Promise<ApiReply> {
    const response = await fetchAs(who, method, path, json === undefined ? undefined : { json }, options)
    return { status: response.status, body: await bodyOf(response), headers: response.headers }
  }

  function asWho(who: Credentials, options: CallOptions = {}): Api {
    return createClient<paths>({
      // The in-process app reads only the path; the host is Hono's own default.
      baseUrl: 'http://localhost',
      headers: {
        accept: 'application/json',
        ...who.headers,
        ...(options.ifMatch ? { 'if-match': options.ifMatch } : {}),
        ...(options.company ? { 'x-switchboard-company': options.company } : {}),
      },
      fetch: (request) => Promise.resolve(api.request(request, undefined, { requestIP: () => ({ address: who.address }) })),
    })
  }

  return {
    as: (c, options) => asWho(credentials(c), options),
    asWho,
    credentials,
    call: (c, method, path, json, options) => callAs(credentials(c), method, path, json, options),
    fetchAs,
  }
}

/** A problem+json as the API sends it: what failed, and each invalid field by its path. */
export interface ProblemBody {
  detail?: string
  /** The problem's code (validation_error, not_found, …), as the API's table names it. */
  code?: string
  errors?: Array<{ path: string; message: string }>
}

/**
 * The problem in a refused answer, when the API sent one; nothing when the answer was no problem+json (a proxy's
 * HTML page), so a page falls back to saying what failed, with the status.
 */
export function problemOf(error: unknown): ProblemBody {
  if (typeof error !== 'object' || error === null) return {}
  const { detail, code, errors } = error as { detail?: unknown; code?: unknown; errors?: unknown }
  return {
    ...(typeof detail === 'string' ? { detail } : {}),
    ...(typeof code === 'string' ? { code } : {}),
    ...(Array.isArray(errors) ? { errors: errors.filter((e): e is { path: string; message: string } => typeof e?.path === 'string' && typeof e?.message === 'string') } : {}),
  }
}


/** A refusal made here, before any call (an id that is no UUID names nothing): shaped as a call's answer. */
export function refusedHere(status: number, detail: string): { data?: undefined; error: ProblemBody; response: Response } {
  return { error: { detail }, response: new Response(null, { status }) }
}

/** An answer a page reports on: a typed call's (`{ response, error }`) or a call's by a run-time path. */
export type Answered = { response: Response; error?: unknown } | ApiReply

/** The status and the problem of either kind of answer. */
export function verdictOf(answer: Answered): { status: number; problem: ProblemBody } {
  return 'response' in answer ? { status: answer.response.status, problem: problemOf(answer.error) } : { status: answer.status, problem: problemOf(answer.body) }
}

/** What the API said when it refused, or what failed with its status when it said nothing readable. */
export function problemText(answer: Answered, what: string): string {
  const { status, problem } = verdictOf(answer)
  return problem.detail ?? `${what} failed (${status}).`
}
