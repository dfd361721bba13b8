import { sql } from 'kysely'
import type { Progress } from '@modelcontextprotocol/sdk/types.js'
import type { Actor } from '../auth/actor.ts'
import type { BackgroundTaskStatus, Executor, Row } from '../db/schema.ts'
import { scoped } from '../db/scoped.ts'
import { inTransaction } from '../db/transaction.ts'
import { jsonb } from '../db/jsonb.ts'
import { ApiError } from '../errors.ts'
import { BackgroundTask } from '../models/background-task.ts'

export type TaskRow = Row<'background_tasks'>

/** A new task, as the service fills it in; the company is the actor's. */
export interface NewTask {
  id: string
  conversation_id: string | null
  agent_id: string | null
  tool: string
  arguments: Record<string, unknown>
  owner: string
  heartbeat_at: Date
}

/** How a task ended, as its row stores it. */
export interface Ending {
  status: Exclude<BackgroundTaskStatus, 'running'>
  result?: string | null
  result_truncated?: boolean
  error?: string | null
  finished_at: Date
}

/**
 * Inserts a running task unless the actor already has `limit` running. The count and the insert happen under a
 * transaction lock on the person, so two processes starting tasks for them at once cannot both slip under the limit.
 */
export async function insertWithinLimit(db: Executor, actor: Actor, task: NewTask, limit: number): Promise<void> {
  // In the caller's transaction when given one: the lock then lasts until it commits.
  await inTransaction(db, async (tx) => {
    await sql`SELECT pg_advisory_xact_lock(hashtextextended(${`background-tasks:${actor.userId}`}, 0))`.execute(tx)
    const { running } = await tx
      .selectFrom('background_tasks')
      .select(sql<number>`count(*)::int`.as('running'))
      .where('user_id', '=', actor.userId)
      .where('status', '=', 'running')
      .executeTakeFirstOrThrow()
    if (running >= limit) {
      throw new ApiError(
        'conflict',
        `You already have ${running} background task${running === 1 ? '' : 's'} running, and ${limit} at once is the limit per person: wait for one to finish, or cancel one.`,
      )
    }
    await scoped(tx, actor)
      .insertInto(BackgroundTask, { ...task, user_id: actor.userId, arguments: jsonb(task.arguments), status: 'running' })
      .execute()
  })
}

/** Stores the latest progress of a task still running. */
export async function writeProgress(db: Executor, id: string, progress: Progress): Promise<void> {
  await db
    .updateTable('background_tasks')
    .set({ progress: progress.progress, progress_total: progress.total ?? null, progress_message: progress.message ?? null, updated_at: sql<Date>`now()` })
    .where('id', '=', id)
    .where('status', '=', 'running')
    .execute()
}

function ending(end: Ending) {
  return {
    status: end.status,
    result: end.result ?? null,
    result_truncated: end.result_truncated ?? false,
    error: end.error ?? null,
    finished_at: end.finished_at,
    version: sql<number>`version + 1`,
    updated_at: sql<Date>`now()`,
  }
}

/**
 * Ends a task that is still running; undefined when something else ended it first (a cancel, an interruption). Every
 * way a task ends goes through a running → final update like this one, so exactly one writer tells the conversation.
 */
export async function endTask(db: Executor, id: string, end: Ending): Promise<TaskRow | undefined> {
  return db.updateTable('background_tasks').set(ending(end)).where('id', '=', id).where('status', '=', 'running').returningAll().executeTakeFirst()
}

/** The caller's own running task, cancelled; undefined when it is not running (or not theirs: the caller checks). */
export async function cancelTask(db: Executor, actor: Actor, id: string, at: Date): Promise<TaskRow | undefined> {
  return scoped(db, actor)
    .updateTable(BackgroundTask)
    .set(ending({ status: 'cancelled', finished_at: at }))
    .where('id', '=', id)
    .where('status', '=', 'running')
    .returningAll()
    .executeTakeFirst() as Promise<TaskRow | undefined>
}

/** Which of these tasks, run by `owner`, are still running: their heartbeat is refreshed. */
export async function beat(db: Executor, owner: string, ids: string[], at: Date): Promise<Set<string>> {
  if (ids.length === 0) return new Set()
  const rows = await db
    .updateTable('background_tasks')
    .set({ heartbeat_at: at })
    .where('id', 'in', ids)
    .where('owner', '=', owner)
    .where('status', '=', 'running')
    .returning('id')
    .execute()
  return new Set(rows.map((r) => r.id))
}

/**
 * Interrupts running tasks: those of `owner` among `ids` (a process stopping), every one (the embedded store's boot:
 * nothing else can be running them), or those whose heartbeat is older than `staleBefore` and not `owner`'s (another
 * process that stopped beating is gone).
 */
export async function interruptTasks(
  db: Executor,
  which: { owner: string; ids: string[] } | { all: true } | { staleBefore: Date; notOwner: string },
  end: Omit<Ending, 'status'>,
): Promise<TaskRow[]> {
  let query = db.updateTable('background_tasks').set(ending({ ...end, status: 'interrupted' })).where('status', '=', 'running')
  if ('ids' in which) {
    if (which.ids.length === 0) return []
    query = query.where('owner', '=', which.owner).where('id', 'in', which.ids)
  } else if ('staleBefore' in which) {
    query = query.where('heartbeat_at', '<', which.staleBefore).where('owner', '<>', which.notOwner)
  }
  return query.returningAll().execute()
}
