import type { Actor } from '../../auth/actor.ts'
import type { OpenAPIHono } from '@hono/zod-openapi'
import type { Context } from 'hono'
import { requireActor } from '../../auth/access.ts'
import { hasRole } from '../../auth/actor.ts'
import { ApiError } from '../../errors.ts'
import type { ApiEnv } from '../../http/env.ts'
import type { PluginSettings } from '../../plugin-host/host.ts'
import { disablePlugin, enablePlugin, listPlugins, readSettings, writeSettings } from './routes.ts'
import { etag, expectedVersions } from '../etag.ts'

type Ctx = Context<ApiEnv>

/** Switching plugins and their settings change the host: superadmins only. Anyone signed in may list them. */
function requireSuperadmin(c: Ctx): Actor {
  const actor = requireActor(c.var.actor)
  if (!hasRole(actor, 'superadmin')) throw new ApiError('forbidden', 'Only a superadmin may switch plugins or read and change their settings.')
  return actor
}

function sendSettings(c: Ctx, { version, ...settings }: PluginSettings) {
  c.header('ETag', etag(version))
  return c.json(settings, 200)
}

/** GET /api/plugins, switching plugins on and off, and their settings. */
export function mountPluginList(app: OpenAPIHono<ApiEnv>): void {
  app.openapi(listPlugins, (c) => {
    requireActor(c.var.actor)
    return c.json({ data: c.var.services.plugins.describe() }, 200)
  })

  app.openapi(enablePlugin, async (c) => {
    return c.json(await c.var.services.plugins.setEnabled(c.req.valid('param').name, true, requireSuperadmin(c)), 200)
  })

  app.openapi(disablePlugin, async (c) => {
    return c.json(await c.var.services.plugins.setEnabled(c.req.valid('param').name, false, requireSuperadmin(c)), 200)
  })

  app.openapi(readSettings, async (c) => {
    requireSuperadmin(c)
    return sendSettings(c, await c.var.services.plugins.settings(c.req.valid('param').name))
  })

  app.openapi(writeSettings, async (c) => {
    const actor = requireSuperadmin(c)
    const { name } = c.req.valid('param')
    c.req.valid('json')
    // The body as sent, not as the schema rebuilt it: a "__proto__" key would vanish from the rebuilt object
    // (silently dropped), where the settings check names it as no setting of the plugin.
    const body = (await c.req.json()) as Record<string, unknown>
    return sendSettings(c, await c.var.services.plugins.writeSettings(name, body, actor, expectedVersions(c)))
  })
}
