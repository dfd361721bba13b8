import type { OpenAPIHono } from '@hono/zod-openapi'
import type { MiddlewareHandler } from 'hono'
import { AgentConfigRecord } from '../../models/agent-config.ts'
import { malformedIdIsNotFound } from '../hooks.ts'
import { editableAgent, mine } from './owners.ts'
import { requireActor } from '../../auth/access.ts'
import { ApiError } from '../../errors.ts'
import type { ApiEnv } from '../../http/env.ts'
import { AVATAR_PATH, avatarFileRoute, deleteAgentAvatarRoute, deleteAvatarRoute, MAX_AVATAR_BYTES, putAgentAvatarRoute, putAvatarRoute } from './routes.ts'
import { avatarFile } from './serve.ts'
import { removeAvatar } from './store.ts'
import { uploadAvatar } from './upload.ts'

export { AVATAR_PATH, MAX_AVATAR_BYTES } from './routes.ts'

/**
 * PUT and DELETE /api/me/avatar, throttled like the other API writes (`apiRate`, the api app's one bucket), and
 * GET /static/avatars/{file}, which needs no sign-in.
 */
export function mountAvatars(app: OpenAPIHono<ApiEnv>, apiRate: MiddlewareHandler): void {
  app.use(AVATAR_PATH, apiRate)
  app.use('/api/agents/:id/avatar', apiRate)
  app.openapi(putAvatarRoute, uploadAvatar(MAX_AVATAR_BYTES, mine))
  app.openapi(deleteAvatarRoute, async (c) => {
    await removeAvatar(c.var.services, requireActor(c.var.actor), await mine(c))
    return c.body(null, 204)
  })
  app.openapi(putAgentAvatarRoute, uploadAvatar(MAX_AVATAR_BYTES, editableAgent), malformedIdIsNotFound(AgentConfigRecord.name))
  app.openapi(
    deleteAgentAvatarRoute,
    async (c) => {
      await removeAvatar(c.var.services, requireActor(c.var.actor), await editableAgent(c))
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
