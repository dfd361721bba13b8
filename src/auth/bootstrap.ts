import type { Db } from '../db/schema.ts'
import { newSecret } from './secrets.ts'

export interface Bootstrap {
  /** Set only when this start created the first superadmin with a generated password: shown once, never stored. */
  generatedPassword?: { username: string; password: string }
}

/**
 * The first start creates a superadmin, owner of a first company, when there is no superadmin. The password
 * comes from configuration or is generated; either way only its argon2id hash is stored.
 */
export async function ensureSuperadmin(db: Db, admin: { email: string; password: string | undefined }): Promise<Bootstrap> {
  return db.transaction().execute(async (tx) => {
    const existing = await tx.selectFrom('users').select('id').where('is_superadmin', '=', true).limit(1).executeTakeFirst()
    if (existing) return {}
    const password = admin.password ?? newSecret().slice(0, 20)
    const username = 'admin'
    const userId = Bun.randomUUIDv7()
    await tx
      .insertInto('users')
      .values({
        id: userId,
        email: admin.email,
        username,
        display_name: 'Administrator',
        is_superadmin: true,
        avatar: null,
        password_hash: await Bun.password.hash(password),
      })
      .execute()
    await tx
      .insertInto('companies')
      .values({ id: Bun.randomUUIDv7(), name: 'Default', slug: 'default' })
      .onConflict((oc) => oc.column('slug').doNothing())
      .execute()
    const company = await tx.selectFrom('companies').select('id').where('slug', '=', 'default').executeTakeFirstOrThrow()
    await tx.insertInto('company_users').values({ id: Bun.randomUUIDv7(), company_id: company.id, user_id: userId, role: 'owner' }).execute()
    return admin.password ? {} : { generatedPassword: { username, password } }
  })
}
