import type { Announcing } from '../events/writes.ts'
import type { Executor } from '../db/schema.ts'
import { hashSecret, newSecret } from './secrets.ts'
import { audit } from '../audit/trail.ts'
import { inTransaction } from '../db/transaction.ts'

export interface SessionPolicy {
  inactivityMs: number
  maxAgeMs: number
}

export function sessionPolicy(config: { sessionInactivityHours: number; sessionMaxDays: number }): SessionPolicy {
  return { inactivityMs: config.sessionInactivityHours * 3_600_000, maxAgeMs: config.sessionMaxDays * 86_400_000 }
}

/** Starts a session; the returned token goes into the cookie and nowhere else. */
export async function createSession(db: Executor, userId: string, policy: SessionPolicy, now: number, provider?: { id: string; idToken: string }) {
  const token = newSecret()
  const expiresAt = new Date(now + policy.maxAgeMs)
  await db
    .insertInto('sessions')
    .values({
      id: Bun.randomUUIDv7(),
      user_id: userId,
      token_hash: hashSecret(token),
      created_at: new Date(now),
      last_seen_at: new Date(now),
      expires_at: expiresAt,
      ...(provider ? { identity_provider_id: provider.id, id_token: provider.idToken } : {}),
    })
    .execute()
  return { token, expiresAt }
}

/** Ends the session of `token` (signing out); whose it was is read afresh everywhere. Answers the session ended. */
export async function deleteSession(scope: Announcing, token: string) {
  const ended = await inTransaction(scope.db, async (tx) => {
    const ended = await tx.deleteFrom('sessions').where('token_hash', '=', hashSecret(token)).returning(['user_id', 'identity_provider_id', 'id_token']).executeTakeFirst()
    if (ended) await audit(tx, scope.origin, { action: 'sign_out', model: 'User', recordId: ended.user_id, companyId: null, actorId: ended.user_id })
    return ended
  })
  if (ended) scope.announce({ type: 'credentials', user_id: ended.user_id })
  return ended
}

export function isLive(session: { last_seen_at: Date; expires_at: Date }, policy: SessionPolicy, now: number): boolean {
  return now < session.expires_at.getTime() && now < session.last_seen_at.getTime() + policy.inactivityMs
}
