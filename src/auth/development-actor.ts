import type { Db } from '../db/schema.ts'
import type { Actor } from './actor.ts'

/**
 * Until sign-in exists every request acts as one seeded superadmin, owner of a seeded company. Both are created
 * once and found again on later starts; the identity issue replaces this actor with the signed-in user.
 */
export async function ensureDevelopmentActor(db: Db): Promise<Actor> {
  return db.transaction().execute(async (tx) => {
    await tx
      .insertInto('companies')
      .values({ id: Bun.randomUUIDv7(), name: 'Default', slug: 'default' })
      .onConflict((oc) => oc.column('slug').doNothing())
      .execute()
    const company = await tx.selectFrom('companies').select('id').where('slug', '=', 'default').executeTakeFirstOrThrow()
    let user = await tx.selectFrom('users').select('id').where('username', '=', 'admin').executeTakeFirst()
    if (!user) {
      user = await tx
        .insertInto('users')
        .values({ id: Bun.randomUUIDv7(), email: 'admin@switchboard.local', username: 'admin', display_name: 'Administrator', is_superadmin: true, avatar: null, password_hash: null })
        .returning('id')
        .executeTakeFirstOrThrow()
    }
    await tx
      .insertInto('company_users')
      .values({ id: Bun.randomUUIDv7(), company_id: company.id, user_id: user.id, role: 'owner' })
      .onConflict((oc) => oc.columns(['company_id', 'user_id']).doNothing())
      .execute()
    return { userId: user.id, companyId: company.id, role: 'owner', isSuperadmin: true }
  })
}
