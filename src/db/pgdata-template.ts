import { createHash } from 'node:crypto'
import {
  chmodSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  renameSync,
  rmdirSync,
  rmSync,
  statSync,
  writeFileSync,
} from 'node:fs'
import { basename, dirname, join } from 'node:path'
import { fileURLToPath } from 'node:url'
import { PGlite } from '@electric-sql/pglite'
import { Kysely, PGliteDialect, sql } from 'kysely'
import { migrate, readMigrations, type Migration } from './migrate.ts'
import { pgliteWasm } from './pglite-wasm.ts'
import type { Database } from './schema.ts'

/**
 * The migrated template of the embedded database: the data directory of a PGlite on which every migration has run
 * and nothing else, as a tarball. A fresh data directory starts as a copy of it, because PGlite's initdb costs
 * seconds (several times more when it writes into a directory than in memory) and unpacking the tarball a fraction
 * of one. The test suites load it too.
 *
 * It is cached under node_modules, where `npm ci` (the root package's `prepare` script) builds it, and is named
 * after what went into it, so that a changed migration set or PGlite version is never served an old one: the first
 * use after such a change builds it again.
 */
export const TEMPLATE_CACHE_DIR = join(import.meta.dir, '..', '..', 'node_modules', '.cache', 'switchboard')

// Raised when the way a template is made changes, so that templates made the old way are not reused.
const FORMAT = 2

export interface TemplateOptions {
  cacheDir?: string
  migrations?: Migration[]
}

/** Where the template of these migrations is cached: named after them, the PGlite version and FORMAT. */
export function templatePath({ cacheDir = TEMPLATE_CACHE_DIR, migrations = readMigrations() }: TemplateOptions = {}): string {
  const key = createHash('sha256').update(JSON.stringify({ FORMAT, pglite: pgliteVersion(), migrations }))
  return join(cacheDir, `pglite-${key.digest('hex').slice(0, 20)}.tar`)
}

let version: string | undefined

function pgliteVersion(): string {
  if (version) return version
  // The package's exports do not include its package.json: walk up from its entry point.
  const entry = fileURLToPath(import.meta.resolve('@electric-sql/pglite'))
  for (let dir = dirname(entry); dir !== dirname(dir); dir = dirname(dir)) {
    const manifest = join(dir, 'package.json')
    if (!existsSync(manifest)) continue
    const { name, version: found } = JSON.parse(readFileSync(manifest, 'utf8')) as { name?: string; version?: string }
    if (name === '@electric-sql/pglite' && found) return (version = found)
  }
  throw new Error('Could not find the version of @electric-sql/pglite')
}

/** The template from the cache, or built and (where the cache can be written) cached. */
export async function migratedTemplate(options: TemplateOptions = {}): Promise<Blob> {
  const migrations = options.migrations ?? readMigrations()
  const path = templatePath({ ...options, migrations })
  try {
    return new Blob([await Bun.file(path).bytes()])
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'ENOENT') throw error
  }
  const image = await buildTemplate(migrations)
  try {
    await saveTemplate(path, image)
  } catch {
    // A read-only installation goes without the cache: each first start builds the template, in a few seconds.
  }
  return image
}

export async function buildTemplate(migrations: Migration[]): Promise<Blob> {
  // In memory: initdb writing into a directory through PGlite's file system layer is several times slower.
  const pglite = new PGlite({ pgliteWasmModule: await pgliteWasm() })
  const db = new Kysely<Database>({ dialect: new PGliteDialect({ pglite }) })
  try {
    await migrate(db, migrations)
    // The platform's one database is `postgres`. The template databases serve only CREATE DATABASE, which the
    // embedded store never runs, and were two thirds of the files each first start writes.
    for (const name of ['template0', 'template1']) {
      await sql.raw(`ALTER DATABASE ${name} IS_TEMPLATE false`).execute(db)
      await sql.raw(`DROP DATABASE ${name}`).execute(db)
    }
    // The dump is of a running database, so each copy replays the write-ahead log from the last checkpoint when it
    // first opens: this keeps that replay short.
    await sql`CHECKPOINT`.execute(db)
    return await pglite.dumpDataDir('none')
  } finally {
    await db.destroy()
    if (!pglite.closed) await pglite.close()
  }
}

