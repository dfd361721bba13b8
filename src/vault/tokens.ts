import { newSecret } from '../auth/secrets.ts'
import type { SecretRef } from './vault.ts'

interface Grant {
  refs: SecretRef[]
  expiresAt: number
}

/**
 * Short-lived tokens for MCP subprocesses: each may read only the secrets named when it was issued. Kept in memory,
 * since a subprocess only ever talks to the process that started it.
 */
export class VaultTokens {
  readonly #grants = new Map<string, Grant>()

  constructor(private readonly now: () => number = Date.now) {}

  issue(refs: SecretRef[], ttlMs: number): string {
    this.#sweep()
    const token = newSecret('sbv_')
    this.#grants.set(token, { refs, expiresAt: this.now() + ttlMs })
    return token
  }

  /** The secrets a live token may read; undefined for an unknown or expired one. */
  scope(token: string): SecretRef[] | undefined {
    const grant = this.#grants.get(token)
    if (!grant) return undefined
    if (this.now() >= grant.expiresAt) {
      this.#grants.delete(token)
      return undefined
    }
    return grant.refs
  }

  /** The scope of the token an `Authorization: Bearer sbv_…` header carries; undefined for anything else. */
  scopeOfBearer(authorization: string | undefined): SecretRef[] | undefined {
    const token = /^Bearer\s+(sbv_\S+)$/i.exec(authorization ?? '')?.[1]
    return token ? this.scope(token) : undefined
  }

  revoke(token: string): void {
    this.#grants.delete(token)
  }

  #sweep(): void {
    const now = this.now()
    for (const [token, grant] of this.#grants) if (now >= grant.expiresAt) this.#grants.delete(token)
  }
}
