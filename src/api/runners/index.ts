import type { OpenAPIHono } from '@hono/zod-openapi'
import type { Context } from 'hono'
import { requireActor } from '../../auth/access.ts'
import { hasRole } from '../../auth/actor.ts'
import type { Runner } from '../../runners/contract.ts'
import type { ApiEnv } from '../../http/env.ts'
import { SignInRefused, type DeviceSignIn } from '../../runners/device-sign-in.ts'
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

/** How the runner signs in and whether it can reach its provider now; for a device sign-in, where it stands. */
async function authState(runner: Runner) {
  if (!runner.auth) return { method: 'none' as const, configured: true }
  const configured = await runner.auth.configured()
  if (runner.auth.method === 'api_key') return { method: 'api_key' as const, configured }
  return { method: 'device' as const, configured, ...(await runner.auth.device.status()) }
}

/** The runner's device sign-in; 409 for a runner that signs in another way. */
function deviceOf(runner: Runner): DeviceSignIn {
  if (runner.auth?.method !== 'device') throw noInteractiveSignIn(runner)
  return runner.auth.device
}

/** A step of the sign-in, its refusals as problems: nothing pending is a 409, a refusal a 422, an unreachable provider a 502. */
async function signingIn<T>(step: () => Promise<T>): Promise<T> {
  try {
    return await step()
  } catch (error) {
    if (error instanceof ApiError) throw error
    if (error instanceof SignInRefused) throw new ApiError(error.kind === 'nothing_pending' ? 'conflict' : 'validation_error', error.message, error.kind === 'refused' ? { errors: [{ path: 'provider', message: 'refused' }] } : {})
    throw new ApiError('bad_gateway', `The provider’s sign-in could not be reached: ${(error as Error).message}`)
  }
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
    return c.json(await authState(runnerOf(c)), 200)
  })

  app.openapi(authLogin, async (c) => {
    allow(c, true)
    return c.json(await signingIn(() => deviceOf(runnerOf(c)).begin()), 200)
  })
  app.openapi(authCode, async (c) => {
    allow(c, true)
    const runner = runnerOf(c)
    await signingIn(() => deviceOf(runner).check())
    return c.json(await authState(runner), 200)
  })
  app.openapi(authLogout, async (c) => {
    allow(c, true)
    const runner = runnerOf(c)
    await deviceOf(runner).signOut()
    return c.json(await authState(runner), 200)
  })

  app.openapi(authApiKey, async (c) => {
    allow(c, true)
    const runner = runnerOf(c)
    if (!runner.auth) throw noInteractiveSignIn(runner)
    await c.var.services.plugins.setRunnerSecret(runner.name, 'api_key', c.req.valid('json').api_key, requireActor(c.var.actor))
    return c.json({ configured: await runner.auth.configured() }, 200)
  })
}
