import { createRoute, z } from '@hono/zod-openapi'
import { commonErrors, conflictErrors, notFoundError, signedIn, validationErrors } from '../responses.ts'

const params = z.object({ name: z.string().openapi({ param: { name: 'name', in: 'path' }, example: 'openai' }) })
const RunnerModel = z
  .object({
    id: z.string().openapi({ description: 'What an agent’s `model` names.' }),
    name: z.string(),
    api_id: z.string().openapi({ description: 'Sent to the provider and used for cost.' }),
    placeholder: z.boolean(),
    curated: z.boolean().openapi({ description: 'Set by hand: refreshes keep its name and api_id.' }),
    in_catalogue: z.boolean().openapi({ description: 'The provider listed it at the last refresh.' }),
  })
  .openapi('RunnerModel')
export const RunnerModelInput = z
  .object({ id: z.string().min(1).max(200), name: z.string().min(1).max(200), api_id: z.string().min(1).max(200), placeholder: z.boolean().default(false) })
  .strict()
  .openapi('RunnerModelInput')
const ok = (schema: z.ZodType, description: string) => ({ 200: { description, content: { 'application/json': { schema } } } })
const common = { tags: ['Runners'], security: signedIn }
const errors = { ...commonErrors, ...notFoundError }

export const listRunners = createRoute({
  ...common,
  method: 'get',
  path: '/api/runners',
  operationId: 'listRunners',
  summary: 'Every runner plugins registered, and whether its plugin is switched on',
  description: 'What an agent’s `runner` may name. A runner whose plugin is off refuses turns until a superadmin enables it.',
  responses: {
    ...ok(
      z.object({
        data: z.array(
          z
            .object({
              name: z.string().openapi({ example: 'echo' }),
              plugin: z.string().openapi({ description: 'The plugin that registered it.', example: 'runner-echo' }),
              enabled: z.boolean(),
            })
            .openapi('RunnerInfo'),
        ),
      }),
      'Runners.',
    ),
    ...commonErrors,
  },
})

export const listModels = createRoute({
  ...common,
  method: 'get',
  path: '/api/runners/{name}/models',
  operationId: 'listRunnerModels',
  summary: 'The runner’s model registry',
  request: { params },
  responses: { ...ok(z.object({ data: z.array(RunnerModel) }), 'Models.'), ...errors },
})

export const curateModel = createRoute({
  ...common,
  method: 'post',
  path: '/api/runners/{name}/models',
  operationId: 'curateRunnerModel',
  summary: 'Add or correct a model by hand (it becomes curated)',
  request: { params, body: { required: true, content: { 'application/json': { schema: RunnerModelInput } } } },
  responses: { ...ok(RunnerModel, 'The model as stored.'), ...errors, ...validationErrors },
})

export const refreshModels = createRoute({
  ...common,
  method: 'post',
  path: '/api/runners/{name}/models/refresh',
  operationId: 'refreshRunnerModels',
  summary: 'Merge the provider’s catalogue into the registry',
  description: 'New models are added, uncurated ones follow the catalogue, curated ones keep their name and api_id, and models the catalogue omits stay.',
  request: { params },
  responses: {
    ...ok(z.object({ added: z.int(), updated: z.int(), kept: z.int(), data: z.array(RunnerModel) }), 'What changed, and the registry now.'),
    ...errors,
    ...conflictErrors,
    503: { description: 'The provider could not list its models.' },
  },
})

export const authStatus = createRoute({
  ...common,
  method: 'get',
  path: '/api/runners/{name}/auth/status',
  operationId: 'runnerAuthStatus',
  summary: 'How the runner signs in to its provider, and whether that is set up',
  request: { params },
  responses: { ...ok(z.object({ method: z.enum(['none', 'api_key']), configured: z.boolean() }).openapi('RunnerAuthStatus'), 'Status.'), ...errors },
})

const signInRoute = (path: string, operationId: string, summary: string) =>
  createRoute({
    ...common,
    method: 'post',
    path: `/api/runners/{name}/auth/${path}`,
    operationId,
    summary,
    request: { params },
    responses: { 200: { description: 'Done.' }, ...errors, ...conflictErrors, 503: { description: 'Not possible on this instance yet.' } },
  })

export const authLogin = signInRoute('login', 'runnerAuthLogin', 'Start an interactive sign-in with the provider')
export const authLogout = signInRoute('logout', 'runnerAuthLogout', 'Sign out of the provider')
export const authCode = signInRoute('code', 'runnerAuthCode', 'Complete an interactive sign-in with its code')

export const authApiKey = createRoute({
  ...common,
  method: 'post',
  path: '/api/runners/{name}/auth/api-key',
  operationId: 'runnerAuthApiKey',
  summary: 'Set the provider API key (kept encrypted in the vault, never shown again)',
  description: 'A key set in the runner’s environment setting takes precedence over this one.',
  request: {
    params,
    body: { required: true, content: { 'application/json': { schema: z.object({ api_key: z.string().min(1).max(4096) }).strict().openapi('RunnerApiKey') } } },
  },
  responses: { ...ok(z.object({ configured: z.boolean() }), 'Stored.'), ...errors, ...validationErrors, ...conflictErrors },
})
