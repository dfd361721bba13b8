import type { OpenAPIHono } from '@hono/zod-openapi'
import { requireActor } from '../../auth/access.ts'
import type { ApiEnv } from '../../http/env.ts'
import { malformedIdIsNotFound } from '../hooks.ts'
import { decideApprovalRoute, listApprovalsRoute } from './routes.ts'

/** `/api/approvals`: what waits for a person's yes, and the answer. */
export function mountApprovals(app: OpenAPIHono<ApiEnv>): void {
  app.openapi(listApprovalsRoute, async (c) => {
    const { status, conversation_id, limit } = c.req.valid('query')
    return c.json({ data: await c.var.services.approvals.list(requireActor(c.var.actor), { status, conversationId: conversation_id, limit }) }, 200)
  })
  app.openapi(
    decideApprovalRoute,
    async (c) => c.json(await c.var.services.approvals.decide(requireActor(c.var.actor), c.req.valid('param').id.toLowerCase(), c.req.valid('json').approve), 200),
    malformedIdIsNotFound('ToolApproval'),
  )
}
