import type { OpenAPIHono } from '@hono/zod-openapi'
import type { Context } from 'hono'
import { requireActor } from '../../auth/access.ts'
import { hasRole } from '../../auth/actor.ts'
import type { Runner } from '../../runners/contract.ts'
import type { ApiEnv } from '../../http/env.ts'
import { ApiError } from '../../errors.ts'
import { authApiKey, authCode, authLogin, authLogout, authStatus, curateModel, listModels, listRunners, refreshModels } from './routes.ts'

type Ctx = Context<ApiEnv>

function runnerOf(c: Ctx): Runner {
  const name = c.req.param('name') ?? ''
  const runner = c.var.services.plugins.runners.get(name)
  if (!runner) throw new ApiError('not_found', `There is no runner ${name}. Runners: ${[...c.var.services.plugins.runners.keys()].join(', ')}.`)
  return runner
}

/** Reading runners is for anyone signed in; changing one changes the platform, so superadmins only. */
function allow(c: Ctx, change = false): void {
  const actor = requireActor(c.var.actor)
  if (change && !hasRole(actor, 'superadmin')) throw new ApiError('forbidden', 'Only a superadmin may change a runner.')
}

function noInteractiveSignIn(runner: Runner): ApiError {
  return new ApiError(
    'conflict',
    runner.auth
      ? `The ${runner.name} runner signs in with an API key (SWITCHBOARD_PLUGIN_RUNNER_${runner.name.toUpperCase()}_API_KEY); it has no interactive sign-in.`
      : `The ${runner.name} runner needs no sign-in.`,
  )
}

/** The eight endpoints every runner answers, addressed by its name (DESIGN §4, Runners). */
export function mountRunners(app: OpenAPIHono<ApiEnv>): void {
  app.openapi(listRunners, (c) => {
    allow(c)
    return c.json({ data: c.var.services.plugins.runnerList() }, 200)
  })

  app.openapi(listModels, async (c) => {
    allow(c)
    return c.json({ data: await c.var.services.runnerModels.list(runnerOf(c).name) }, 200)
  })

  app.openapi(curateModel, async (c) => {
    allow(c, true)
    return c.json(await c.var.services.runnerModels.curate(runnerOf(c).name, c.req.valid('json')), 200)
  })

  app.openapi(refreshModels, async (c) => {
    allow(c, true)
    const runner = runnerOf(c)
    if (!runner.catalogue) throw new ApiError('conflict', `The ${runner.name} runner has no provider catalogue to refresh from.`)
    let catalogue
    try {
      catalogue = await runner.catalogue(AbortSignal.timeout(30_000))
    } catch (error) {
      throw new ApiError('unavailable', `The provider could not list its models: ${(error as Error).message}`)
    }
    const { models, ...counts } = await c.var.services.runnerModels.refresh(runner.name, catalogue)
    return c.json({ ...counts, data: models }, 200)
  })

  app.openapi(authStatus, async (c) => {
    allow(c)
    const runner = runnerOf(c)
    return c.json(runner.auth ? { method: runner.auth.method, configured: await runner.auth.configured() } : { method: 'none' as const, configured: true }, 200)
  })

  for (const signIn of [authLogin, authLogout, authCode]) {
    app.openapi(signIn, (c) => {
      allow(c, true)
      throw noInteractiveSignIn(runnerOf(c))
    })
  }

  app.openapi(authApiKey, async (c) => {
    allow(c, true)
    const runner = runnerOf(c)
    if (!runner.auth) throw noInteractiveSignIn(runner)
    await c.var.services.plugins.setRunnerSecret(runner.name, 'api_key', c.req.valid('json').api_key, requireActor(c.var.actor))
    return c.json({ configured: await runner.auth.configured() }, 200)
  })
}
