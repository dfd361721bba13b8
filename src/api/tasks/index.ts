import type { OpenAPIHono } from '@hono/zod-openapi'
import type { ApiEnv } from '../../http/env.ts'
import { BackgroundTask } from '../../models/background-task.ts'
import { cancelTaskRoute, startTaskRoute } from './routes.ts'

/** POST /api/tasks and /api/tasks/cancel: background tasks for scripts, with the caller's own MCP permissions. */
export function mountTasks(app: OpenAPIHono<ApiEnv>): void {
  app.openapi(startTaskRoute, async (c) => {
    const { services } = c.var
    const actor = await services.access.authorize(c.var.actor, BackgroundTask, 'create')
    const { tool, arguments: args } = c.req.valid('json')
    const task = await services.tasks.run({ user: { userId: actor.userId, companyId: actor.companyId }, tool, arguments: args })
    c.header('Location', `/api/v1/BackgroundTask/${task.id}`)
    return c.json(task, 202)
  })

  app.openapi(cancelTaskRoute, async (c) => {
    const { services } = c.var
    const actor = await services.access.authorize(c.var.actor, BackgroundTask, 'read')
    return c.json(await services.tasks.cancel({ userId: actor.userId, companyId: actor.companyId }, c.req.valid('json').task_id), 200)
  })
}
