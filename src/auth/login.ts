import { sql } from 'kysely'
import type { Executor } from '../db/schema.ts'

// Verifying against this when there is no such user makes a wrong username cost as long as a wrong password.
const DUMMY_HASH = await Bun.password.hash('no such user, no such password')

/** The user whose username or email is `login` and whose password is `password`, else undefined. */
export async function verifyLogin(db: Executor, login: string, password: string) {
  const user = await db
    .selectFrom('users')
    .select(['id', 'username', 'email', 'display_name', 'is_superadmin', 'password_hash'])
    .where((eb) => eb.or([eb(sql`lower(username)`, '=', login.toLowerCase()), eb(sql`lower(email)`, '=', login.toLowerCase())]))
    .executeTakeFirst()
  const ok = await Bun.password.verify(password, user?.password_hash ?? DUMMY_HASH)
  if (!user?.password_hash || !ok) return undefined
  const { password_hash: _, ...shown } = user
  return shown
}
