import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { VaultTokens } from '../../src/vault/tokens.ts'
import { startTestPlatform, type Principal, type TestPlatform } from '../helpers/platform.ts'
import { expectProblem } from '../helpers/problem.ts'
import { overVaultSocket } from '../helpers/vault.ts'
import { stat } from 'node:fs/promises'
import { systemClock } from '../../src/clock.ts'

let p: TestPlatform
let admin: Principal
let member: Principal
let outsider: Principal

beforeAll(async () => {
  p = await startTestPlatform()
  admin = await p.createUser({ role: 'admin' })
  member = await p.createUser({ role: 'member' })
  outsider = await p.createUser({ companyId: await p.createCompany(), role: 'owner' })
})
afterAll(() => p.close())

const put = (json: Record<string, unknown>, as: Principal | null = p.root) => p.call('PUT', '/api/vault/secrets', { json, as })

describe('managing secrets', () => {
  test('set, rotate, list and delete; no answer ever holds the value', async () => {
    const first = await put({ scope: 'company', name: 'crm/api_key', value: 'crm-secret-1' }, admin)
    expect(first.status).toBe(200)
    expect(first.body).toMatchObject({ scope: 'company', owner_id: p.root.companyId, name: 'crm/api_key', version: 1 })
    const rotated = await put({ scope: 'company', name: 'crm/api_key', value: 'crm-secret-2' }, admin)
    expect(rotated.body.version).toBe(2)
    const listed = await p.call('GET', '/api/vault/secrets?scope=company&prefix=crm/', { as: admin })
    expect(listed.body.data.map((s: { name: string }) => s.name)).toEqual(['crm/api_key'])
    for (const reply of [first, rotated, listed]) expect(JSON.stringify(reply.body)).not.toMatch(/crm-secret/)
    expect(await p.services.vault.get({ scope: 'company', ownerId: p.root.companyId, name: 'crm/api_key' })).toBe('crm-secret-2')
    expect((await p.call('DELETE', '/api/vault/secrets', { as: admin, json: { scope: 'company', name: 'crm/api_key' } })).status).toBe(204)
    expectProblem(await p.call('DELETE', '/api/vault/secrets', { as: admin, json: { scope: 'company', name: 'crm/api_key' } }), 404, 'not_found')
  })

  test('each scope has its keepers', async () => {
    expectProblem(await put({ scope: 'global', name: 'g', value: 'v' }, admin), 403, 'forbidden')
    expect((await put({ scope: 'global', name: 'g', value: 'v' })).status).toBe(200)
    expectProblem(await put({ scope: 'company', name: 'c', value: 'v' }, member), 403, 'forbidden')
    expect((await put({ scope: 'user', name: 'mine', value: 'v' }, member)).body.owner_id).toBe(member.userId)
    expectProblem(await put({ scope: 'user', owner_id: admin.userId, name: 'theirs', value: 'v' }, member), 404, 'not_found')
    const agent = (await p.call('POST', '/api/v1/AgentConfigRecord', { json: { name: 'with-secret' } })).body.id
    expect((await put({ scope: 'agent', owner_id: agent, name: 'slack/bot', value: 'v' }, admin)).status).toBe(200)
    expectProblem(await put({ scope: 'agent', owner_id: agent, name: 'slack/bot', value: 'v' }, member), 403, 'forbidden')
    expectProblem(await put({ scope: 'agent', name: 'slack/bot', value: 'v' }, admin), 422, 'validation_error')
  })

  test('another company’s secrets are out of reach: 404', async () => {
    expectProblem(await put({ scope: 'company', owner_id: p.root.companyId, name: 'x', value: 'v' }, outsider), 404, 'not_found')
    expectProblem(await p.call('GET', `/api/vault/secrets?scope=company&owner_id=${p.root.companyId}`, { as: outsider }), 404, 'not_found')
    const agent = (await p.call('POST', '/api/v1/AgentConfigRecord', { json: { name: 'not-yours' } })).body.id
    expectProblem(await put({ scope: 'agent', owner_id: agent, name: 'x', value: 'v' }, outsider), 404, 'not_found')
  })

  test('401 without credentials, 422 for a bad name or a missing value', async () => {
    expectProblem(await put({ scope: 'global', name: 'g', value: 'v' }, null), 401, 'unauthorized')
    expectProblem(await put({ scope: 'global', name: 'bad name!', value: 'v' }), 422, 'validation_error')
    expectProblem(await put({ scope: 'global', name: 'g' }), 422, 'validation_error')
    expectProblem(await put({ scope: 'galaxy', name: 'g', value: 'v' }), 422, 'validation_error')
  })
})

