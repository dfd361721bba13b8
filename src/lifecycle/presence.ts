import { hostname } from 'node:os'
import type { Clock } from '../clock.ts'
import type { Db } from '../db/schema.ts'
import { VERSION } from '../version.ts'

/** How often a process beats; one not heard for three beats is not counted alive. */
export const BEAT_MS = 10_000
/** Rows of processes not heard for this long are deleted by whichever process beats next. */
const FORGET_MS = 24 * 60 * 60_000

/** A process as the status lists it. */
export interface ProcessView {
  id: string
  host: string
  pid: number
  version: string
  started_at: string
  last_seen_at: string
  draining: boolean
}

/** This process's row among the platform's processes: written at each beat, removed when it stops. */
export class Presence {
  readonly id = crypto.randomUUID()
  readonly #startedAt: Date

  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    /** Whether this process drains, said with each beat. */
    private readonly draining: () => boolean,
  ) {
    this.#startedAt = new Date(clock.now())
  }

  async beat(): Promise<void> {
    const now = new Date(this.clock.now())
    const row = { host: hostname(), pid: process.pid, version: VERSION, last_seen_at: now, draining: this.draining() }
    await this.db
      .insertInto('processes')
      .values({ id: this.id, started_at: this.#startedAt, ...row })
      .onConflict((oc) => oc.column('id').doUpdateSet(row))
      .execute()
    await this.db.deleteFrom('processes').where('last_seen_at', '<', new Date(now.getTime() - FORGET_MS)).execute()
  }

  /** The processes heard from within three beats, this one first. */
  async alive(): Promise<ProcessView[]> {
    const rows = await this.db
      .selectFrom('processes')
      .selectAll()
      .where('last_seen_at', '>=', new Date(this.clock.now() - 3 * BEAT_MS))
      .orderBy('started_at')
      .execute()
    const views = rows.map((r) => ({ ...r, started_at: new Date(r.started_at).toISOString(), last_seen_at: new Date(r.last_seen_at).toISOString() }))
    return [...views.filter((v) => v.id === this.id), ...views.filter((v) => v.id !== this.id)]
  }

  /** Stopping: the row goes, so the status no longer counts this process. */
  async leave(): Promise<void> {
    await this.db.deleteFrom('processes').where('id', '=', this.id).execute()
  }
}
