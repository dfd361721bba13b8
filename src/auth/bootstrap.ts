import { sql } from 'kysely'
import type { Db } from '../db/schema.ts'
import { newSecret } from './secrets.ts'

export interface Bootstrap {
  /** Set only when this start created the first superadmin with a generated password: shown once, never stored. */
  generatedPassword?: { username: string; password: string }
}

/** The first superadmin's password, configured or generated, and its argon2id hash, under way on Bun's thread pool. */
export interface FirstPassword {
  password: string
  generated: boolean
  hash: Promise<string>
}

/**
 * Begins the first superadmin's password hash. main.ts calls it as soon as a start is known to be the first (a new
 * embedded data directory), so that the hash, a fifth of a second, runs while the store opens rather than after.
 */
export function firstPassword(admin: { password: string | undefined }): FirstPassword {
  const password = admin.password ?? newSecret().slice(0, 20)
  return { password, generated: admin.password === undefined, hash: Bun.password.hash(password) }
}

/**
 * The first start creates a superadmin, owner of a first company with a demo agent, when there is no
 * superadmin. The password comes from configuration or is generated; either way only its argon2id hash is stored.
 */
export async function ensureSuperadmin(db: Db, admin: { email: string; password: string | undefined }, early?: FirstPassword): Promise<Bootstrap> {
  return db.transaction().execute(async (tx) => {
    const existing = await tx.selectFrom('users').select('id').where('is_superadmin', '=', true).limit(1).executeTakeFirst()
    if (existing) return {}
    const { password, generated, hash } = early ?? firstPassword(admin)
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
        password_hash: await hash,
      })
      .execute()
    await tx
      .insertInto('companies')
      .values({ id: Bun.randomUUIDv7(), name: 'Default', slug: 'default' })
      .onConflict((oc) => oc.column('slug').doNothing())
      .execute()
    const company = await tx.selectFrom('companies').select('id').where('slug', '=', 'default').executeTakeFirstOrThrow()
    await tx.insertInto('company_users').values({ id: Bun.randomUUIDv7(), company_id: company.id, user_id: userId, role: 'owner' }).execute()
    // Something to talk to on a fresh install: the local echo runner needs no provider account.
    await tx
      .insertInto('agent_configs')
      .values({
        id: Bun.randomUUIDv7(),
        company_id: company.id,
        name: 'demo',
        description: 'A demo agent on the local echo runner. Try "/tool current_time".',
        runner: 'echo',
        model: 'echo-1',
        channels: sql`'{"webchat":{"enabled":true}}'::jsonb`,
        voice: sql`'{"enabled":false}'::jsonb`,
        email: sql`'{}'::jsonb`,
        mcp_permissions: sql`'{"servers":{}}'::jsonb`,
        plugins: sql`'{"enabled":[]}'::jsonb`,
        context_options: sql`'{"session_ttl_minutes":null,"service_account":null}'::jsonb`,
      })
      .onConflict((oc) => oc.columns(['company_id', 'name']).doNothing())
      .execute()
    return generated ? { generatedPassword: { username, password } } : {}
  })
}
