import { ApiError } from '../errors.ts'
import type { Executor } from '../db/schema.ts'
import type { Announcing } from '../events/writes.ts'
import type { Actor } from './actor.ts'
import { mayManageUser } from './ladder.ts'
import { hashSecret, newSecret } from './secrets.ts'
import { audit } from '../audit/trail.ts'
import { CHANGED } from '../audit/changes.ts'
import { inTransaction } from '../db/transaction.ts'

/** How long a reset link works; it works once. */
export const RESET_TTL_MS = 24 * 60 * 60 * 1000

/** Whether `password` is the user's current one (false for a user with no password). */
export async function isCurrentPassword(db: Executor, userId: string, password: string): Promise<boolean> {
  const user = await db.selectFrom('users').select('password_hash').where('id', '=', userId).executeTakeFirst()
  return user?.password_hash ? Bun.password.verify(password, user.password_hash) : false
}

/** What a new password ends besides the sessions: the personal API tokens unless kept, and every OAuth grant. */
export interface Ending {
  /** The session that made the change goes on. */
  keepSession?: string
  /** A voluntary change may keep the person's scripts working; a reset never does. */
  keepApiTokens?: boolean
}

/**
 * Ends what someone holding the old password may have made: every session but the one named, the personal API
 * tokens (unless kept) and the OAuth grants of MCP hosts. Callers announce the person's credentials changed.
 */
export async function endAccess(tx: Executor, userId: string, { keepSession, keepApiTokens = false }: Ending = {}): Promise<Ended> {
  const sessions = await tx
    .deleteFrom('sessions')
    .where('user_id', '=', userId)
    .$if(keepSession !== undefined, (q) => q.where('token_hash', '<>', hashSecret(keepSession!)))
    .executeTakeFirst()
  const tokens = keepApiTokens ? undefined : await tx.deleteFrom('api_tokens').where('user_id', '=', userId).executeTakeFirst()
  const grants = await tx.deleteFrom('oauth_grants').where('user_id', '=', userId).executeTakeFirst()
  return { sessions: Number(sessions.numDeletedRows), api_tokens: Number(tokens?.numDeletedRows ?? 0), oauth_grants: Number(grants.numDeletedRows) }
}

/** How many of each way in a password change ended, as the audit trail records it. */
export interface Ended {
  sessions: number
  api_tokens: number
  oauth_grants: number
}

/**
 * Sets a user's password and ends what the old one may have opened (see endAccess). A change is the person's own
 * doing; a reset is done by whoever holds the link, who is not signed in.
 */
export async function setPassword(scope: Announcing, userId: string, password: string, ending: Ending = {}, action: 'password_change' | 'password_reset' = 'password_change'): Promise<void> {
  const hash = await Bun.password.hash(password)
  await inTransaction(scope.db, async (tx) => {
    await tx.updateTable('users').set({ password_hash: hash }).where('id', '=', userId).execute()
    const ended = await endAccess(tx, userId, ending)
    await tx.deleteFrom('password_resets').where('user_id', '=', userId).execute()
    await audit(tx, scope.origin, { ...accountEvent(userId, action === 'password_change' ? userId : null), action, changes: { password: CHANGED, ended } })
  })
  scope.announce({ type: 'credentials', user_id: userId })
}

/** An event of a person's account, which belongs to no company: their companies' admins read it. */
function accountEvent(userId: string, actorId: string | null) {
  return { model: 'User', recordId: userId, companyId: null, actorId }
}

/**
 * An admin's forced reset: the password stops working and everything it opened ends, so that only the person, from
 * the link mailed to them, gets back in.
 */
export async function forceReset(scope: Announcing, userId: string, by: Actor): Promise<void> {
  await inTransaction(scope.db, async (tx) => {
    await tx.updateTable('users').set({ password_hash: null }).where('id', '=', userId).execute()
    const ended = await endAccess(tx, userId)
    await audit(tx, scope.origin, { ...accountEvent(userId, by.userId), companyId: by.isSuperadmin ? null : by.companyId, action: 'password_reset_link', changes: { password: 'cleared', link: 'mailed', ended } })
  })
  scope.announce({ type: 'credentials', user_id: userId })
}

/** A one-time reset token for a user, made by `by`; an earlier one stops working. Only its hash is stored. */
export async function issueReset(db: Executor, userId: string, by: Pick<Actor, 'userId' | 'companyId' | 'isSuperadmin'>, now: number): Promise<{ token: string; expiresAt: Date }> {
  const token = newSecret('rst_')
  const expiresAt = new Date(now + RESET_TTL_MS)
  await inTransaction(db, async (tx) => {
    await tx.deleteFrom('password_resets').where('user_id', '=', userId).execute()
    await tx
      .insertInto('password_resets')
      .values({
        id: Bun.randomUUIDv7(),
        user_id: userId,
        company_id: by.isSuperadmin ? null : by.companyId,
        token_hash: hashSecret(token),
        created_by: by.userId,
        expires_at: expiresAt,
        created_at: new Date(now),
      })
      .execute()
  })
  return { token, expiresAt }
}

/**
 * Whether the link's maker may still reset this user's password: the user may have been made superadmin, joined
 * another company or risen above the admin since the link was handed over.
 */
async function makerMayStill(db: Executor, reset: { user_id: string; company_id: string | null; created_by: string | null }): Promise<boolean> {
  if (reset.created_by === null) return false
  // Asked for by the person themselves ("Forgot password?"): the link is theirs whatever their standing.
  if (reset.created_by === reset.user_id) return true
  const maker = await db
    .selectFrom('users as u')
    .leftJoin('company_users as m', (join) => join.onRef('m.user_id', '=', 'u.id').on('m.company_id', '=', reset.company_id))
    .select(['u.is_superadmin', 'm.role'])
    .where('u.id', '=', reset.created_by)
    .executeTakeFirst()
  if (!maker) return false
  if (maker.is_superadmin) return true
  if (reset.company_id === null || maker.role === null) return false
  return mayManageUser(db, { userId: reset.created_by, companyId: reset.company_id, role: maker.role, isSuperadmin: false }, reset.user_id)
}

/** Spends a reset token on a new password; the token is gone whether or not it was still valid. */
export async function useReset(scope: Announcing, token: string, password: string, now: number): Promise<string> {
  const { db } = scope
  const reset = await db
    .deleteFrom('password_resets')
    .where('token_hash', '=', hashSecret(token))
    .returning(['user_id', 'company_id', 'created_by', 'expires_at'])
    .executeTakeFirst()
  if (!reset || new Date(reset.expires_at).getTime() <= now || !(await makerMayStill(db, reset))) {
    throw new ApiError('validation_error', 'This reset link is unknown, used or expired; ask an admin for a new one.', {
      errors: [{ path: 'token', message: 'unknown, used or expired' }],
    })
  }
  await setPassword(scope, reset.user_id, password, {}, 'password_reset')
  return reset.user_id
}
