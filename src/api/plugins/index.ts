import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi'
import { requireActor } from '../../auth/access.ts'
import { PLUGIN_KINDS } from '../../plugin-host/manifest.ts'
import type { ApiEnv } from '../../http/env.ts'
import { commonErrors, signedIn } from '../responses.ts'

const PluginInfo = z
  .object({
    name: z.string(),
    version: z.string(),
    kind: z.enum(PLUGIN_KINDS),
    description: z.string(),
    public_api: z.boolean(),
    mounted_at: z.string().openapi({ description: 'Where the plugin’s routes answer.' }),
    dependencies: z.array(z.string()),
  })
  .openapi('PluginInfo')

const listPlugins = createRoute({
  method: 'get',
  path: '/api/plugins',
  operationId: 'listPlugins',
  summary: 'The plugins this instance loaded, in dependency order',
  tags: ['Plugins'],
  security: signedIn,
  responses: { 200: { description: 'Loaded plugins.', content: { 'application/json': { schema: z.object({ data: z.array(PluginInfo) }) } } }, ...commonErrors },
})

export function mountPluginList(app: OpenAPIHono<ApiEnv>): void {
  app.openapi(listPlugins, (c) => {
    requireActor(c.var.actor)
    return c.json({ data: c.var.services.plugins.describe() }, 200)
  })
}
