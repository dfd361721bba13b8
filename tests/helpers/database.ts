import postgres from 'postgres'
import { openPglite, openPostgres, wrapPglite, type Store } from '../../src/db/connect.ts'
import { migrate } from '../../src/db/migrate.ts'
import { migratedTemplate } from '../../src/db/pgdata-template.ts'

/** Set to a PostgreSQL server's URL to run the suites there instead of on PGlite (CI runs both). */
export const TEST_DATABASE_URL = process.env.TEST_DATABASE_URL || undefined
/**
 * Set beside TEST_DATABASE_URL when that is a transaction pooler (PgBouncer): the server itself, which the
 * platform reaches past the pooler for LISTEN, session locks and migrations (DATABASE_DIRECT_URL).
 */
export const TEST_DATABASE_DIRECT_URL = process.env.TEST_DATABASE_DIRECT_URL || undefined

/** A test database: its URL (through the pooler, if any) and the server's own URL for it when there is a pooler. */
export interface TestDatabase {
  url: string
  directUrl?: string
  drop: () => Promise<void>
}

/** A store on a test database, as a process of the platform opens it (past the pooler where it must). */
export function openTestStore(database: Pick<TestDatabase, 'url' | 'directUrl'>, maxConnections = 4): Store {
  return openPostgres(database.url, maxConnections, database.directUrl)
}

/** The environment a platform process is started with to use a test database. */
export function databaseEnv(database: Pick<TestDatabase, 'url' | 'directUrl'>): Record<string, string> {
  return { DATABASE_URL: database.url, ...(database.directUrl ? { DATABASE_DIRECT_URL: database.directUrl } : {}) }
}

let snapshot: Promise<Blob> | undefined

/**
 * The migrated template that a fresh data directory starts from (src/db/pgdata-template.ts), read once per test
 * process; each suite loads its own copy in well under a second.
 */
function migratedSnapshot(): Promise<Blob> {
  snapshot ??= migratedTemplate()
  return snapshot
}

/** Creates an empty database on the test server and returns its URL and a function that drops it. */
export async function createPostgresDatabase(): Promise<TestDatabase> {
  const name = `sb_test_${Bun.randomUUIDv7().replaceAll('-', '')}`
  // Made and dropped on the server itself: a pooler keeps connections to a database open, which DROP would wait for.
  const server = TEST_DATABASE_DIRECT_URL ?? TEST_DATABASE_URL!
  const admin = postgres(server, { max: 1, onnotice: () => {} })
  await admin.unsafe(`CREATE DATABASE ${name}`)
  await admin.end()
  const named = (base: string) => {
    const url = new URL(base)
    url.pathname = `/${name}`
    return url.toString()
  }
  return {
    url: named(TEST_DATABASE_URL!),
    ...(TEST_DATABASE_DIRECT_URL ? { directUrl: named(TEST_DATABASE_DIRECT_URL) } : {}),
    async drop() {
      const sql = postgres(server, { max: 1, onnotice: () => {} })
      await sql.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
      await sql.end()
    },
  }
}

/** A fresh database with no migrations applied, for tests of the migrations themselves; close() discards it. */
export async function emptyStore(): Promise<Store> {
  if (!TEST_DATABASE_URL) return wrapPglite(await openPglite())
  const database = await createPostgresDatabase()
  const store = openTestStore(database)
  return {
    ...store,
    async close() {
      await store.close()
      await database.drop()
    },
  }
}

/** A fresh, migrated database for one suite; close() discards it. */
export async function freshStore(): Promise<Store> {
  if (TEST_DATABASE_URL) {
    const database = await createPostgresDatabase()
    const store = openTestStore(database)
    await migrate(store.session)
    return {
      ...store,
      async close() {
        await store.close()
        await database.drop()
      },
    }
  }
  return wrapPglite(await openPglite({ loadDataDir: await migratedSnapshot() }))
}
