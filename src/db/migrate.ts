import { readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { sql } from 'kysely'
import type { Db } from './schema.ts'
import { splitSql } from './split-sql.ts'

export const MIGRATIONS_DIR = join(import.meta.dir, '..', '..', 'sql')

export interface Migration {
  version: string
  statements: string[]
}

export function readMigrations(dir = MIGRATIONS_DIR): Migration[] {
  return readdirSync(dir)
    .filter((name) => /^\d{4}_.+\.sql$/.test(name))
    .sort()
    .map((name) => ({
      version: name.replace(/\.sql$/, ''),
      statements: splitSql(readFileSync(join(dir, name), 'utf8')),
    }))
}

// Any 64-bit constant works; this one spells "switchbd" so it is easy to spot in pg_locks.
const MIGRATION_LOCK = 0x7377697463686264n

/**
 * Applies the migrations not yet recorded, in order, each in its own transaction. A session advisory lock makes
 * processes that start together against one PostgreSQL take turns instead of racing.
 */
export async function migrate(db: Db, migrations = readMigrations()): Promise<string[]> {
  return db.connection().execute(async (conn) => {
    await sql`SELECT pg_advisory_lock(${sql.lit(MIGRATION_LOCK.toString())}::bigint)`.execute(conn)
    try {
      await sql`CREATE TABLE IF NOT EXISTS schema_migrations (
        version text PRIMARY KEY,
        applied_at timestamptz NOT NULL DEFAULT now()
      )`.execute(conn)
      const done = new Set(
        (await sql<{ version: string }>`SELECT version FROM schema_migrations`.execute(conn)).rows.map((r) => r.version),
      )
      const applied: string[] = []
      for (const migration of migrations) {
        if (done.has(migration.version)) continue
        await conn.transaction().execute(async (tx) => {
          for (const statement of migration.statements) await sql.raw(statement).execute(tx)
          await sql`INSERT INTO schema_migrations (version) VALUES (${migration.version})`.execute(tx)
        })
        applied.push(migration.version)
      }
      return applied
    } finally {
      await sql`SELECT pg_advisory_unlock(${sql.lit(MIGRATION_LOCK.toString())}::bigint)`.execute(conn)
    }
  })
}
