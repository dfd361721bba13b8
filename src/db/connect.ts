import { join } from 'node:path'
import { PGlite } from '@electric-sql/pglite'
import { Kysely, PGliteDialect } from 'kysely'
import { PostgresJSDialect } from 'kysely-postgres-js'
import postgres from 'postgres'
import { lockDataDir } from './lock.ts'
import type { Database, Db } from './schema.ts'

export interface Store {
  db: Db
  kind: 'postgres' | 'pglite'
  /** Closes the pool (or the embedded database) and releases the data-directory lock. */
  close(): Promise<void>
}

export interface StoreOptions {
  databaseUrl?: string
  dataDir: string
  /** Pool size for PostgreSQL. */
  maxConnections?: number
}

/** DATABASE_URL set: PostgreSQL through postgres.js. Unset: embedded PGlite persisted in the data directory. */
export async function openStore(options: StoreOptions): Promise<Store> {
  if (options.databaseUrl) return openPostgres(options.databaseUrl, options.maxConnections)
  const release = lockDataDir(options.dataDir)
  try {
    const pglite = new PGlite(join(options.dataDir, 'pgdata'))
    await pglite.waitReady
    return wrapPglite(pglite, release)
  } catch (error) {
    release()
    throw error
  }
}

export function openPostgres(url: string, maxConnections = 10): Store {
  // Quiet notices ("relation already exists, skipping") that would otherwise reach stdout.
  const client = postgres(url, { max: maxConnections, onnotice: () => {} })
  const db = new Kysely<Database>({ dialect: new PostgresJSDialect({ postgres: client }) })
  return { db, kind: 'postgres', close: () => db.destroy() }
}

export function wrapPglite(pglite: PGlite, release: () => void = () => {}): Store {
  const db = new Kysely<Database>({ dialect: new PGliteDialect({ pglite }) })
  return {
    db,
    kind: 'pglite',
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
