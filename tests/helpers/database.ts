import { PGlite } from '@electric-sql/pglite'
import postgres from 'postgres'
import { openPostgres, wrapPglite, type Store } from '../../src/db/connect.ts'
import { migrate } from '../../src/db/migrate.ts'
import { migratedTemplate } from '../../src/db/pgdata-template.ts'

/** Set to a PostgreSQL server's URL to run the suites there instead of on PGlite (CI runs both). */
export const TEST_DATABASE_URL = process.env.TEST_DATABASE_URL || undefined

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
export async function createPostgresDatabase(): Promise<{ url: string; drop: () => Promise<void> }> {
  const name = `sb_test_${Bun.randomUUIDv7().replaceAll('-', '')}`
  const admin = postgres(TEST_DATABASE_URL!, { max: 1, onnotice: () => {} })
  await admin.unsafe(`CREATE DATABASE ${name}`)
  await admin.end()
  const url = new URL(TEST_DATABASE_URL!)
  url.pathname = `/${name}`
  return {
    url: url.toString(),
    async drop() {
      const sql = postgres(TEST_DATABASE_URL!, { max: 1, onnotice: () => {} })
      await sql.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)
      await sql.end()
    },
  }
}

/** A fresh database with no migrations applied, for tests of the migrations themselves; close() discards it. */
export async function emptyStore(): Promise<Store> {
  if (!TEST_DATABASE_URL) return wrapPglite(new PGlite())
  const database = await createPostgresDatabase()
  const store = openPostgres(database.url, 4)
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
    const store = openPostgres(database.url, 4)
    await migrate(store.db)
    return {
      ...store,
      async close() {
        await store.close()
        await database.drop()
      },
    }
  }
  const pglite = new PGlite({ loadDataDir: await migratedSnapshot() })
  await pglite.waitReady
  return wrapPglite(pglite)
}
