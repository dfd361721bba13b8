import type { Executor } from './schema.ts'

/** Runs `work` in the caller's transaction when `db` is one, else in a new one: what it writes commits together. */
export function inTransaction<T>(db: Executor, work: (tx: Executor) => Promise<T>): Promise<T> {
  return db.isTransaction ? work(db) : db.transaction().execute(work)
}