// Templates kept: a few checkouts or branches with other migrations may share one node_modules.
const KEEP = 3
// A partial file this old is what a build that died left behind, not one in progress.
const ABANDONED_MS = 10 * 60_000

/** Writes under a temporary name and renames, so a reader never sees half a template. Prunes the oldest ones. */
async function saveTemplate(path: string, image: Blob): Promise<void> {
  const dir = dirname(path)
  mkdirSync(dir, { recursive: true })
  const partial = `${path}.${process.pid}.partial`
  writeFileSync(partial, new Uint8Array(await image.arrayBuffer()))
  renameSync(partial, path)
  const files = readdirSync(dir)
    .filter((name) => name.startsWith('pglite-'))
    .map((name) => ({ path: join(dir, name), name, modified: statSync(join(dir, name), { throwIfNoEntry: false })?.mtimeMs ?? 0 }))
  const templates = files.filter((file) => file.name.endsWith('.tar')).sort((a, b) => b.modified - a.modified)
  const abandoned = files.filter((file) => file.name.endsWith('.partial') && Date.now() - file.modified > ABANDONED_MS)
  for (const file of [...templates.slice(KEEP), ...abandoned]) rmSync(file.path, { force: true })
}

/** Whether a PostgreSQL data directory is there, made by the template or by an earlier PGlite. */
export function holdsDatabase(pgdata: string): boolean {
  return existsSync(join(pgdata, 'PG_VERSION'))
}

/**
 * Makes `pgdata` a copy of the template when it holds no database yet. The copy is unpacked beside it and renamed
 * into place, so an interrupted first start leaves no half database that would pass for a whole one.
 * The caller holds the data directory's lock.
 */
export async function restoreTemplate(pgdata: string, options: TemplateOptions = {}): Promise<boolean> {
  if (holdsDatabase(pgdata)) return false
  // Something that is not a database: leave it to PGlite, as before there was a template.
  if (existsSync(pgdata) && readdirSync(pgdata).length > 0) return false
  const parent = dirname(pgdata)
  for (const name of readdirSync(parent)) {
    if (name.startsWith(`${basename(pgdata)}.partial-`)) rmSync(join(parent, name), { recursive: true, force: true })
  }
  const partial = `${pgdata}.partial-${process.pid}`
  try {
    await unpack(await migratedTemplate(options), partial)
  } catch {
    // A damaged cache file would fail every first start: it is replaced by a new build.
    rmSync(partial, { recursive: true, force: true })
    rmSync(templatePath(options), { force: true })
    await unpack(await migratedTemplate(options), partial)
  }
  // The database is for the platform's user only (PGlite's initdb would leave it readable by all).
  chmodSync(partial, 0o700)
  // An empty directory is replaced; rmdir refuses anything more.
  if (existsSync(pgdata)) rmdirSync(pgdata)
  renameSync(partial, pgdata)
  return true
}

async function unpack(image: Blob, dir: string): Promise<void> {
  await new Bun.Archive(image).extract(dir)
  if (!existsSync(join(dir, 'PG_VERSION'))) throw new Error('The database template holds no database')
}

// `bun src/db/pgdata-template.ts`, run by `npm ci` and `npm install` through the `prepare` script.
if (import.meta.main) {
  const started = performance.now()
  try {
    const path = templatePath()
    if (!existsSync(path)) await migratedTemplate()
    const seconds = ((performance.now() - started) / 1000).toFixed(1)
    if (existsSync(path)) console.log(`The embedded database template is ready (${seconds} s).`)
    else console.warn(`Could not write ${path}; the first start will build the template.`)
  } catch (error) {
    // Never fails an installation: the first start builds the template instead, a few seconds slower.
    console.warn(`Could not build the embedded database template (${(error as Error).message}); the first start will.`)
  }
}
