import type { Context, MiddlewareHandler } from 'hono'
import { requireActor } from '../../auth/access.ts'
import type { ApiEnv } from '../../http/env.ts'
import { AgentConfigRecord } from '../../models/agent-config.ts'
import { getRecord } from '../../models/records.ts'
import { isUuid } from '../../models/fields.ts'
import { ApiError } from '../../errors.ts'
import type { AvatarOwner } from './store.ts'

/** The signed-in person's own picture. */
export async function mine(c: Context<ApiEnv>): Promise<AvatarOwner> {
  return { user: requireActor(c.var.actor).userId }
}

/** The agent the path names, once the caller may edit it; another company's agent is a 404 like any record. */
export async function editableAgent(c: Context<ApiEnv>): Promise<AvatarOwner> {
  const { services } = c.var
  const actor = await services.access.authorize(c.var.actor, AgentConfigRecord, 'update')
  const id = c.req.param('id') ?? ''
  // Checked before the route's own validation runs: an id that is not one names no agent.
  if (!isUuid(id)) throw new ApiError('not_found', `No AgentConfigRecord with id ${id}.`)
  const { record } = await getRecord(services.db, actor, AgentConfigRecord, id.toLowerCase())
  return { agent: String(record.id) }
}

/**
 * Before anything of the body is judged: who may not change the agent, or cannot see it, hears that first (401,
 * 403, 404), so another company's agent answers as a missing one whatever is sent.
 */
export const agentFirst: MiddlewareHandler<ApiEnv> = async (c, next) => {
  await editableAgent(c)
  await next()
}
