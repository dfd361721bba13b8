import { sql } from 'kysely'
import type { Db, Row } from '../db/schema.ts'

export type InboxRow = Row<'channel_inbox'>
export type OutboxRow = Row<'channel_outbox'>
type QueueTable = 'channel_inbox' | 'channel_outbox'

/**
 * Takes the oldest due row of a queue for this process, for `leaseMs`: one no other process holds (SKIP LOCKED
 * while choosing, then the lease), and the first of its thread still pending, so a thread's rows go one after the
 * other and in order, whichever processes take them. Undefined when nothing is due.
 */
export async function claimNext<T extends QueueTable>(db: Db, table: T, now: Date, leaseMs: number): Promise<Row<T> | undefined> {
  const until = new Date(now.getTime() + leaseMs)
  const claimed = await sql<Row<T>>`
    UPDATE ${sql.table(table)} AS q SET lease_until = ${until}, attempts = q.attempts + 1
    WHERE q.id = (
      SELECT c.id FROM ${sql.table(table)} AS c
      WHERE c.status = 'pending' AND c.next_attempt_at <= ${now} AND (c.lease_until IS NULL OR c.lease_until < ${now})
        AND NOT EXISTS (
          SELECT 1 FROM ${sql.table(table)} AS e
          WHERE e.agent_id = c.agent_id AND e.platform = c.platform AND e.thread_key = c.thread_key AND e.status = 'pending'
            AND (e.created_at, e.id) < (c.created_at, c.id)
        )
      ORDER BY c.next_attempt_at, c.created_at
      LIMIT 1
      FOR UPDATE SKIP LOCKED
    )
    RETURNING q.*`.execute(db)
  return claimed.rows[0]
}

/** Keeps a row this process works on from being taken by another while the work goes on (a long turn). */
export async function extendLease(db: Db, table: QueueTable, id: string, until: Date): Promise<void> {
  await db.updateTable(table).set({ lease_until: until }).where('id', '=', id).where('status', '=', 'pending').execute()
}

/**
 * The row is finished with: done (inbox), sent (outbox), or failed for good, with why. An inbox row keeps its
 * delivery id (the platform may still retry) but lets go of its attachments, which are documents by now.
 */
export async function settle(db: Db, table: QueueTable, id: string, status: 'done' | 'sent' | 'failed', now: Date, error?: string): Promise<void> {
  const finished = table === 'channel_inbox' ? { done_at: now, message: sql`message - 'attachments'` } : status === 'sent' ? { sent_at: now } : {}
  await db
    .updateTable(table)
    .set({ status: status as never, lease_until: null, ...(error !== undefined ? { last_error: error } : {}), ...finished })
    .where('id', '=', id)
    .execute()
}

/** Tries again at `at`; `countAttempt` false gives the attempt back (it was not the row's fault: a busy conversation). */
export async function retryAt(db: Db, table: QueueTable, id: string, at: Date, error: string, countAttempt = true): Promise<void> {
  await db
    .updateTable(table)
    .set({ next_attempt_at: at, lease_until: null, last_error: error, ...(countAttempt ? {} : { attempts: sql<number>`attempts - 1` }) })
    .where('id', '=', id)
    .execute()
}

/** When the next pending row of either queue falls due (a leased one: when its lease runs out), for the worker's timer. */
export async function nextDue(db: Db): Promise<Date | undefined> {
  const row = await sql<{ due: Date | string | null }>`
    SELECT least(
      (SELECT min(greatest(next_attempt_at, lease_until)) FROM channel_inbox WHERE status = 'pending'),
      (SELECT min(greatest(next_attempt_at, lease_until)) FROM channel_outbox WHERE status = 'pending')
    ) AS due`.execute(db)
  const due = row.rows[0]?.due
  return due ? new Date(due) : undefined
}

/**
 * Forgets finished rows after `keepMs`: long past any platform's retries (WhatsApp's last the longest, a few days),
 * so a delivery id is still known whenever the platform could send it again.
 */
export async function forgetFinished(db: Db, before: Date): Promise<void> {
  await db.deleteFrom('channel_inbox').where('status', '<>', 'pending').where('created_at', '<', before).execute()
  await db.deleteFrom('channel_outbox').where('status', '<>', 'pending').where('created_at', '<', before).execute()
}
