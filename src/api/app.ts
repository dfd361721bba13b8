import { OpenAPIHono } from '@hono/zod-openapi'
import { bodyLimit } from 'hono/body-limit'
import { requestId } from 'hono/request-id'
import type { Services } from '../services.ts'
import type { ApiEnv } from './context.ts'
import { mountCrud } from './crud/index.ts'
import { mountDocs } from './docs/index.ts'
import { ApiError, problemResponse, toApiError, zodErrors } from './errors.ts'
import { createNotFoundHandler } from './not-found.ts'
import { validationError } from '../models/validation.ts'

export const API_VERSION = '0.1.0'

const JSON_BODY = /^application\/([a-z0-9.+-]+\+)?json\s*(;|$)/i

/** The api app (port 8000): REST API, docs, and later the MCP gateway and plugin routers. */
export function createApiApp(services: Services): OpenAPIHono<ApiEnv> {
  const app = new OpenAPIHono<ApiEnv>({
    // Query and path problems are the request's form (400); body problems are its content (422).
    defaultHook: (result) => {
      if (result.success) return
      if (result.target === 'json') throw validationError(result.error)
      throw new ApiError('bad_request', `The ${result.target} is not valid.`, { errors: zodErrors(result.error, result.target) })
    },
  })

  app.use(requestId())
  app.use(async (c, next) => {
    c.set('services', services)
    c.set('actor', services.developmentActor)
    await next()
  })
  app.use(
    bodyLimit({
      maxSize: services.config.bodyLimitBytes,
      onError: () => {
        throw new ApiError('payload_too_large', `The body is larger than ${services.config.bodyLimitBytes} bytes.`)
      },
    }),
  )
  app.use('/api/v1/*', async (c, next) => {
    if (['POST', 'PUT', 'PATCH'].includes(c.req.method) && !JSON_BODY.test(c.req.header('content-type') ?? '')) {
      throw new ApiError('unsupported_media_type', 'Send the body as JSON, with Content-Type: application/json.')
    }
    await next()
  })

  mountCrud(app, services.models.values())
  mountDocs(app, services.config, API_VERSION)

  app.notFound(createNotFoundHandler(() => app.routes, () => [...services.models.keys()]))
  app.onError((error, c) => {
    const problem = toApiError(error)
    if (problem.status >= 500) {
      services.log.error('request failed', { request_id: c.get('requestId'), method: c.req.method, path: c.req.path, error: String((error as Error)?.stack ?? error) })
    }
    return problemResponse(c, problem)
  })
  return app
}
