import { z, type OpenAPIHono } from '@hono/zod-openapi'
import { problem, signedIn, type PluginEnv } from './openapi.ts'

const METHODS = new Set(['get', 'put', 'post', 'delete', 'patch', 'options', 'trace'])

// What the host's own sign-in and rate limit in front of a private plugin router can answer.
const PRIVATE_MOUNT_ERRORS = {
  401: problem('No valid credentials.'),
  429: problem('Over the request throttle; see Retry-After.'),
}

/** Hono's `/items/:id` as OpenAPI's `/items/{id}`; undefined for what OpenAPI cannot name (wildcards, optional parts). */
function openApiPath(path: string): string | undefined {
  if (path.includes('*') || /:\w+(\{[^}]*\})?\?/.test(path)) return undefined
  return path.replace(/:(\w+)(\{[^}]*\})?/g, '{$1}')
}

/**
 * Completes a plugin router's document entries before it is mounted: the mount point's tag, security and errors
 * where the plugin declared none, and an entry without schemas for each route registered without createRoute, so
 * that every route a plugin serves is listed. Safe to repeat: mounting twice adds nothing.
 */
export function describePluginRoutes(router: OpenAPIHono<PluginEnv>, plugin: { name: string; private: boolean }): void {
  const tag = `Plugin ${plugin.name}`
  const documented = new Set<string>()
  for (const definition of router.openAPIRegistry.definitions) {
    if (definition.type !== 'route') continue
    const route = definition.route
    documented.add(`${route.method} ${route.path}`)
    route.tags ??= [tag]
    // A public route checks what it is sent itself (a webhook its signature): no credential of the platform's.
    if (!plugin.private) route.security ??= []
    if (plugin.private) {
      route.security ??= signedIn
      route.responses = { ...PRIVATE_MOUNT_ERRORS, ...route.responses }
    }
  }
  for (const { method, path } of router.routes) {
    const verb = method.toLowerCase() as 'get'
    const openApi = openApiPath(path)
    if (!METHODS.has(verb) || openApi === undefined || documented.has(`${verb} ${openApi}`)) continue
    documented.add(`${verb} ${openApi}`)
    const names = [...openApi.matchAll(/\{(\w+)\}/g)].map((match) => match[1]!)
    router.openAPIRegistry.registerPath({
      method: verb,
      path: openApi,
      tags: [tag],
      summary: `Served by the plugin ${plugin.name}, which does not describe it`,
      ...(names.length ? { request: { params: z.object(Object.fromEntries(names.map((name) => [name, z.string()]))) } } : {}),
      security: plugin.private ? signedIn : [],
      responses: { ...(plugin.private ? PRIVATE_MOUNT_ERRORS : {}), default: { description: 'Whatever the plugin answers.' } },
    })
  }
}
