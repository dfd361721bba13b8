import type { OpenAPIHono } from '@hono/zod-openapi'
import { hasRole } from '../../auth/actor.ts'
import { requireActor } from '../../auth/access.ts'
import { ApiError } from '../../errors.ts'
import type { ApiEnv } from '../../http/env.ts'
import { companyOverview } from '../../operations/overview.ts'
import { overviewRoute } from './routes.ts'

/** GET /api/overview: what the console's overview shows an admin. */
export function mountOverview(app: OpenAPIHono<ApiEnv>): void {
  app.openapi(overviewRoute, async (c) => {
    const actor = requireActor(c.var.actor)
    if (!hasRole(actor, 'admin')) throw new ApiError('forbidden', 'The overview is for the company’s admins.')
    if (!actor.companyId) throw new ApiError('conflict', 'You work in no company, so there is no overview to show.')
    const { db, clock, upstreams } = c.var.services
    const overview = await companyOverview(db, actor.companyId, clock.now())
    const breakersOpen = upstreams.breakers(actor.companyId).filter((b) => b.state !== 'closed').map((b) => b.server)
    return c.json({ ...overview, breakers_open: [...new Set(breakersOpen)] }, 200)
  })
}
