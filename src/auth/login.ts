import { sql } from 'kysely'
import type { Executor } from '../db/schema.ts'

// Verifying against this when there is no such user makes a wrong username cost as long as a wrong password. Hashed
// on Bun's thread pool from the module's loading on, not awaited there: a top-level await held every module that
// imports this one, the whole platform, for the hash's 200 ms at each start.
const dummyHash = Bun.password.hash('no such user, no such password')

/**
 * The user whose username or email is `login` (any case), and whether they have signed in from `address` before.
 * Found before the password is checked, so the throttle counts one account however it is named.
 */
export async function findLoginUser(db: Executor, login: string, address: string) {
  const name = login.toLowerCase()
  return db
    .selectFrom('users')
    .leftJoin('known_login_addresses as known', (join) => join.onRef('known.user_id', '=', 'users.id').on('known.address', '=', address))
    .select(['users.id', 'users.username', 'users.email', 'users.display_name', 'users.is_superadmin', 'users.password_hash', 'users.deactivated_at'])
    .select(sql<boolean>`known.user_id IS NOT NULL`.as('known_address'))
    .where((eb) => eb.or([eb(sql`lower(users.username)`, '=', name), eb(sql`lower(users.email)`, '=', name)]))
    .executeTakeFirst()
}

export type LoginCandidate = NonNullable<Awaited<ReturnType<typeof findLoginUser>>>

/** The user as shown to them if `password` is theirs, else undefined; as slow for no user as for a wrong password. */
export async function verifyPassword(user: LoginCandidate | undefined, password: string) {
  const ok = await Bun.password.verify(password, user?.password_hash ?? (await dummyHash))
  if (!user?.password_hash || !ok) return undefined
  const { password_hash: _, known_address: __, deactivated_at: deactivated, ...shown } = user
  return { ...shown, deactivated: deactivated !== null }
}

/** Remembers a successful sign-in from `address`: failures from there no longer count against the account's cap. */
export async function rememberLoginAddress(db: Executor, userId: string, address: string, now: number): Promise<void> {
  const at = new Date(now)
  await db
    .insertInto('known_login_addresses')
    .values({ user_id: userId, address, last_success_at: at })
    .onConflict((conflict) => conflict.columns(['user_id', 'address']).doUpdateSet({ last_success_at: at }))
    .execute()
}
