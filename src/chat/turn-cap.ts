import { sql } from 'kysely'
import type { Clock } from '../clock.ts'
import type { Db } from '../db/schema.ts'
import { ApiError } from '../errors.ts'

/** How long a turn's place is kept if its process dies without giving it back: past the longest runner timeout. */
const LEASE_MS = 20 * 60_000

/**
 * How many turns one person may have running at once, counted in the store so that every process sees the same
 * number. The count and the new row are taken under a transaction lock on the person (safe behind a transaction
 * pooler), so concurrent starts on several processes cannot all slip under the cap.
 */
export class TurnCap {
  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly perUser: number,
  ) {}

  /** Takes a place for the turn, or refuses with 429 when the person has `perUser` running. */
  async admit(userId: string, conversationId: string): Promise<void> {
    const now = new Date(this.clock.now())
    await this.db.transaction().execute(async (tx) => {
      await sql`SELECT pg_advisory_xact_lock(hashtextextended(${`chat-turns:${userId}`}, 0))`.execute(tx)
      await tx.deleteFrom('chat_turns').where('user_id', '=', userId).where('lease_until', '<', now).execute()
      const { running } = await tx.selectFrom('chat_turns').select(sql<number>`count(*)::int`.as('running')).where('user_id', '=', userId).executeTakeFirstOrThrow()
      if (running >= this.perUser) {
        throw new ApiError('rate_limited', `You have ${running} answers being written at once, the most one person may; wait for one to finish or stop one.`, {
          headers: { 'Retry-After': '5' },
        })
      }
      // A row left for this conversation (its turn's process died) is this turn's now.
      await tx
        .insertInto('chat_turns')
        .values({ conversation_id: conversationId, user_id: userId, lease_until: new Date(now.getTime() + LEASE_MS) })
        .onConflict((oc) => oc.column('conversation_id').doUpdateSet({ user_id: userId, lease_until: new Date(now.getTime() + LEASE_MS) }))
        .execute()
    })
  }

  async release(conversationId: string): Promise<void> {
    await this.db.deleteFrom('chat_turns').where('conversation_id', '=', conversationId).execute()
  }
}
