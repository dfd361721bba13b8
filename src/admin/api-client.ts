import type { Context, Hono } from 'hono'
import { clientAddress } from '../api/client-address.ts'

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
      const text = await response.text()
      return { status: response.status, body: text ? JSON.parse(text) : undefined }
    },
  }
}
