import { OpenAPIHono } from '@hono/zod-openapi'
import type { Env } from 'hono'
import type { ApiEnv } from '../http/env.ts'
import { RememberedRouter } from '../http/remembered-router.ts'
import { apiDefaultHook } from './hooks.ts'

/** An api router: validation failures become the api's problem+json, whichever port or prefix it answers on. */
export function createRouter<E extends Env = ApiEnv>(): OpenAPIHono<E> {
  return new OpenAPIHono<E>({ defaultHook: apiDefaultHook, router: new RememberedRouter() })
}
