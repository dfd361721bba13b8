import { sql } from 'kysely'
import type { Writes } from '../events/writes.ts'
import type { Db, Executor, VaultScope } from '../db/schema.ts'
import type { Actor } from '../auth/actor.ts'
import { audit } from '../audit/trail.ts'
import { CHANGED } from '../audit/changes.ts'

export interface SecretRef {
  scope: VaultScope
  /** The company, user or agent; null for global secrets. */
  ownerId: string | null
  name: string
}

export interface SecretInfo {
  id: string
  scope: VaultScope
  owner_id: string | null
  name: string
  version: number
  updated_at: string
}

const NIL = '00000000-0000-0000-0000-000000000000'
const encoder = new TextEncoder()

function toIso(time: Date | string): string {
  return new Date(time).toISOString()
}

function additionalData(ref: SecretRef): Uint8Array<ArrayBuffer> {
  return encoder.encode(`${ref.scope}\u0000${ref.ownerId ?? ''}\u0000${ref.name}`)
}

/** Encrypted secrets (AES-256-GCM, a fresh 96-bit nonce per write). Values never leave except through get(). */
export class Vault {
  constructor(
    private readonly db: Db,
    private readonly key: CryptoKey,
    /** Where a set or deleted secret is announced (what plugins read of theirs is cached). */
    private readonly writes?: Pick<Writes, 'announced'>,
  ) {}

  /** Sets or rotates a secret; its version counts the rotations. */
  async set(ref: SecretRef, value: string, by?: Actor): Promise<SecretInfo> {
    const nonce = crypto.getRandomValues(new Uint8Array(12))
    const sealed = await crypto.subtle.encrypt({ name: 'AES-GCM', iv: nonce, additionalData: additionalData(ref) }, this.key, encoder.encode(value))
    const row = { nonce: Buffer.from(nonce).toString('base64'), ciphertext: Buffer.from(sealed).toString('base64') }
    const saved = await this.#audited(by, ref, 'secret_set', (db) => this.#upsert(db, ref, row))
    await this.writes?.announced({ type: 'secret', scope: ref.scope })
    return { ...saved, updated_at: toIso(saved.updated_at) }
  }

  #upsert(db: Executor, ref: SecretRef, row: { nonce: string; ciphertext: string }) {
    return db
      .insertInto('vault_secrets')
      .values({ id: Bun.randomUUIDv7(), scope: ref.scope, owner_id: ref.ownerId, name: ref.name, ...row })
      .onConflict((oc) =>
        oc
          // Written out literally: PostgreSQL matches the conflict target to the index expression only then.
          .expression(sql`scope, coalesce(owner_id, ${sql.lit(NIL)}::uuid), name`)
          .doUpdateSet({ ...row, version: sql`vault_secrets.version + 1`, updated_at: sql`now()` }),
      )
      .returning(['id', 'scope', 'owner_id', 'name', 'version', 'updated_at'])
      .executeTakeFirstOrThrow()
  }

  /**
   * Runs a write of a secret, audited in its transaction when a person makes it (a plugin's own writes, such as a
   * refreshed token, are not): its name and place are recorded, never its value.
   */
  async #audited<T>(by: Actor | undefined, ref: SecretRef, action: 'secret_set' | 'secret_delete', write: (db: Executor) => Promise<T>): Promise<T> {
    if (!by) return write(this.db)
    return this.db.transaction().execute(async (tx) => {
      const result = await write(tx)
      if (result !== undefined) {
        const companyId = ref.scope === 'company' ? ref.ownerId : ref.scope === 'global' ? null : by.companyId
        await audit(tx, by.origin, { action, model: 'VaultSecret', recordId: ref.name, companyId, actorId: by.userId, changes: { scope: ref.scope, owner_id: ref.ownerId, value: action === 'secret_set' ? CHANGED : 'deleted' } })
      }
      return result
    })
  }

  async get(ref: SecretRef): Promise<string | undefined> {
    const row = await this.#where(this.db.selectFrom('vault_secrets').select(['nonce', 'ciphertext']), ref).executeTakeFirst()
    if (!row) return undefined
    const plain = await crypto.subtle.decrypt(
      { name: 'AES-GCM', iv: Buffer.from(row.nonce, 'base64'), additionalData: additionalData(ref) },
      this.key,
      Buffer.from(row.ciphertext, 'base64'),
    )
    return new TextDecoder().decode(plain)
  }

  /** Names and versions, never values. */
  async list(scope: VaultScope, ownerId: string | null, prefix = ''): Promise<SecretInfo[]> {
    const rows = await this.db
      .selectFrom('vault_secrets')
      .select(['id', 'scope', 'owner_id', 'name', 'version', 'updated_at'])
      .where('scope', '=', scope)
      .where(sql<boolean>`coalesce(owner_id, ${NIL}::uuid) = ${ownerId ?? NIL}::uuid`)
      .where(sql<boolean>`starts_with(name, ${prefix})`)
      .orderBy('name')
      .execute()
    return rows.map((r) => ({ ...r, updated_at: toIso(r.updated_at) }))
  }

  async delete(ref: SecretRef, by?: Actor): Promise<boolean> {
    const deleted = await this.#audited(by, ref, 'secret_delete', (db) => this.#where(db.deleteFrom('vault_secrets'), ref).returning('id').executeTakeFirst())
    if (deleted) await this.writes?.announced({ type: 'secret', scope: ref.scope })
    return deleted !== undefined
  }

  #where<Q extends { where: (...args: any[]) => any }>(query: Q, ref: SecretRef): Q {
    return query
      .where('scope', '=', ref.scope)
      .where(sql<boolean>`coalesce(owner_id, ${NIL}::uuid) = ${ref.ownerId ?? NIL}::uuid`)
      .where('name', '=', ref.name)
  }
}
