import type { OpenAPIHono } from '@hono/zod-openapi'
import type { Context } from 'hono'
import { requireActor } from '../../auth/access.ts'
import { manageableSecret, type SecretPlace } from '../../vault/access.ts'
import { cameOverVaultSocket } from '../../vault/socket.ts'
import type { SecretRef } from '../../vault/vault.ts'
import type { ApiEnv } from '../../http/env.ts'
import { ApiError } from '../../errors.ts'
import { deleteSecret, listSecrets, setSecret, vaultGet, vaultList } from './routes.ts'

type Ctx = Context<ApiEnv>

function secretRef(c: Ctx, place: SecretPlace): Promise<SecretRef> {
  const { db, access } = c.var.services
  return manageableSecret(db, access, requireActor(c.var.actor), place)
}

/**
 * The secrets an MCP subprocess's token was issued for; 401 for a missing, unknown or expired token, and 403 for a
 * token presented anywhere but on the vault socket: a leaked token must not open the vault from the network.
 */
async function tokenScope(c: Ctx): Promise<SecretRef[]> {
  const scope = await c.var.services.vaultTokens.scopeOfBearer(c.req.header('authorization'))
  if (!scope) throw new ApiError('unauthorized', 'Send the vault token this subprocess was started with: Authorization: Bearer sbv_…')
  if (!cameOverVaultSocket(c.env)) throw new ApiError('forbidden', 'Vault tokens work only on the vault socket handed to the subprocess (SWITCHBOARD_VAULT_SOCKET), never on this port.')
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
    const ref = await secretRef(c, input)
    const stored = await c.var.services.vault.set(ref, value, requireActor(c.var.actor))
    return c.json(stored, 200)
  })

  app.openapi(deleteSecret, async (c) => {
    const input = c.req.valid('json')
    const ref = await secretRef(c, input)
    if (!(await c.var.services.vault.delete(ref, requireActor(c.var.actor)))) throw new ApiError('not_found', `No secret ${input.name} there.`)
    return c.body(null, 204)
  })

  app.openapi(vaultGet, async (c) => {
    const { name } = c.req.valid('json')
    // A name outside the token's scope is "not there", exactly like a name that does not exist. The token's
    // places for a name are tried in order (the user's own before the company's).
    for (const ref of (await tokenScope(c)).filter((r) => r.name === name)) {
      const value = await c.var.services.vault.get(ref)
      if (value !== undefined) return c.json({ name, value }, 200)
    }
    throw new ApiError('not_found', `No secret ${name} for this token.`)
  })

  app.openapi(vaultList, async (c) => {
    const { prefix } = c.req.valid('json')
    const names = new Set((await tokenScope(c)).map((r) => r.name).filter((n) => n.startsWith(prefix)))
    return c.json({ names: [...names].sort() }, 200)
  })
}
