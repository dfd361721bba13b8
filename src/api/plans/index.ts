import type { OpenAPIHono } from '@hono/zod-openapi'
import { requireActor } from '../../auth/access.ts'
import { ApiError } from '../../errors.ts'
import type { ApiEnv } from '../../http/env.ts'
import { malformedIdIsNotFound } from '../hooks.ts'
import { conversationPlanRoute, createPlanRoute, moveTaskRoute, readPlanRoute, updatePlanRoute } from './routes.ts'

/** `/api/plans`: the same plans, and the same rules, as the planning tools. */
export function mountPlans(app: OpenAPIHono<ApiEnv>): void {
  const hook = malformedIdIsNotFound('plan')

  app.openapi(createPlanRoute, async (c) => {
    const { conversation_id, ...plan } = c.req.valid('json')
    return c.json(await c.var.services.plans.create(requireActor(c.var.actor), conversation_id, plan), 201)
  })

  app.openapi(readPlanRoute, async (c) => c.json(await c.var.services.plans.read(requireActor(c.var.actor), c.req.valid('param').id), 200), hook)

  app.openapi(
    conversationPlanRoute,
    async (c) => {
      const plan = await c.var.services.plans.ofConversation(requireActor(c.var.actor), c.req.valid('param').id)
      if (!plan) throw new ApiError('not_found', 'This conversation has never had a plan.')
      return c.json(plan, 200)
    },
    malformedIdIsNotFound('conversation'),
  )

  app.openapi(
    moveTaskRoute,
    async (c) => c.json(await c.var.services.plans.moveTask(requireActor(c.var.actor), { plan_id: c.req.valid('param').id }, c.req.valid('json')), 200),
    hook,
  )

  app.openapi(updatePlanRoute, async (c) => c.json(await c.var.services.plans.update(requireActor(c.var.actor), c.req.valid('param').id, c.req.valid('json')), 200), hook)
}
