import { join } from 'node:path'
import { PGlite, type PGliteOptions } from '@electric-sql/pglite'
import { Kysely, PGliteDialect } from 'kysely'
import { PostgresJSDialect } from 'kysely-postgres-js'
import postgres from 'postgres'
import { lockDataDir } from './lock.ts'
import type { Database, Db } from './schema.ts'
import { holdsDatabase, restoreTemplate } from './pgdata-template.ts'
import { countedDialect, PoolUse } from './pool-use.ts'
import { pgliteWasm } from './pglite-wasm.ts'

/**
 * Which connections a single statement goes out on. `keyed` is for statements that touch a few rows found by key
 * and never wait long (a record by id, a message stored, a lease taken): they share one connection, pipelined, so
 * that statements sent in the same moment leave in one write and come back in one read, and one backend answers
 * them instead of waking one per statement. Anything that may run long (a list, a count, a sweep) goes on the
 * `pool`, where it holds up nobody behind it.
 */
export type Lane = 'keyed' | 'pool'

/** Runs one statement straight on the driver, in its own implicit transaction. */
export type Direct = (sql: string, parameters: readonly unknown[], lane: Lane) => Promise<unknown[]>

// The direct path of each store's Kysely instance (see directFor).
const directs = new WeakMap<object, Direct>()

/**
 * A direct path for single statements outside a transaction: kysely-postgres-js reserves a dedicated connection
 * for every query, which costs a queue wait and stops postgres.js from pipelining on its pool. Undefined for a
 * transaction, which must run on its own connection, and for PGlite: its one connection may be inside another
 * request's transaction, which only Kysely's driver knows to wait for.
 */
export function directFor(db: object): Direct | undefined {
  return directs.get(db)
}

export interface Store {
  db: Db
  kind: 'postgres' | 'pglite'
  /**
   * PostgreSQL's URL for what needs a session of its own (the event bus's LISTEN, turn locks): the server itself,
   * past any transaction pooler in front of the pool.
   */
  url?: string
  /** Where work that keeps session state runs (the migrations' advisory lock): `db`, unless a pooler fronts it. */
  session: Db
  /** How its connections are used now (the embedded database has one). */
  pool: PoolUse
  /** Closes the pool (or the embedded database) and releases the data-directory lock. */
  close(): Promise<void>
}

export interface StoreOptions {
  databaseUrl?: string
  /**
   * The server itself when `databaseUrl` is a transaction pooler (PgBouncer): LISTEN, session locks and migrations
   * go here, and the pool sends no named prepared statements (a transaction pooler cannot keep them).
   */
  directUrl?: string
  dataDir: string
  /** Pool size for PostgreSQL. */
  maxConnections?: number
}

const embeddedData = (dataDir: string) => join(dataDir, 'pgdata')

/** Whether opening the store creates its database: the embedded one, on a data directory that holds none yet. */
export function opensNewDatabase(options: Pick<StoreOptions, 'databaseUrl' | 'dataDir'>): boolean {
  return !options.databaseUrl && !holdsDatabase(embeddedData(options.dataDir))
}

/**
 * DATABASE_URL set: PostgreSQL through postgres.js. Unset: embedded PGlite persisted in the data directory, which
 * on the first start is a copy of the migrated template (see pgdata-template.ts).
 */
export async function openStore(options: StoreOptions): Promise<Store> {
  if (options.databaseUrl) return openPostgres(options.databaseUrl, options.maxConnections, options.directUrl)
  const release = await lockDataDir(options.dataDir)
  try {
    const pgdata = embeddedData(options.dataDir)
    await restoreTemplate(pgdata)
    const pglite = await openPglite({ dataDir: pgdata })
    return wrapPglite(pglite, release)
  } catch (error) {
    release()
    throw error
  }
}

