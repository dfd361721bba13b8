import { createRoute, z } from '@hono/zod-openapi'
import { commonErrors, notFoundError, signedIn, validationErrors } from '../responses.ts'

const scope = z.enum(['global', 'company', 'user', 'agent']).openapi({
  description: 'global: superadmins. company: admins of that company. user: that user. agent: admins of the agent’s company.',
})
const ownerId = z.uuid().optional().openapi({ description: 'The company, user or agent; defaults to your company (company) or yourself (user).' })
const name = z.string().regex(/^[A-Za-z0-9_.\-/]{1,128}$/, 'letters, digits and _ . - /').openapi({ example: 'slack/bot_token' })

const SecretInfo = z
  .object({ id: z.uuid(), scope, owner_id: z.uuid().nullable(), name: z.string(), version: z.int(), updated_at: z.iso.datetime() })
  .openapi('SecretInfo', { description: 'A secret’s identity and version. Its value is never returned.' })
export const SecretRefInput = z.object({ scope, owner_id: ownerId, name }).strict()
const common = { tags: ['Vault'], security: signedIn }

export const listSecrets = createRoute({
  ...common,
  method: 'get',
  path: '/api/vault/secrets',
  operationId: 'listSecrets',
  summary: 'Names and versions of the secrets in a scope (never values)',
  request: { query: z.object({ scope, owner_id: ownerId, prefix: z.string().max(128).optional() }) },
  responses: { 200: { description: 'Secrets.', content: { 'application/json': { schema: z.object({ data: z.array(SecretInfo) }) } } }, ...commonErrors, ...notFoundError },
})

export const setSecret = createRoute({
  ...common,
  method: 'put',
  path: '/api/vault/secrets',
  operationId: 'setSecret',
  summary: 'Set or rotate a secret; the value is encrypted and never shown again',
  request: {
    body: {
      required: true,
      content: { 'application/json': { schema: SecretRefInput.extend({ value: z.string().min(1).max(65_536) }).strict().openapi('SecretInput') } },
    },
  },
  responses: { 200: { description: 'Stored.', content: { 'application/json': { schema: SecretInfo } } }, ...commonErrors, ...notFoundError, ...validationErrors },
})

export const deleteSecret = createRoute({
  ...common,
  method: 'delete',
  path: '/api/vault/secrets',
  operationId: 'deleteSecret',
  summary: 'Delete a secret',
  request: { body: { required: true, content: { 'application/json': { schema: SecretRefInput.openapi('SecretRef') } } } },
  responses: { 204: { description: 'Deleted.' }, ...commonErrors, ...notFoundError, ...validationErrors },
})

const vaultToken = [{ vaultToken: [] as string[] }]

export const vaultGet = createRoute({
  tags: ['Vault'],
  security: vaultToken,
  method: 'post',
  path: '/api/vault/get',
  operationId: 'vaultGet',
  summary: 'Internal, for MCP subprocesses: read a secret the token was issued for',
  description: 'Served to vault tokens only on the unix socket handed to the subprocess (SWITCHBOARD_VAULT_SOCKET); on this port a vault token is refused with 403.',
  request: { body: { required: true, content: { 'application/json': { schema: z.object({ name }).strict() } } } },
  responses: {
    200: { description: 'The value.', content: { 'application/json': { schema: z.object({ name: z.string(), value: z.string() }) } } },
    ...commonErrors,
    ...notFoundError,
    ...validationErrors,
  },
})

export const vaultList = createRoute({
  tags: ['Vault'],
  security: vaultToken,
  method: 'post',
  path: '/api/vault/list',
  operationId: 'vaultList',
  summary: 'Internal, for MCP subprocesses: the names the token may read',
  description: 'Served to vault tokens only on the unix socket handed to the subprocess (SWITCHBOARD_VAULT_SOCKET); on this port a vault token is refused with 403.',
  request: { body: { required: true, content: { 'application/json': { schema: z.object({ prefix: z.string().max(128).default('') }).strict() } } } },
  responses: {
    200: { description: 'Names.', content: { 'application/json': { schema: z.object({ names: z.array(z.string()) }) } } },
    ...commonErrors,
    ...validationErrors,
  },
})
