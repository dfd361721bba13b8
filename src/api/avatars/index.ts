import type { OpenAPIHono } from '@hono/zod-openapi'
import type { Context, MiddlewareHandler } from 'hono'
import { AgentConfigRecord } from '../../models/agent-config.ts'
import { getRecord } from '../../models/records.ts'
import { malformedIdIsNotFound } from '../hooks.ts'
import { requireActor } from '../../auth/access.ts'
import { ApiError } from '../../errors.ts'
import type { ApiEnv } from '../../http/env.ts'
import { AVATAR_PATH, avatarFileRoute, deleteAgentAvatarRoute, deleteAvatarRoute, MAX_AVATAR_BYTES, putAgentAvatarRoute, putAvatarRoute } from './routes.ts'
import { avatarFile } from './serve.ts'
import { removeAvatar, type AvatarOwner } from './store.ts'
import { uploadAvatar } from './upload.ts'

export { AVATAR_PATH, MAX_AVATAR_BYTES } from './routes.ts'

/** The agent the path names, once the caller may edit it; another company's agent is a 404 like any record. */
async function editableAgent(c: Context<ApiEnv>): Promise<AvatarOwner> {
  const { services } = c.var
  const actor = await services.access.authorize(c.var.actor, AgentConfigRecord, 'update')
  const { record } = await getRecord(services.db, actor, AgentConfigRecord, (c.req.param('id') ?? '').toLowerCase())
  return { agent: String(record.id) }
}

/**
 * PUT and DELETE /api/me/avatar, throttled like the other API writes (`apiRate`, the api app's one bucket), and
 * GET /static/avatars/{file}, which needs no sign-in.
 */
export function mountAvatars(app: OpenAPIHono<ApiEnv>, apiRate: MiddlewareHandler): void {
  app.use(AVATAR_PATH, apiRate)
  app.use('/api/agents/:id/avatar', apiRate)
  const mine = async (c: Context<ApiEnv>): Promise<AvatarOwner> => ({ user: requireActor(c.var.actor).userId })
  app.openapi(putAvatarRoute, uploadAvatar(MAX_AVATAR_BYTES, mine))
  app.openapi(deleteAvatarRoute, async (c) => {
    await removeAvatar(c.var.services.db, requireActor(c.var.actor), await mine(c))
    return c.body(null, 204)
  })
  app.openapi(putAgentAvatarRoute, uploadAvatar(MAX_AVATAR_BYTES, editableAgent), malformedIdIsNotFound(AgentConfigRecord.name))
  app.openapi(
    deleteAgentAvatarRoute,
    async (c) => {
      await removeAvatar(c.var.services.db, requireActor(c.var.actor), await editableAgent(c))
      return c.body(null, 204)
    },
    malformedIdIsNotFound(AgentConfigRecord.name),
  )
  app.openapi(avatarFileRoute, async (c) => {
    const { file } = c.req.valid('param')
    const found = await avatarFile(c, c.var.services.db, file)
    if (!found) throw new ApiError('not_found', 'No avatar has this name.')
    return found
  })
}
