import { OpenAPIHono } from '@hono/zod-openapi'
import type { Env } from 'hono'
import type { ApiEnv } from '../http/env.ts'
import { RememberedRouter } from '../http/remembered-router.ts'
import { apiDefaultHook } from './hooks.ts'

/**
 * An api router: validation failures become the api's problem+json, whichever port or prefix it answers on. One that
 * `serves` requests itself (not one mounted into another, whose routes the other takes over) remembers where each
 * method and path goes.
 */
export function createRouter<E extends Env = ApiEnv>({ serves = false } = {}): OpenAPIHono<E> {
  return new OpenAPIHono<E>({ defaultHook: apiDefaultHook, ...(serves ? { router: new RememberedRouter() } : {}) })
}
