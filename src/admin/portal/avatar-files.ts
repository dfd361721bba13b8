import type { Hono } from 'hono'
import { clientAddress } from '../../http/client-address.ts'
import type { ApiClient } from '../api-client.ts'

// The name becomes a path segment of an API call: only a name of this form goes on, so it can name nothing else.
// The api app checks the name strictly again.
const AVATAR_NAME = /^[0-9a-f-]{36}\.(?:png|jpg|gif|webp)$/

// The headers that make the picture safe and cacheable, kept as the api app set them.
const PASSED_ON = ['content-type', 'content-length', 'cache-control', 'x-content-type-options', 'content-security-policy']

/**
 * GET /static/avatars/:file on the console's port, where users.avatar addresses are shown, fetched from the api
 * app in process like every other read of the console. Avatars are public, so no cookie goes with the call. Mount
 * it before the console's static files, which answer 404 for any file not on disk.
 */
export function mountAvatarFiles(app: Hono<any>, api: ApiClient): void {
  app.get('/static/avatars/:file', async (c) => {
    const file = c.req.param('file')
    const notFound = () => c.text('Not found', 404, { 'cache-control': 'no-store' })
    if (!AVATAR_NAME.test(file)) return notFound()
    const response = await api.fetchAs({ headers: {}, address: clientAddress(c) }, 'GET', `/static/avatars/${encodeURIComponent(file)}`)
    if (response.status !== 200) {
      await response.body?.cancel()
      return notFound()
    }
    const headers = new Headers()
    for (const name of PASSED_ON) {
      const value = response.headers.get(name)
      if (value !== null) headers.set(name, value)
    }
    return new Response(response.body, { status: 200, headers })
  })
}
