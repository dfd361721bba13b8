import type { OpenAPIHono } from '@hono/zod-openapi'
import type { MiddlewareHandler } from 'hono'
import { requireActor } from '../auth/access.ts'
import { ApiError } from '../errors.ts'
import type { ApiEnv } from '../http/env.ts'
import type { LoadedPlugin } from './loader.ts'
import { describePluginRoutes } from './route-docs.ts'

/**
 * Mounts every plugin's router on the api app: public ones at their prefix, the others behind sign-in. Hono cannot
 * unmount a route, so each answers only while `isEnabled` says its plugin is on, and a 404 problem while it is off.
 */
export function mountPluginRoutes(app: OpenAPIHono<ApiEnv>, plugins: readonly LoadedPlugin[], isEnabled: (plugin: string) => boolean, apiRate: MiddlewareHandler): void {
  for (const { manifest, router } of plugins) {
    if (router.routes.length === 0) continue
    const name = manifest.name
    const off = () => new ApiError('not_found', `The plugin ${name} is disabled; its routes answer again once a superadmin enables it.`)
    // Mounting an OpenAPIHono router copies its declarations into the api app's document, under the prefix.
    describePluginRoutes(router, { name, private: !manifest.public_api })
    if (manifest.public_api) {
      // A prefix may be shared (even "/"): while off, a request falls through to whatever else answers the path,
      // and is refused only when nothing outside this plugin would. A middleware cannot skip the handlers after it,
      // so each of the plugin's handlers is wrapped in the check.
      const mine = new Set<object>()
      for (const route of router.routes) {
        const handler = route.handler
        route.handler = (c, next) => {
          if (isEnabled(name)) return handler(c, next)
          const later = c.req.matchedRoutes.slice(c.req.routeIndex + 1)
          if (later.some((r) => r.method !== 'ALL' && !mine.has(r))) return next()
          throw off()
        }
      }
      const before = app.routes.length
      app.route(manifest.public_api_prefix ?? `/${name}`, router as never)
      for (const route of app.routes.slice(before)) mine.add(route)
    } else {
      const base = `/api/plugins/${name}`
      app.use(`${base}/*`, async (_c, next) => {
        if (!isEnabled(name)) throw off()
        await next()
      })
      app.use(`${base}/*`, async (c, next) => {
        requireActor(c.get('actor'))
        await next()
      })
      // A signed-in plugin route is API like /api/v1/*, under the same per-user rate.
      app.use(`${base}/*`, apiRate)
      app.route(base, router as never)
    }
  }
}
