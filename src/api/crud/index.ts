import type { OpenAPIHono } from '@hono/zod-openapi'
import type { Context } from 'hono'
import type { Model } from '../../models/define.ts'
import type { ApiEnv } from '../../http/env.ts'
import { createHandler, deleteHandler, listHandler, patchHandler, readHandler, replaceHandler } from './handlers.ts'
import { crudRoutes } from './routes.ts'

type Ctx = Context<ApiEnv>

/** Mounts `/api/v1/{model}` for every model of the registry. */
export function mountCrud(app: OpenAPIHono<ApiEnv>, models: Iterable<Model>): void {
  for (const model of models) {
    const routes = crudRoutes(model)
    // The generic handlers serve every model; the per-model route types only shape the document.
    app.openapi(routes.list, ((c: Ctx) => listHandler(c, model)) as never)
    app.openapi(routes.read, ((c: Ctx) => readHandler(c, model)) as never)
    app.openapi(routes.create, ((c: Ctx) => createHandler(c, model)) as never)
    app.openapi(routes.replace, ((c: Ctx) => replaceHandler(c, model)) as never)
    app.openapi(routes.patch, ((c: Ctx) => patchHandler(c, model)) as never)
    app.openapi(routes.remove, ((c: Ctx) => deleteHandler(c, model)) as never)
  }
}