// PGlite's server keeps PostgreSQL's default of 128 MB of shared buffers, all of which its WebAssembly runtime
// touches as it starts: about 100 ms of each opening and 90 MiB of resident memory more than 32 MB, for a cache the
// operating system's page cache backs anyway (a buffer missed is a file read from it). 32 MB holds a small
// deployment's working set; a larger one belongs on PostgreSQL.
const EMBEDDED_SHARED_BUFFERS = '32MB'

/** A PGlite server as the platform runs it, in `options.dataDir` or, without one, in memory; answers once ready. */
export async function openPglite(options: Omit<PGliteOptions, 'startParams'> = {}): Promise<PGlite> {
  const pglite = new PGlite({
    ...options,
    pgliteWasmModule: await pgliteWasm(),
    startParams: [...PGlite.defaultStartParams, '-c', `shared_buffers=${EMBEDDED_SHARED_BUFFERS}`],
  })
  await pglite.waitReady
  return pglite
}

export function openPostgres(url: string, maxConnections = 10, directUrl?: string): Store {
  // Behind a transaction pooler a named prepared statement may meet another server connection than made it, and
  // queries written behind one still running wedge the connection (PgBouncer 1.18 forwards the first after the
  // server goes back to its pool, the rest never): each connection then waits for its query's answer before the next.
  const behindPooler = directUrl !== undefined
  const prepare = !behindPooler
  // Quiet notices ("relation already exists, skipping") that would otherwise reach stdout.
  const client = postgres(url, { max: maxConnections, onnotice: () => {}, prepare, ...(behindPooler ? { max_pipeline: 0 } : {}) })
  // One connection: a single backend answers tens of thousands of keyed statements a second, more than one process
  // sends. Against the pool it served 0.90-0.93x the raw baseline's GETs by id where spreading them over ten
  // connections served 0.54-0.65x (bench/crud.ts). A pooler cannot take pipelined queries, so behind one there is
  // no such lane.
  const keyed = behindPooler ? client : postgres(url, { max: 1, onnotice: () => {}, prepare })
  const pool = new PoolUse(maxConnections)
  const db = new Kysely<Database>({ dialect: countedDialect(new PostgresJSDialect({ postgres: client }), pool) })
  directs.set(db, (sql, parameters, lane) => pool.counted((lane === 'keyed' ? keyed : client).unsafe(sql, parameters as never[], { prepare })))
  const sessionClient = directUrl ? postgres(directUrl, { max: 1, onnotice: () => {} }) : undefined
  const session = sessionClient ? new Kysely<Database>({ dialect: new PostgresJSDialect({ postgres: sessionClient }) }) : db
  // Kysely's destroy can wait for ever on a query of its own still queued for a connection (kysely-postgres-js
  // reserves one per query); after a grace period the pool's connections are ended regardless. Ending them can wait
  // on such a reserved connection too (seen with a feed's publishes in flight), so that is bounded as well: a close
  // must return, and the server drops the connections when the process ends.
  const close = async () => {
    await Promise.race([db.destroy(), Bun.sleep(5_000)])
    await Promise.race([client.end({ timeout: 0 }), Bun.sleep(2_000)])
    if (keyed !== client) await Promise.race([keyed.end({ timeout: 0 }), Bun.sleep(2_000)])
    if (sessionClient) {
      await Promise.race([session.destroy(), Bun.sleep(2_000)])
      await Promise.race([sessionClient.end({ timeout: 0 }), Bun.sleep(2_000)])
    }
  }
  return { db, kind: 'postgres', url: directUrl ?? url, session, pool, close }
}

export function wrapPglite(pglite: PGlite, release: () => void = () => {}): Store {
  const pool = new PoolUse(1)
  const db = new Kysely<Database>({ dialect: countedDialect(new PGliteDialect({ pglite }), pool) })
  return {
    db,
    kind: 'pglite',
    session: db,
    pool,
    async close() {
      try {
        await db.destroy()
        if (!pglite.closed) await pglite.close()
      } finally {
        release()
      }
    },
  }
}
