import { afterAll, expect, test } from 'bun:test'
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { PGlite } from '@electric-sql/pglite'
import { sql } from 'kysely'
import { openStore, opensNewDatabase } from '../../src/db/connect.ts'
import { readMigrations } from '../../src/db/migrate.ts'
import { migratedTemplate, restoreTemplate, templatePath } from '../../src/db/pgdata-template.ts'

const made: string[] = []
const tempDir = (purpose: string) => {
  const dir = mkdtempSync(join(tmpdir(), `switchboard-${purpose}-`))
  made.push(dir)
  return dir
}
afterAll(() => {
  for (const dir of made) rmSync(dir, { recursive: true, force: true })
})

test('a fresh data directory opens migrated and empty, and a restart keeps what was written', async () => {
  const dataDir = tempDir('template-data')
  expect(opensNewDatabase({ dataDir })).toBe(true)
  expect(opensNewDatabase({ dataDir, databaseUrl: 'postgres://127.0.0.1/x' })).toBe(false)
  const store = await openStore({ dataDir })
  expect(opensNewDatabase({ dataDir })).toBe(false)
  try {
    // One database: the templates that only CREATE DATABASE reads are not copied into every data directory.
    const databases = await sql<{ datname: string }>`SELECT datname FROM pg_database`.execute(store.db)
    expect(databases.rows.map((r) => r.datname)).toEqual(['postgres'])
    // Not PostgreSQL's 128 MB, which the embedded server zeroes at each start.
    const buffers = await sql<{ shared_buffers: string }>`SHOW shared_buffers`.execute(store.db)
    expect(buffers.rows).toEqual([{ shared_buffers: '32MB' }])
    const recorded = await sql<{ version: string }>`SELECT version FROM schema_migrations ORDER BY version`.execute(store.db)
    expect(recorded.rows.map((r) => r.version)).toEqual(readMigrations().map((m) => m.version))
    // The template is schema only: the first start must still create the superadmin, the company, the demo agent.
    const { rows } = await sql<{ users: number; companies: number }>`
      SELECT (SELECT count(*) FROM users)::int AS users, (SELECT count(*) FROM companies)::int AS companies`.execute(store.db)
    expect(rows[0]).toEqual({ users: 0, companies: 0 })
    await sql`INSERT INTO companies (id, name, slug) VALUES (${Bun.randomUUIDv7()}, 'Acme', 'acme')`.execute(store.db)
  } finally {
    await store.close()
  }
  expect(statSync(join(dataDir, 'pgdata')).mode & 0o777).toBe(0o700)
  expect(readdirSync(dataDir).filter((name) => name.includes('partial'))).toEqual([])

  const again = await openStore({ dataDir })
  try {
    const { rows } = await sql<{ slug: string }>`SELECT slug FROM companies`.execute(again.db)
    expect(rows).toEqual([{ slug: 'acme' }])
  } finally {
    await again.close()
  }
})

test('a changed migration set gets a template of its own; a damaged one is rebuilt; old ones are pruned', async () => {
  const cacheDir = tempDir('template-cache')
  const sqlDir = tempDir('template-sql')
  writeFileSync(join(sqlDir, '0001_first.sql'), 'CREATE TABLE first_table (id int);')
  const before = readMigrations(sqlDir)
  writeFileSync(join(sqlDir, '0002_second.sql'), 'CREATE TABLE second_table (id int);')
  const after = readMigrations(sqlDir)
  writeFileSync(join(sqlDir, '0002_second.sql'), 'CREATE TABLE second_table (id bigint);')
  const edited = readMigrations(sqlDir)
  const paths = [before, after, edited].map((migrations) => templatePath({ cacheDir, migrations }))
  expect(new Set(paths).size).toBe(3)

  // Templates of other migration sets, oldest first, a partial file a dead build left, one a live build is writing.
  const hoursAgo = (file: string, hours: number) => {
    writeFileSync(join(cacheDir, file), 'other')
    const when = new Date(Date.now() - hours * 3_600_000)
    utimesSync(join(cacheDir, file), when, when)
  }
  hoursAgo('pglite-oldest.tar', 3)
  hoursAgo('pglite-older.tar', 2)
  hoursAgo('pglite-old.tar', 1)
  hoursAgo('pglite-dead.tar.1.partial', 1)
  writeFileSync(join(cacheDir, 'pglite-live.tar.2.partial'), 'half')
  // The cached template of `after`, damaged.
  writeFileSync(paths[1]!, 'not a tarball')

  const pgdata = join(tempDir('template-restore'), 'pgdata')
  expect(await restoreTemplate(pgdata, { cacheDir, migrations: after })).toBe(true)
  const name = paths[1]!.split('/').pop()!
  expect(readdirSync(cacheDir).sort()).toEqual([name, 'pglite-live.tar.2.partial', 'pglite-old.tar', 'pglite-older.tar'])
  const cachedAt = statSync(paths[1]!).mtimeMs
  await migratedTemplate({ cacheDir, migrations: after })
  expect(statSync(paths[1]!).mtimeMs).toBe(cachedAt)

  const pglite = new PGlite(pgdata)
  try {
    const versions = await pglite.query<{ version: string }>('SELECT version FROM schema_migrations ORDER BY version')
    expect(versions.rows.map((r) => r.version)).toEqual(['0001_first', '0002_second'])
    const tables = await pglite.query<{ name: string }>(
      "SELECT table_name AS name FROM information_schema.tables WHERE table_schema = 'public' ORDER BY 1",
    )
    expect(tables.rows.map((r) => r.name)).toEqual(['first_table', 'schema_migrations', 'second_table'])
  } finally {
    await pglite.close()
  }
})

test('a database already there, or a directory that is not one, is left alone; a half copy is cleared away', async () => {
  const dataDir = tempDir('template-leave')
  const pgdata = join(dataDir, 'pgdata')
  mkdirSync(pgdata)
  writeFileSync(join(pgdata, 'PG_VERSION'), '17\n')
  expect(await restoreTemplate(pgdata)).toBe(false)

  const other = join(tempDir('template-other'), 'pgdata')
  mkdirSync(other)
  writeFileSync(join(other, 'notes.txt'), 'mine')
  expect(await restoreTemplate(other)).toBe(false)
  expect(readdirSync(other)).toEqual(['notes.txt'])

  // An interrupted first start: its half copy never became pgdata, and the next start clears it.
  const fresh = tempDir('template-half')
  mkdirSync(join(fresh, 'pgdata.partial-999999', 'base'), { recursive: true })
  mkdirSync(join(fresh, 'pgdata'))
  expect(await restoreTemplate(join(fresh, 'pgdata'))).toBe(true)
  expect(readdirSync(fresh)).toEqual(['pgdata'])
  expect(existsSync(join(fresh, 'pgdata', 'PG_VERSION'))).toBe(true)
})
