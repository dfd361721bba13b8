import { afterEach, expect, test } from 'bun:test'
import { ensureSuperadmin, firstPassword } from '../../src/auth/bootstrap.ts'
import type { Store } from '../../src/db/connect.ts'
import { freshStore } from '../helpers/database.ts'

let store: Store | undefined
afterEach(async () => {
  await store?.close()
  store = undefined
})

const superadmin = (s: Store) => s.db.selectFrom('users').select(['username', 'password_hash']).where('is_superadmin', '=', true).execute()

test('a password hashed before the store opened is the one stored and reported', async () => {
  store = await freshStore()
  const early = firstPassword({ password: undefined })
  expect(early.generated).toBe(true)
  const bootstrap = await ensureSuperadmin(store.db, { email: 'admin@example.test', password: undefined }, early)
  expect(bootstrap.generatedPassword).toEqual({ username: 'admin', password: early.password })
  const [admin] = await superadmin(store)
  expect(admin!.password_hash).toBe(await early.hash)
  expect(await Bun.password.verify(early.password, admin!.password_hash!)).toBe(true)
})

test('a configured password is hashed, never reported, and a second start creates nobody', async () => {
  store = await freshStore()
  const admin = { email: 'admin@example.test', password: 'configured password 1' }
  expect(await ensureSuperadmin(store.db, admin)).toEqual({})
  // A hash begun on a start that turns out not to be the first is left unused.
  expect(await ensureSuperadmin(store.db, admin, firstPassword({ password: undefined }))).toEqual({})
  const admins = await superadmin(store)
  expect(admins).toHaveLength(1)
  expect(await Bun.password.verify('configured password 1', admins[0]!.password_hash!)).toBe(true)
})
