/**
 * What a plugin needs to describe its routes in /api/openapi.json: a router that records `createRoute`
 * declarations, and the security and error responses the api app's own routes use.
 */
import { OpenAPIHono } from '@hono/zod-openapi'
import type { Actor } from '../auth/actor.ts'

/** What a plugin's router sees on every request. */
export interface PluginEnv {
  Variables: { actor: Actor | undefined; requestId: string }
}

/**
 * A router for plugin routes. Routes registered with `router.openapi(createRoute({...}), handler)` are documented
 * under the plugin's mount point and validated like the api app's own (422 problems for a bad body); plain
 * `router.get(...)` routes still answer and are listed without schemas.
 */
export function createPluginRouter(): OpenAPIHono<PluginEnv> {
  return new OpenAPIHono<PluginEnv>()
}

/** `security` of a route for signed-in callers: a session cookie or a personal API token. */
export const signedIn: Array<Record<string, string[]>> = [{ sessionCookie: [] }, { apiToken: [] }]

/**
 * An error response in the document: the api app's problem+json schema. Referenced by name because the schema is
 * the api layer's, which the plugin host does not import.
 */
export function problem(description: string) {
  return { description, content: { 'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } } } }
}
