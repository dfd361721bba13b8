import { sql } from 'kysely'
import type { Db, Executor, Row } from '../db/schema.ts'

export type InboxRow = Row<'channel_inbox'>
export type OutboxRow = Row<'channel_outbox'>
export type QueueTable = 'channel_inbox' | 'channel_outbox'

/** A row this process claimed: every later write names the claim, so it is void once another process took over. */
export interface Claim {
  table: QueueTable
  id: string
  owner: string
}

/**
 * Takes the oldest due row of a queue for this process, for `leaseMs`: one no other process holds (SKIP LOCKED
 * while choosing, then the lease), and the first of its thread still pending, so a thread's rows go one after the
 * other and in order, whichever processes take them. Undefined when nothing is due.
 */
export async function claimNext<T extends QueueTable>(db: Db, table: T, now: Date, leaseMs: number): Promise<Row<T> | undefined> {
  const until = new Date(now.getTime() + leaseMs)
  const claimed = await sql<Row<T>>`
    UPDATE ${sql.table(table)} AS q SET lease_until = ${until}, lease_owner = ${crypto.randomUUID()}, attempts = q.attempts + 1
    WHERE q.id = (
      SELECT c.id FROM ${sql.table(table)} AS c
      WHERE c.status = 'pending' AND c.next_attempt_at <= ${now} AND (c.lease_until IS NULL OR c.lease_until < ${now})
        AND ${firstOfThread(table)}
      ORDER BY c.next_attempt_at, c.created_at
      LIMIT 1
      FOR UPDATE SKIP LOCKED
    )
    RETURNING q.*`.execute(db)
  return claimed.rows[0]
}

export function claimOf(table: QueueTable, row: { id: string; lease_owner: string | null }): Claim {
  return { table, id: row.id, owner: row.lease_owner! }
}

/** Updates the claimed row; false when the claim was lost (the lease ran out and another process took the row). */
async function write(db: Db, claim: Claim, set: Record<string, unknown>): Promise<boolean> {
  const written = await db
    .updateTable(claim.table)
    .set(set as never)
    .where('id', '=', claim.id)
    .where('lease_owner', '=', claim.owner)
    .where('status', '=', 'pending')
    .returning('id')
    .executeTakeFirst()
  return written !== undefined
}

/** Keeps the row from being taken by another process while the work goes on (a long turn). */
export function extendLease(db: Db, claim: Claim, until: Date): Promise<boolean> {
  return write(db, claim, { lease_until: until })
}

/** Notes progress on the row (parts sent, documents read, the turn begun) while the claim holds. */
export function record(db: Db, claim: Claim, set: Record<string, unknown>): Promise<boolean> {
  return write(db, claim, set)
}

/**
 * The row is finished with: done (inbox), sent (outbox), or failed for good, with why. An inbox row keeps its
 * delivery id (the platform may still retry) but lets go of its attachments, which are documents by now.
 */
export function settle(db: Db, claim: Claim, status: 'done' | 'sent' | 'failed', now: Date, error?: string): Promise<boolean> {
  const finished = claim.table === 'channel_inbox' ? { done_at: now, message: sql`message - 'attachments'` } : status === 'sent' ? { sent_at: now } : {}
  return write(db, claim, { status, lease_until: null, lease_owner: null, ...(error !== undefined ? { last_error: error } : {}), ...finished })
}

/** Tries again at `at`; `countAttempt` false gives the attempt back (it was not the row's fault: a busy conversation). */
export function retryAt(db: Db, claim: Claim, at: Date, error: string, countAttempt = true): Promise<boolean> {
  return write(db, claim, {
    next_attempt_at: at,
    lease_until: null,
    lease_owner: null,
    last_error: error,
    ...(countAttempt ? {} : { attempts: sql<number>`attempts - 1` }),
  })
}

/**
 * When the next pending row of either queue falls due (a leased one: when its lease runs out), for the worker's timer.
 * Only the first pending row of each thread counts: the rows behind it are not due, however old, until it is
 * finished, and whoever finishes it looks again; counting them would have the worker look again and again, in vain,
 * for as long as the first one's turn runs.
 */
export async function nextDue(db: Db): Promise<Date | undefined> {
  const row = await sql<{ due: Date | string | null }>`
    SELECT least((${firstDue('channel_inbox')}), (${firstDue('channel_outbox')})) AS due`.execute(db)
  const due = row.rows[0]?.due
  return due ? new Date(due) : undefined
}

function firstDue(table: QueueTable) {
  return sql`SELECT min(greatest(c.next_attempt_at, c.lease_until)) FROM ${sql.table(table)} AS c WHERE c.status = 'pending' AND ${firstOfThread(table)}`
}

/** Row `c` is the first pending row of its thread: the one a thread's rows wait behind, whichever process takes it. */
function firstOfThread(table: QueueTable) {
  return sql`NOT EXISTS (
    SELECT 1 FROM ${sql.table(table)} AS e
    WHERE e.agent_id = c.agent_id AND e.platform = c.platform AND e.thread_key = c.thread_key AND e.status = 'pending'
      AND (e.created_at, e.id) < (c.created_at, c.id)
  )`
}

/**
 * Forgets finished rows created before `before`: long past any platform's retries (WhatsApp's last the longest, a
 * few days), so a delivery id is still known whenever the platform could send it again.
 */
export async function forgetFinished(db: Db, before: Date): Promise<void> {
  await db.deleteFrom('channel_inbox').where('status', '<>', 'pending').where('created_at', '<', before).execute()
  await db.deleteFrom('channel_outbox').where('status', '<>', 'pending').where('created_at', '<', before).execute()
}

/** Deliveries and replies waiting and failed, per queue, read from the store (shared by every process). */
export async function queueDepths(db: Executor): Promise<Record<'inbox' | 'outbox', { pending: number; failed: number }>> {
  const depths = { inbox: { pending: 0, failed: 0 }, outbox: { pending: 0, failed: 0 } }
  for (const queue of ['inbox', 'outbox'] as const) {
    const rows = await db
      .selectFrom(queue === 'inbox' ? 'channel_inbox' : 'channel_outbox')
      .select(['status', sql<number>`count(*)::int`.as('n')])
      .where('status', 'in', ['pending', 'failed'])
      .groupBy('status')
      .execute()
    for (const row of rows) depths[queue][row.status as 'pending' | 'failed'] = Number(row.n)
  }
  return depths
}
