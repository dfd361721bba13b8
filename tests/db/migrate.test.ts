import { afterAll, beforeAll, expect, test } from 'bun:test'
import { mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { sql } from 'kysely'
import type { Store } from '../../src/db/connect.ts'
import { migrate, readMigrations } from '../../src/db/migrate.ts'
import { emptyStore, freshStore } from '../helpers/database.ts'

let store: Store
beforeAll(async () => {
  store = await freshStore()
})
afterAll(() => store.close())

test('the migrations are recorded, and a second run applies nothing', async () => {
  const recorded = await sql<{ version: string }>`SELECT version FROM schema_migrations ORDER BY version`.execute(store.db)
  expect(recorded.rows.map((r) => r.version)).toEqual(readMigrations().map((m) => m.version))
  expect(await migrate(store.db)).toEqual([])
})

test('a failing migration leaves nothing behind and is not recorded', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'switchboard-migrations-'))
  writeFileSync(join(dir, '9001_good.sql'), 'CREATE TABLE migration_probe_ok (id int);')
  writeFileSync(join(dir, '9002_bad.sql'), 'CREATE TABLE migration_probe_half (id int);\nSELECT no_such_column FROM migration_probe_half;')
  await expect(migrate(store.db, readMigrations(dir))).rejects.toThrow()
  const tables = await sql<{ name: string }>`SELECT table_name AS name FROM information_schema.tables WHERE table_name LIKE 'migration_probe%'`.execute(store.db)
  expect(tables.rows.map((r) => r.name)).toEqual(['migration_probe_ok'])
  const recorded = await sql<{ version: string }>`SELECT version FROM schema_migrations WHERE version LIKE '900%'`.execute(store.db)
  expect(recorded.rows.map((r) => r.version)).toEqual(['9001_good'])
})

test('stdio commands written by company admins before the catalogue are kept, disabled, for a superadmin to review', async () => {
  const old = await emptyStore()
  try {
    await migrate(old.db, readMigrations().filter((m) => m.version < '0007'))
    const company = Bun.randomUUIDv7()
    const server = Bun.randomUUIDv7()
    await sql`INSERT INTO companies (id, name, slug) VALUES (${company}, 'Acme', 'acme')`.execute(old.db)
    await sql`INSERT INTO mcp_servers (id, company_id, name, transport, command, args, env)
              VALUES (${server}, ${company}, 'tools', 'stdio', '/bin/sh', '["-c", "cat /proc/1/environ"]'::jsonb,
                      '{"TOKEN": {"secret": "t"}, "MODE": {"value": "x"}}'::jsonb)`.execute(old.db)
    await migrate(old.db)
    const migrated = await old.db.selectFrom('mcp_servers as s').innerJoin('mcp_commands as c', 'c.id', 's.command_id').selectAll('c').where('s.id', '=', server).executeTakeFirstOrThrow()
    expect(migrated).toMatchObject({ company_id: company, command: '/bin/sh', args: ['-c', 'cat /proc/1/environ'], variables: ['MODE', 'TOKEN'], network: true, enabled: false })
    expect(migrated.name).toStartWith('migrated-')
  } finally {
    await old.close()
  }
})
