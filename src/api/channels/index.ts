import type { OpenAPIHono } from '@hono/zod-openapi'
import { requireActor } from '../../auth/access.ts'
import { channelStates } from '../../channels/status.ts'
import { issueLinkCode } from '../../channels/link-codes.ts'
import { scoped } from '../../db/scoped.ts'
import { ApiError } from '../../errors.ts'
import type { ApiEnv } from '../../http/env.ts'
import { AgentConfigRecord } from '../../models/agent-config.ts'
import { getRecord, listRecords } from '../../models/records.ts'
import { UserPlatform } from '../../models/user.ts'
import { malformedIdIsNotFound } from '../hooks.ts'
import { channelStatesRoute, linkCodeRoute, myPlatformsRoute, unlinkPlatformRoute } from './routes.ts'

/** A person working in a company: links belong to one. */
function member(c: { var: ApiEnv['Variables'] }) {
  const actor = requireActor(c.var.actor)
  if (actor.companyId === null) throw new ApiError('forbidden', 'Chat platform accounts are linked within a company, and you are not a member of any.')
  return { ...actor, companyId: actor.companyId }
}

/** The agents' channel states for the console, and the links between people and their platform accounts. */
export function mountChannels(app: OpenAPIHono<ApiEnv>): void {
  app.openapi(channelStatesRoute, async (c) => {
    const { services } = c.var
    const actor = await services.access.authorize(c.var.actor, AgentConfigRecord, 'update')
    // Through the scoped builder: another company's agent is a 404 like any record.
    const { record } = await getRecord(services.db, actor, AgentConfigRecord, c.req.valid('param').id.toLowerCase())
    const { platform } = c.req.valid('query')
    return c.json({ data: await channelStates(services.channels, { id: String(record.id), channels: record.channels as never }, platform) }, 200)
  }, malformedIdIsNotFound(AgentConfigRecord.name))

  app.openapi(linkCodeRoute, async (c) => {
    const actor = member(c)
    return c.json(await issueLinkCode(c.var.services.db, c.var.services.clock, actor), 201)
  })

  app.openapi(myPlatformsRoute, async (c) => {
    const actor = member(c)
    const filters = [{ field: 'user_id', op: 'eq' as const, value: actor.userId }]
    const { data } = await listRecords(c.var.services.db, actor, UserPlatform, { filters, order: [{ field: 'created_at', direction: 'asc' }], limit: 100, offset: 0, count: false })
    return c.json({ data }, 200)
  })

  app.openapi(unlinkPlatformRoute, async (c) => {
    const actor = member(c)
    const deleted = await scoped(c.var.services.db, actor)
      .deleteFrom(UserPlatform)
      .where('id', '=', c.req.valid('param').id.toLowerCase())
      .where('user_id', '=', actor.userId)
      .returning('id')
      .executeTakeFirst()
    if (!deleted) throw new ApiError('not_found', 'You have no such link.')
    return c.body(null, 204)
  }, malformedIdIsNotFound(UserPlatform.name))
}
