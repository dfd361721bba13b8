import type { OpenAPIHono } from '@hono/zod-openapi'
import type { Context } from 'hono'
import { unauthorized } from '../../auth/access.ts'
import { hasRole } from '../../auth/actor.ts'
import type { VaultScope } from '../../db/schema.ts'
import { AgentConfigRecord } from '../../models/agent-config.ts'
import { getRecord } from '../../models/records.ts'
import type { SecretRef } from '../../vault/vault.ts'
import type { ApiEnv } from '../../http/env.ts'
import { ApiError } from '../../errors.ts'
import { deleteSecret, listSecrets, setSecret, vaultGet, vaultList } from './routes.ts'

type Ctx = Context<ApiEnv>

/**
 * Who may manage which secrets: global ones are the platform's (superadmins); a company's are its admins'; a
 * user's are their own; an agent's are its company admins'. Anything outside the caller's reach answers 404.
 */
async function secretRef(c: Ctx, input: { scope: VaultScope; owner_id?: string; name: string }): Promise<SecretRef> {
  const actor = c.var.actor
  if (!actor) throw unauthorized()
  const { db } = c.var.services
  const ref = (ownerId: string | null): SecretRef => ({ scope: input.scope, ownerId, name: input.name })
  switch (input.scope) {
    case 'global':
      if (!actor.isSuperadmin) throw new ApiError('forbidden', 'Only a superadmin manages global secrets.')
      return ref(null)
    case 'company': {
      const company = input.owner_id ?? actor.companyId
      if (!company) throw new ApiError('forbidden', 'You are not a member of any company.')
      const exists = actor.isSuperadmin ? await db.selectFrom('companies').select('id').where('id', '=', company).executeTakeFirst() : company === actor.companyId
      if (!exists) throw new ApiError('not_found', `No company ${company}.`)
      if (!hasRole(actor, 'admin')) throw new ApiError('forbidden', 'Only company admins manage company secrets.')
      return ref(company)
    }
    case 'user': {
      const user = input.owner_id ?? actor.userId
      const exists = user === actor.userId || (actor.isSuperadmin && (await db.selectFrom('users').select('id').where('id', '=', user).executeTakeFirst()))
      if (!exists) throw new ApiError('not_found', `No user ${user}.`)
      return ref(user)
    }
    case 'agent': {
      if (!input.owner_id) throw new ApiError('validation_error', 'An agent secret names its agent.', { errors: [{ path: 'owner_id', message: 'required for agent secrets' }] })
      await c.var.services.access.authorize(actor, AgentConfigRecord, 'update')
      await getRecord(db, actor, AgentConfigRecord, input.owner_id)
      return ref(input.owner_id)
    }
  }
}

/** The secrets an MCP subprocess's token was issued for; 401 for a missing, unknown or expired token. */
function tokenScope(c: Ctx): SecretRef[] {
  const token = /^Bearer\s+(sbv_\S+)$/i.exec(c.req.header('authorization') ?? '')?.[1]
  const scope = token ? c.var.services.vaultTokens.scope(token) : undefined
  if (!scope) throw new ApiError('unauthorized', 'Send the vault token this subprocess was started with: Authorization: Bearer sbv_…')
  return scope
}

export function mountVault(app: OpenAPIHono<ApiEnv>): void {
  app.openAPIRegistry.registerComponent('securitySchemes', 'vaultToken', {
    type: 'http',
    scheme: 'bearer',
    description: 'A short-lived sbv_ token given to an MCP subprocess, scoped to the secrets it may read.',
  })

  app.openapi(listSecrets, async (c) => {
    const { scope, owner_id, prefix } = c.req.valid('query')
    const ref = await secretRef(c, { scope, owner_id, name: 'x' })
    return c.json({ data: await c.var.services.vault.list(ref.scope, ref.ownerId, prefix ?? '') }, 200)
  })

  app.openapi(setSecret, async (c) => {
    const { value, ...input } = c.req.valid('json')
    return c.json(await c.var.services.vault.set(await secretRef(c, input), value), 200)
  })

  app.openapi(deleteSecret, async (c) => {
    const input = c.req.valid('json')
    if (!(await c.var.services.vault.delete(await secretRef(c, input)))) throw new ApiError('not_found', `No secret ${input.name} there.`)
    return c.body(null, 204)
  })

  app.openapi(vaultGet, async (c) => {
    const { name } = c.req.valid('json')
    // A name outside the token's scope is "not there", exactly like a name that does not exist. The token's
    // places for a name are tried in order (the user's own before the company's).
    for (const ref of tokenScope(c).filter((r) => r.name === name)) {
      const value = await c.var.services.vault.get(ref)
      if (value !== undefined) return c.json({ name, value }, 200)
    }
    throw new ApiError('not_found', `No secret ${name} for this token.`)
  })

  app.openapi(vaultList, (c) => {
    const { prefix } = c.req.valid('json')
    const names = new Set(tokenScope(c).map((r) => r.name).filter((n) => n.startsWith(prefix)))
    return c.json({ names: [...names].sort() }, 200)
  })
}
