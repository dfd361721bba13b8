import type { Clock } from '../clock.ts'
import type { Db } from '../db/schema.ts'
import { run } from '../db/templates.ts'
import { ApiError } from '../errors.ts'

/** How long a turn's place is kept if its process dies without giving it back: past the longest runner timeout. */
const LEASE_MS = 20 * 60_000

// On the keyed lane, as the turn's other statements before its first token: no connection reserved for it alone.
const ADMIT = `SELECT set_config('synchronous_commit', 'off', true),
  admit_chat_turn($1::uuid, $2::uuid, $3::timestamptz, $4::timestamptz, $5::integer) AS running`

/**
 * How many turns one person may have running at once, counted in the store so that every process sees the same
 * number. The count and the new row are taken in one call of admit_chat_turn (sql/0023), under a transaction lock on
 * the person (safe behind a transaction pooler), so concurrent starts on several processes cannot all slip under
 * the cap.
 */
export class TurnCap {
  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly perUser: number,
  ) {}

  /** Takes a place for the turn, or refuses with 429 when the person has `perUser` running. One round trip. */
  async admit(userId: string, conversationId: string): Promise<void> {
    const now = this.clock.now()
    // The place is a lease that a crash frees anyway: its commit need not wait for the log to reach the disk.
    const [row] = await run<{ running: number }>(this.db, ADMIT, [userId, conversationId, new Date(now), new Date(now + LEASE_MS), this.perUser], 'keyed')
    const running = Number(row!.running)
    if (running >= this.perUser) {
      throw new ApiError('rate_limited', `You have ${running} answers being written at once, the most one person may; wait for one to finish or stop one.`, {
        headers: { 'Retry-After': '5' },
      })
    }
  }

  async release(conversationId: string): Promise<void> {
    await run(this.db, 'DELETE FROM chat_turns WHERE conversation_id = $1', [conversationId], 'keyed')
  }
}
