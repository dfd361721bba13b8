import type { OpenAPIHono } from '@hono/zod-openapi'
import type { Context, MiddlewareHandler } from 'hono'
import { hashSecret } from '../../auth/secrets.ts'
import { ApiError, type ErrorCode } from '../../errors.ts'
import type { ApiEnv } from '../../http/env.ts'
import { SCIM_TOKEN_PREFIX } from '../../models/scim-token.ts'
import * as people from '../../scim/people.ts'
import { discoveryRoutes, groupRoutes, SCIM_BASE, userRoutes } from './routes.ts'

const SCIM_JSON = 'application/scim+json; charset=utf-8'
const ERROR_SCHEMA = 'urn:ietf:params:scim:api:messages:2.0:Error'
/** A token's last use is written at most this often: a sync of thousands of people is not thousands of writes. */
const LAST_USED_EVERY_MS = 60_000

/** The SCIM error type RFC 7644 §3.12 names for each of our refusals, where it names one. */
const SCIM_TYPES: Partial<Record<ErrorCode, string>> = { conflict: 'uniqueness', validation_error: 'invalidValue', bad_request: 'invalidSyntax' }

/**
 * A SCIM client (one that sends or accepts application/scim+json) gets SCIM's error message instead of a problem:
 * the same status and words, in the shape it reads. Anyone else gets the problem+json the rest of the API answers.
 */
export const scimErrors: MiddlewareHandler<ApiEnv> = async (c, next) => {
  await next()
  const wantsScim = /scim\+json/i.test(`${c.req.header('accept') ?? ''} ${c.req.header('content-type') ?? ''}`)
  if (!wantsScim || !/problem\+json/.test(c.res.headers.get('content-type') ?? '')) return
  const problem = (await c.res.clone().json()) as { status: number; code: ErrorCode; detail: string; errors?: Array<{ path: string }> }
  const scimType = problem.errors?.some((e) => e.path === 'filter') ? 'invalidFilter' : SCIM_TYPES[problem.code]
  const headers = new Headers(c.res.headers)
  headers.set('content-type', SCIM_JSON)
  c.res = new Response(JSON.stringify({ schemas: [ERROR_SCHEMA], status: String(problem.status), ...(scimType ? { scimType } : {}), detail: problem.detail }), { status: problem.status, headers })
}

/** The company whose SCIM token the request bears; 401 otherwise. */
async function scopeOf(c: Context<ApiEnv>): Promise<people.ScimScope> {
  const token = /^Bearer\s+(\S+)$/i.exec(c.req.header('authorization') ?? '')?.[1]
  if (!token?.startsWith(SCIM_TOKEN_PREFIX)) throw new ApiError('unauthorized', 'Send a SCIM token of the company (Authorization: Bearer scim_…), made with POST /api/v1/ScimToken.')
  const { db, clock, config } = c.var.services
  const row = await db.selectFrom('scim_tokens').select(['id', 'company_id', 'last_used_at', 'made_by_role']).where('token_hash', '=', hashSecret(token)).executeTakeFirst()
  if (!row) throw new ApiError('unauthorized', 'This SCIM token is unknown or revoked.')
  const now = clock.now()
  if (!row.last_used_at || now - new Date(row.last_used_at).getTime() > LAST_USED_EVERY_MS) {
    await db.updateTable('scim_tokens').set({ last_used_at: new Date(now) }).where('id', '=', row.id).execute()
  }
  return { companyId: row.company_id, base: `${config.baseUrl}${SCIM_BASE}`, role: row.made_by_role }
}

/** A SCIM answer: its own media type, as RFC 7644 §8.1 asks. */
const scim = (c: Context, body: unknown, status: 200 | 201 = 200) => c.body(JSON.stringify(body), status, { 'content-type': SCIM_JSON }) as never

/** The body a SCIM client sent, as an object; any JSON that is not one is refused. */
function bodyOf(c: Context): Record<string, unknown> {
  const body = (c.req as unknown as { valid(target: 'json'): unknown }).valid('json')
  if (typeof body !== 'object' || body === null || Array.isArray(body)) throw new ApiError('validation_error', 'The body is a JSON object.', { errors: [{ path: '', message: 'not an object' }] })
  return body as Record<string, unknown>
}

const SERVICE_PROVIDER_CONFIG = {
  schemas: ['urn:ietf:params:scim:schemas:core:2.0:ServiceProviderConfig'],
  patch: { supported: true },
  bulk: { supported: false, maxOperations: 0, maxPayloadSize: 0 },
  filter: { supported: true, maxResults: people.MAX_COUNT },
  changePassword: { supported: false },
  sort: { supported: false },
  etag: { supported: false },
  authenticationSchemes: [{ type: 'oauthbearertoken', name: 'SCIM token', description: 'A bearer token of the company, made with POST /api/v1/ScimToken.', primary: true }],
}

