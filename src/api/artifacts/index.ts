import type { OpenAPIHono } from '@hono/zod-openapi'
import type { Context, MiddlewareHandler } from 'hono'
import type { Versioned } from '../../models/records.ts'
import type { ArtifactRecord } from '../../artifacts/artifacts.ts'
import { Artifact } from '../../models/artifact.ts'
import type { ApiEnv } from '../../http/env.ts'
import { etag } from '../etag.ts'
import { malformedIdIsNotFound } from '../hooks.ts'
import { actionRoute, createArtifactRoute, shareRoute, type ArtifactAction } from './routes.ts'

const ACTIONS: readonly ArtifactAction[] = ['pin', 'unpin', 'revoke', 'unrevoke']

function withEtag(c: Context<ApiEnv>, { version }: Versioned<ArtifactRecord>): void {
  c.header('ETag', etag(version))
}

/**
 * POST /api/artifacts and the state changes of one artifact, throttled like the other API writes. Each checks the
 * model's ACL for its verb; the service answers 404 for an artifact that is not the caller's.
 */
export function mountArtifacts(app: OpenAPIHono<ApiEnv>, apiRate: MiddlewareHandler): void {
  // `/api/artifacts/*` names `/api/artifacts` too.
  app.use('/api/artifacts/*', apiRate)
  const hook = malformedIdIsNotFound(Artifact.name)

  app.openapi(createArtifactRoute, async (c) => {
    const { access, artifacts } = c.var.services
    const actor = await access.authorize(c.var.actor, Artifact, 'create')
    const created = await artifacts.create(actor, c.req.valid('json'))
    withEtag(c, created)
    c.header('Location', `/api/v1/Artifact/${created.record.id}`)
    return c.json(created.record, 201)
  })

  for (const action of ACTIONS) {
    app.openapi(
      actionRoute(action),
      async (c) => {
        const { access, artifacts } = c.var.services
        const actor = await access.authorize(c.var.actor, Artifact, 'update')
        const changed = await artifacts[action](actor, c.req.valid('param').id)
        withEtag(c, changed)
        return c.json(changed.record, 200)
      },
      hook,
    )
  }

  app.openapi(
    shareRoute,
    async (c) => {
      const { access, artifacts } = c.var.services
      const actor = await access.authorize(c.var.actor, Artifact, 'read')
      // The body is optional: an empty one asks for the default expiry.
      const body = c.req.header('content-type') ? c.req.valid('json') : {}
      return c.json(await artifacts.shareLink(actor, c.req.valid('param').id, body?.expires_in_days), 200)
    },
    hook,
  )
}
