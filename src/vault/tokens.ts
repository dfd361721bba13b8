import { execute } from '../db/templates.ts'
import { hashSecret, newSecret } from '../auth/secrets.ts'
import type { Clock } from '../clock.ts'
import { jsonb } from '../db/jsonb.ts'
import type { Db } from '../db/schema.ts'
import type { SecretRef } from './vault.ts'

const SWEEP_EVERY_MS = 60_000

/**
 * Short-lived tokens for MCP subprocesses: each may read only the secrets named when it was issued. Stored hashed
 * (a stolen database holds no usable token), so whichever process a subprocess reaches validates its token.
 */
export class VaultTokens {
  #lastSweep = 0

  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
  ) {}

  async issue(refs: SecretRef[], ttlMs: number): Promise<string> {
    const now = this.clock.now()
    this.#sweep(now)
    const token = newSecret('sbv_')
    await this.db
      .insertInto('vault_tokens')
      .values({ token_hash: hashSecret(token), refs: jsonb(refs), expires_at: new Date(now + ttlMs) })
      .execute()
    return token
  }

  /** The secrets a live token may read; undefined for an unknown, revoked or expired one. */
  async scope(token: string): Promise<SecretRef[] | undefined> {
    const row = await this.db
      .selectFrom('vault_tokens')
      .select('refs')
      .where('token_hash', '=', hashSecret(token))
      .where('expires_at', '>', new Date(this.clock.now()))
      .executeTakeFirst()
    return row ? (row.refs as SecretRef[]) : undefined
  }

  /** The scope of the token an `Authorization: Bearer sbv_…` header carries; undefined for anything else. */
  async scopeOfBearer(authorization: string | undefined): Promise<SecretRef[] | undefined> {
    const token = /^Bearer\s+(sbv_\S+)$/i.exec(authorization ?? '')?.[1]
    return token ? this.scope(token) : undefined
  }

  async revoke(token: string): Promise<void> {
    await this.db.deleteFrom('vault_tokens').where('token_hash', '=', hashSecret(token)).execute()
  }

  /** Expired tokens are gone from the store within a minute of expiring (at most one sweep a minute per process). */
  #sweep(now: number): void {
    if (now - this.#lastSweep < SWEEP_EVERY_MS) return
    this.#lastSweep = now
    // Not awaited, so on the direct path: a query of Kysely's own still waiting for a connection when the store
    // closes would hold the close up.
    void execute(this.db, this.db.deleteFrom('vault_tokens').where('expires_at', '<=', new Date(now))).catch(() => {})
  }
}