const RESOURCE_TYPES = [
  { schemas: ['urn:ietf:params:scim:schemas:core:2.0:ResourceType'], id: 'User', name: 'User', endpoint: '/Users', schema: people.USER_SCHEMA },
  { schemas: ['urn:ietf:params:scim:schemas:core:2.0:ResourceType'], id: 'Group', name: 'Group', endpoint: '/Groups', schema: people.GROUP_SCHEMA },
]

/**
 * SCIM 2.0 provisioning at /scim/v2 (RFC 7644): the company's identity system creates, changes, deactivates and
 * removes its people, and keeps its groups, whose names give roles through the company's role mappings.
 */
export function mountScim(app: OpenAPIHono<ApiEnv>): void {
  const [config, types, schemas] = discoveryRoutes
  app.openapi(config!, async (c) => (await scopeOf(c), scim(c, SERVICE_PROVIDER_CONFIG)))
  app.openapi(types!, async (c) => (await scopeOf(c), scim(c, people.pageOf(RESOURCE_TYPES, 1, 10))))
  app.openapi(schemas!, async (c) => (await scopeOf(c), scim(c, people.pageOf([people.USER_SCHEMA, people.GROUP_SCHEMA].map((id) => ({ id, schemas: ['urn:ietf:params:scim:schemas:core:2.0:Schema'] })), 1, 10))))

  const writes = (c: Context<ApiEnv>) => c.var.services.writes
  // Every change of a person or group is one transaction; what it ends (sessions, tokens) is heard on every process.
  const inTransaction = <T>(c: Context<ApiEnv>, work: (scope: Parameters<Parameters<ReturnType<typeof writes>['unattended']>[0]>[0]) => Promise<T>) =>
    writes(c).unattended((scope) => c.var.services.db.transaction().execute((tx) => work({ ...scope, db: tx })), c.var.actor?.origin)

  app.openapi(userRoutes.list, async (c) => scim(c, await people.listUsers(c.var.services.db, await scopeOf(c), c.req.valid('query'))))
  app.openapi(userRoutes.read, async (c) => scim(c, await people.getUser(c.var.services.db, await scopeOf(c), c.req.valid('param').id)))
  app.openapi(userRoutes.create, async (c) => {
    const scope = await scopeOf(c)
    return scim(c, await inTransaction(c, (s) => people.createUser(s, scope, bodyOf(c))), 201)
  })
  app.openapi(userRoutes.replace, async (c) => {
    const scope = await scopeOf(c)
    return scim(c, await inTransaction(c, (s) => people.replaceUser(s, scope, c.req.valid('param').id, bodyOf(c))))
  })
  app.openapi(userRoutes.patch, async (c) => {
    const scope = await scopeOf(c)
    return scim(c, await inTransaction(c, (s) => people.patchUser(s, scope, c.req.valid('param').id, bodyOf(c))))
  })
  app.openapi(userRoutes.remove, async (c) => {
    const scope = await scopeOf(c)
    await inTransaction(c, (s) => people.deleteUser(s, scope, c.req.valid('param').id))
    return c.body(null, 204)
  })

  app.openapi(groupRoutes.list, async (c) => scim(c, await people.listGroups(c.var.services.db, await scopeOf(c), c.req.valid('query'))))
  app.openapi(groupRoutes.read, async (c) => scim(c, await people.getGroup(c.var.services.db, await scopeOf(c), c.req.valid('param').id)))
  app.openapi(groupRoutes.create, async (c) => {
    const scope = await scopeOf(c)
    return scim(c, await inTransaction(c, (s) => people.createGroup(s.db, scope, bodyOf(c))), 201)
  })
  app.openapi(groupRoutes.replace, async (c) => {
    const scope = await scopeOf(c)
    return scim(c, await inTransaction(c, (s) => people.replaceGroup(s.db, scope, c.req.valid('param').id, bodyOf(c))))
  })
  app.openapi(groupRoutes.patch, async (c) => {
    const scope = await scopeOf(c)
    return scim(c, await inTransaction(c, (s) => people.patchGroup(s.db, scope, c.req.valid('param').id, bodyOf(c))))
  })
  app.openapi(groupRoutes.remove, async (c) => {
    const scope = await scopeOf(c)
    await inTransaction(c, (s) => people.deleteGroup(s.db, scope, c.req.valid('param').id))
    return c.body(null, 204)
  })
}
