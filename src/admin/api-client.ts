import type { Context, Hono } from 'hono'
import { clientAddress } from '../http/client-address.ts'

export interface ApiReply<T = any> {
  status: number
  body: T
}

/**
 * The admin app's only way to data: the public api app, called in process with the browser's own cookie (and
 * its origin and address), so every console action is a documented endpoint a script could call too, under the
 * same permissions, CSRF check and throttle.
 */
export interface ApiClient {
  call<T = any>(c: Context, method: string, path: string, json?: unknown): Promise<ApiReply<T>>
}

const JSON_TYPE = /^application\/(?:[\w.-]+\+)?json\s*(?:;|$)/i

/**
 * Parsed only when the answer says it is JSON, else its text: an answer in another format (an HTML or text route)
 * is a failed call for the page to show, not a crash. Pages read `body?.detail`, which a string simply lacks.
 */
async function bodyOf(response: Response): Promise<any> {
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
  return {
    async call(c, method, path, json) {
      const headers: Record<string, string> = { accept: 'application/json' }
      for (const name of ['cookie', 'origin', 'sec-fetch-site']) {
        const value = c.req.header(name)
        if (value !== undefined) headers[name] = value
      }
      if (json !== undefined) headers['content-type'] = 'application/json'
      const address = clientAddress(c)
      const response = await api.request(
        path,
        { method, headers, body: json === undefined ? undefined : JSON.stringify(json) },
        { requestIP: () => ({ address }) },
      )
      return { status: response.status, body: await bodyOf(response) }
    },
  }
}
