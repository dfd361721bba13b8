import type { OpenAPIHono } from '@hono/zod-openapi'
import { hasRole } from '../../auth/actor.ts'
import { requireActor } from '../../auth/access.ts'
import { ApiError } from '../../errors.ts'
import type { ApiEnv } from '../../http/env.ts'
import { monthOf } from '../../usage/budgets.ts'
import { usageSummary, usageTotals } from '../../usage/summary.ts'
import { budgetsRoute, usageRoute } from './routes.ts'

const DAY_MS = 86_400_000
const MAX_DAYS = 366

/** GET /api/usage and GET /api/usage/budgets: what was spent, and what may still be. */
export function mountUsage(app: OpenAPIHono<ApiEnv>): void {
  app.openapi(usageRoute, async (c) => {
    const actor = requireActor(c.var.actor)
    const { scope, by, from, to } = c.req.valid('query')
    if (scope === 'company' && !hasRole(actor, 'admin')) throw new ApiError('forbidden', 'Only the company’s admins read its usage; scope=mine is your own.')
    if (!actor.companyId) throw new ApiError('conflict', 'You work in no company, so there is no usage to read.')
    const month = monthOf(c.var.services.clock.now())
    const since = from ? new Date(`${from}T00:00:00Z`) : month.start
    const until = to ? new Date(Date.parse(`${to}T00:00:00Z`) + DAY_MS) : month.end
    if (until <= since) throw new ApiError('bad_request', 'The period ends before it starts.', { errors: [{ path: 'query.to', message: 'before from' }] })
    if (until.getTime() - since.getTime() > MAX_DAYS * DAY_MS) throw new ApiError('bad_request', `A period is at most ${MAX_DAYS} days.`, { errors: [{ path: 'query.from', message: 'too far back' }] })
    if (by === 'user' && scope === 'mine') throw new ApiError('bad_request', 'Grouping by person needs scope=company.', { errors: [{ path: 'query.by', message: 'needs scope=company' }] })
    const range = { companyId: actor.companyId, ...(scope === 'mine' ? { userId: actor.userId } : {}), since, until }
    const { db } = c.var.services
    const [data, totals] = await Promise.all([usageSummary(db, range, by), usageTotals(db, range)])
    const day = (d: Date) => d.toISOString().slice(0, 10)
    return c.json({ scope, by, from: day(since), to: day(new Date(until.getTime() - DAY_MS)), data, totals }, 200)
  })

  app.openapi(budgetsRoute, async (c) => {
    const actor = requireActor(c.var.actor)
    return c.json({ data: await c.var.services.budgets.states(actor) }, 200)
  })
}
