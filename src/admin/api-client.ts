import type { Hono } from 'hono'

/**
 * The admin app's only way to data: the public api app, called in process. The caller's own credentials are
 * forwarded so every admin action is a documented endpoint a script could call too.
 */
export interface ApiClient {
  get<T>(path: string, credentials?: HeadersInit): Promise<{ status: number; body: T }>
}

export function createApiClient(api: Pick<Hono<any>, 'request'>): ApiClient {
  return {
    async get<T>(path: string, credentials?: HeadersInit) {
      const response = await api.request(path, { headers: credentials })
      return { status: response.status, body: (await response.json()) as T }
    },
  }
}
