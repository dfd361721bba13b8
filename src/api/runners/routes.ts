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

const RunnerAuthStatus = z
  .object({
    method: z.enum(['none', 'api_key', 'device']),
    configured: z.boolean().openapi({ description: 'The runner can reach its provider now (a key is set, or it is signed in).' }),
    state: z.enum(['signed_out', 'pending', 'signed_in']).optional().openapi({ description: 'device: where the sign-in stands.' }),
    user_code: z.string().nullable().optional().openapi({ description: 'device, pending: the code to enter at the provider.' }),
    verification_uri: z.string().nullable().optional(),
    expires_at: z.string().nullable().optional().openapi({ description: 'device, signed in: when the access token ends (it is refreshed before).' }),
    problem: z.string().nullable().optional().openapi({ description: 'device: why the last sign-in ended without tokens (declined, expired, refused refresh).' }),
  })
  .openapi('RunnerAuthStatus')

export const authStatus = createRoute({
  ...common,
  method: 'get',
  path: '/api/runners/{name}/auth/status',
  operationId: 'runnerAuthStatus',
  summary: 'How the runner signs in to its provider, and whether that is set up',
  request: { params },
  responses: { ...ok(RunnerAuthStatus, 'Status.'), ...errors },
})

const signInRoute = (path: string, operationId: string, summary: string, description: string, answer: z.ZodType, what: string) =>
  createRoute({
    ...common,
    method: 'post',
    path: `/api/runners/{name}/auth/${path}`,
    operationId,
    summary,
    description: `${description} Superadmins only. 409 for a runner that signs in another way (an API key, or nothing).`,
    request: { params },
    responses: { ...ok(answer, what), ...errors, 409: conflictErrors[409], 422: validationErrors[422], 502: { description: 'The provider’s OAuth endpoint could not be reached or answered nonsense.' } },
  })

export const authLogin = signInRoute(
  'login',
  'runnerAuthLogin',
  'Start the provider’s device sign-in (OAuth device grant, RFC 8628)',
  'Answers the code to enter and where: someone signs in at the provider with it, then auth/code completes the sign-in.',
  z.object({ user_code: z.string(), verification_uri: z.string(), verification_uri_complete: z.string().nullable(), expires_in: z.int(), interval: z.int() }).openapi('RunnerDeviceCode'),
  'The code and where to enter it.',
)
export const authCode = signInRoute(
  'code',
  'runnerAuthCode',
  'Complete the device sign-in: ask the provider whether the code was entered',
  'Asks once; call again after `interval` seconds while the state is `pending`. Signed in, the tokens are kept in the vault and refreshed as they end.',
  RunnerAuthStatus,
  'Where the sign-in stands now.',
)
export const authLogout = signInRoute('logout', 'runnerAuthLogout', 'Sign out of the provider', 'Forgets the tokens (and any sign-in waiting).', RunnerAuthStatus, 'Signed out.')

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
