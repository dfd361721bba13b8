import { ApiError } from '../errors.ts'
import type { Executor } from '../db/schema.ts'
import type { Announcing } from '../events/writes.ts'
import type { Actor } from './actor.ts'
import { mayManageUser } from './ladder.ts'
import { hashSecret, newSecret } from './secrets.ts'

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
export async function endAccess(tx: Executor, userId: string, { keepSession, keepApiTokens = false }: Ending = {}): Promise<void> {
  await tx
    .deleteFrom('sessions')
    .where('user_id', '=', userId)
    .$if(keepSession !== undefined, (q) => q.where('token_hash', '<>', hashSecret(keepSession!)))
    .execute()
  if (!keepApiTokens) await tx.deleteFrom('api_tokens').where('user_id', '=', userId).execute()
  await tx.deleteFrom('oauth_grants').where('user_id', '=', userId).execute()
}

/** Sets a user's password and ends what the old one may have opened (see endAccess). */
export async function setPassword(scope: Announcing, userId: string, password: string, ending: Ending = {}): Promise<void> {
  const hash = await Bun.password.hash(password)
  await inTransaction(scope.db, async (tx) => {
    await tx.updateTable('users').set({ password_hash: hash }).where('id', '=', userId).execute()
    await endAccess(tx, userId, ending)
    await tx.deleteFrom('password_resets').where('user_id', '=', userId).execute()
  })
  scope.announce({ type: 'credentials', user_id: userId })
}

function inTransaction(db: Executor, work: (tx: Executor) => Promise<void>): Promise<void> {
  return db.isTransaction ? work(db) : db.transaction().execute(work)
}

/**
 * An admin's forced reset: the password stops working and everything it opened ends, so that only the person, from
 * the link mailed to them, gets back in.
 */
export async function forceReset(scope: Announcing, userId: string): Promise<void> {
  await inTransaction(scope.db, async (tx) => {
    await tx.updateTable('users').set({ password_hash: null }).where('id', '=', userId).execute()
    await endAccess(tx, userId)
  })
  scope.announce({ type: 'credentials', user_id: userId })
}

/** A one-time reset token for a user, made by `by`; an earlier one stops working. Only its hash is stored. */
export async function issueReset(db: Executor, userId: string, by: Actor, now: number): Promise<{ token: string; expiresAt: Date }> {
  const token = newSecret('rst_')
  const expiresAt = new Date(now + RESET_TTL_MS)
  await db.transaction().execute(async (tx) => {
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
  await setPassword(scope, reset.user_id, password)
  return reset.user_id
}
