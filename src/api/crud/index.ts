import type { OpenAPIHono } from '@hono/zod-openapi'
import type { Model } from '../../models/define.ts'
import type { ApiEnv } from '../../http/env.ts'
import { malformedIdIsNotFound } from '../hooks.ts'
import { createHandler, deleteHandler, listHandler, patchHandler, readHandler, replaceHandler } from './handlers.ts'
import { crudRoutes } from './routes.ts'

/** Mounts `/api/v1/{model}` for every model of the registry. */
export function mountCrud(app: OpenAPIHono<ApiEnv>, models: Iterable<Model>): void {
  for (const model of models) {
    const routes = crudRoutes(model)
    const hook = malformedIdIsNotFound(model.name)
    // The generic handlers serve every model; the per-model route schemas shape the document and the validation.
    app.openapi(routes.list, (c) => listHandler(c, model), hook)
    app.openapi(routes.read, (c) => readHandler(c, model), hook)
    app.openapi(routes.create, (c) => createHandler(c, model), hook)
    app.openapi(routes.replace, (c) => replaceHandler(c, model), hook)
    app.openapi(routes.patch, (c) => patchHandler(c, model), hook)
    app.openapi(routes.remove, (c) => deleteHandler(c, model), hook)
  }
}
