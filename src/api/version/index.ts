import type { OpenAPIHono } from '@hono/zod-openapi'
import type { ApiEnv } from '../../http/env.ts'
import { API_MAJOR, VERSION } from '../../version.ts'
import { versionRoute } from './routes.ts'

export function mountVersion(app: OpenAPIHono<ApiEnv>): void {
  app.openapi(versionRoute, (c) => c.json({ version: VERSION, api: API_MAJOR }, 200))
}