describe('subprocess tokens', () => {
  test('a token reads the secrets it was issued for, and no other name, on the vault socket', async () => {
    await put({ scope: 'global', name: 'mcp/github/token', value: 'ghp_allowed' })
    await put({ scope: 'global', name: 'mcp/other/token', value: 'ghp_forbidden' })
    const token = await p.services.vaultTokens.issue([{ scope: 'global', ownerId: null, name: 'mcp/github/token' }], 60_000)
    const read = await overVaultSocket(p, '/api/vault/get', token, { name: 'mcp/github/token' })
    expect(read.body).toEqual({ name: 'mcp/github/token', value: 'ghp_allowed' })
    const outside = await overVaultSocket(p, '/api/vault/get', token, { name: 'mcp/other/token' })
    expectProblem(outside, 404, 'not_found')
    expect(JSON.stringify(outside.body)).not.toContain('ghp_forbidden')
    expect((await overVaultSocket(p, '/api/vault/list', token, { prefix: 'mcp/' })).body).toEqual({ names: ['mcp/github/token'] })
  })

  test('a token that leaked is worth nothing on the public port: 403, and no secret', async () => {
    await put({ scope: 'global', name: 'mcp/leaked/token', value: 'ghp_leaked' })
    const token = await p.services.vaultTokens.issue([{ scope: 'global', ownerId: null, name: 'mcp/leaked/token' }], 60_000)
    const bearer = { authorization: `Bearer ${token}` }
    for (const [path, json] of [['/api/vault/get', { name: 'mcp/leaked/token' }], ['/api/vault/list', { prefix: '' }]] as const) {
      const refused = expectProblem(await p.call('POST', path, { as: null, headers: bearer, json }), 403, 'forbidden')
      expect(refused.detail).toContain('vault socket')
      expect(JSON.stringify(refused)).not.toContain('ghp_leaked')
    }
  })

  test('the socket serves the vault and nothing else of the API', async () => {
    const elsewhere = await fetch('http://vault/api/v1/User', { unix: p.services.vaultSocket.path, headers: { authorization: `Bearer ${p.root.token}` } } as RequestInit)
    expect(elsewhere.status).toBe(404)
    expect(await elsewhere.text()).not.toContain(p.root.userId)
    expect((await stat(p.services.vaultSocket.path)).mode & 0o077).toBe(0)
  })

  test('no token, someone else’s API token, or a revoked one: 401', async () => {
    expectProblem(await overVaultSocket(p, '/api/vault/get', null, { name: 'x' }), 401, 'unauthorized')
    expectProblem(await overVaultSocket(p, '/api/vault/get', p.root.token, { name: 'x' }), 401, 'unauthorized')
    expectProblem(await p.call('POST', '/api/vault/get', { as: null, json: { name: 'x' } }), 401, 'unauthorized')
    const token = await p.services.vaultTokens.issue([], 60_000)
    await p.services.vaultTokens.revoke(token)
    expectProblem(await overVaultSocket(p, '/api/vault/list', token, {}), 401, 'unauthorized')
  })

  test('tokens expire', async () => {
    let now = Date.parse('2026-11-22T09:00:00Z')
    const tokens = new VaultTokens(p.store.db, { now: () => now })
    const token = await tokens.issue([{ scope: 'global', ownerId: null, name: 'a' }], 500)
    expect(await tokens.scope(token)).toHaveLength(1)
    now += 500
    expect(await tokens.scope(token)).toBeUndefined()
  })

  test('tokens are stored hashed, and another process on the same store validates them', async () => {
    const token = await p.services.vaultTokens.issue([{ scope: 'global', ownerId: null, name: 'a' }], 60_000)
    const stored = await p.store.db.selectFrom('vault_tokens').select('token_hash').execute()
    expect(stored.map((row) => row.token_hash)).not.toContain(token)
    expect(JSON.stringify(stored)).not.toContain(token.slice(4))
    // A second VaultTokens on the same database stands for another process: nothing is shared but the store.
    const elsewhere = new VaultTokens(p.store.db, systemClock)
    expect(await elsewhere.scope(token)).toEqual([{ scope: 'global', ownerId: null, name: 'a' }])
    await elsewhere.revoke(token)
    expect(await p.services.vaultTokens.scope(token)).toBeUndefined()
  })
})
