import { afterAll, beforeAll, expect, test } from 'bun:test'
import { statSync } from 'node:fs'
import { mkdtempSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { loadConfig } from '../../src/config.ts'
import { deriveKey, masterKey } from '../../src/vault/keys.ts'
import { Vault } from '../../src/vault/vault.ts'
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts'

let p: TestPlatform
let vault: Vault
beforeAll(async () => {
  p = await startTestPlatform()
  vault = p.services.vault
})
afterAll(() => p.close())

const global = (name: string) => ({ scope: 'global' as const, ownerId: null, name })

test('a secret reads back as set, and the store holds only ciphertext', async () => {
  await vault.set(global('slack/bot'), 'xoxb-very-secret-token')
  expect(await vault.get(global('slack/bot'))).toBe('xoxb-very-secret-token')
  const rows = await p.store.db.selectFrom('vault_secrets').selectAll().execute()
  expect(JSON.stringify(rows)).not.toContain('xoxb-very-secret-token')
  expect(JSON.stringify(rows)).not.toContain(Buffer.from('xoxb-very-secret-token').toString('base64'))
})

test('rotating replaces the value and counts the version; delete removes it', async () => {
  const first = await vault.set(global('rotating'), 'one')
  const second = await vault.set(global('rotating'), 'two')
  expect([first.version, second.version]).toEqual([1, 2])
  expect(second.id).toBe(first.id)
  expect(await vault.get(global('rotating'))).toBe('two')
  expect(await vault.delete(global('rotating'))).toBe(true)
  expect(await vault.get(global('rotating'))).toBeUndefined()
  expect(await vault.delete(global('rotating'))).toBe(false)
})

test('scopes and owners keep same-named secrets apart; lists show names, never values', async () => {
  const [a, b] = [p.root.companyId!, await p.createCompany()]
  await vault.set({ scope: 'company', ownerId: a, name: 'crm/key' }, 'key-of-a')
  await vault.set({ scope: 'company', ownerId: b, name: 'crm/key' }, 'key-of-b')
  expect(await vault.get({ scope: 'company', ownerId: a, name: 'crm/key' })).toBe('key-of-a')
  expect(await vault.get({ scope: 'company', ownerId: b, name: 'crm/key' })).toBe('key-of-b')
  expect(await vault.get(global('crm/key'))).toBeUndefined()
  const listed = await vault.list('company', a, 'crm/')
  expect(listed.map((s) => s.name)).toEqual(['crm/key'])
  expect(JSON.stringify(listed)).not.toContain('key-of-a')
})

test('a ciphertext moved to another name does not decrypt: the name is bound to it', async () => {
  await vault.set(global('victim'), 'the real secret')
  await vault.set(global('attacker'), 'placeholder')
  const stolen = await p.store.db.selectFrom('vault_secrets').select(['nonce', 'ciphertext']).where('name', '=', 'victim').executeTakeFirstOrThrow()
  await p.store.db.updateTable('vault_secrets').set(stolen).where('name', '=', 'attacker').execute()
  await expect(vault.get(global('attacker'))).rejects.toThrow()
})

test('another master key cannot read the secrets', async () => {
  await vault.set(global('mine'), 'value')
  const other = new Vault(p.store.db, await deriveKey(new TextEncoder().encode('a-completely-different-master-key-value'), 'switchboard vault v1'))
  await expect(other.get(global('mine'))).rejects.toThrow()
})

test('without SWITCHBOARD_MASTER_KEY a key file is made once, readable by its owner only', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'switchboard-key-'))
  const first = masterKey(undefined, dir)
  expect(statSync(join(dir, 'master.key')).mode & 0o777).toBe(0o600)
  expect(masterKey(undefined, dir)).toEqual(first)
  expect(first.length).toBeGreaterThanOrEqual(40)
})

test('SWITCHBOARD_MASTER_KEY is taken out of the environment once read', () => {
  const environment: Record<string, string | undefined> = { SWITCHBOARD_MASTER_KEY: 'k'.repeat(40) }
  expect(loadConfig(environment).masterKey).toBe('k'.repeat(40))
  expect('SWITCHBOARD_MASTER_KEY' in environment).toBe(false)
  expect(() => loadConfig({ SWITCHBOARD_MASTER_KEY: 'short' })).toThrow('SWITCHBOARD_MASTER_KEY: must be at least 32 characters (got a hidden value)')
})
