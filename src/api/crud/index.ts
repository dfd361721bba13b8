import type { OpenAPIHono } from '@hono/zod-openapi'
import type { Context } from 'hono'
import type { Model } from '../../models/define.ts'
import type { ApiEnv } from '../../http/env.ts'
import { malformedIdIsNotFound } from '../hooks.ts'
import { createHandler, deleteHandler, listHandler, patchHandler, readHandler, replaceHandler } from './handlers.ts'
import { crudRoutes } from './routes.ts'
import { ApiError } from '../../errors.ts'

/** Mounts `/api/v1/{model}` for every model of the registry. */
export function mountCrud(app: OpenAPIHono<ApiEnv>, models: Iterable<Model>): void {
  for (const model of models) {
    const routes = crudRoutes(model)
    const hook = malformedIdIsNotFound(model.name)
    // The generic handlers serve every model; the per-model route schemas shape the document and the validation.
    app.openapi(routes.list, (c) => listHandler(c, model), hook)
    app.openapi(routes.read, (c) => readHandler(c, model), hook)
    if (model.writtenElsewhere) {
      refuseWrites(app, model, model.writtenElsewhere)
      continue
    }
    if (model.createdElsewhere) refuseCreate(app, model, model.createdElsewhere)
    else app.openapi(routes.create, (c) => createHandler(c, model), hook)
    app.openapi(routes.replace, (c) => replaceHandler(c, model), hook)
    app.openapi(routes.patch, (c) => patchHandler(c, model), hook)
    app.openapi(routes.remove, (c) => deleteHandler(c, model), hook)
  }
}

/** A model only the platform writes: every write is a 405, after 401 and 403 for who may not even read it. */
function refuseWrites(app: OpenAPIHono<ApiEnv>, model: Model, how: string): void {
  const refuse = async (c: Context<ApiEnv>) => {
    await c.var.services.access.authorize(c.var.actor, model, 'read')
    throw new ApiError('method_not_allowed', how, { headers: { Allow: 'GET, HEAD' } })
  }
  app.post(`/api/v1/${model.name}`, refuse)
  for (const method of ['PUT', 'PATCH', 'DELETE']) app.on(method, `/api/v1/${model.name}/:id`, refuse)
}

/** A model whose records come from elsewhere: who may not create at all hears that first (401, 403), then how to. */
function refuseCreate(app: OpenAPIHono<ApiEnv>, model: Model, how: string): void {
  app.post(`/api/v1/${model.name}`, async (c) => {
    await c.var.services.access.authorize(c.var.actor, model, 'create')
    throw new ApiError('method_not_allowed', how, { headers: { Allow: 'GET, HEAD' } })
  })
}
