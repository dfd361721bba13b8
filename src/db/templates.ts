import { CompiledQuery, type Compilable } from 'kysely'
import { directFor, type Lane } from './connect.ts'
import type { Executor } from './schema.ts'

/**
 * Query templates: a hot read is built and compiled by Kysely once per shape, then reused with only its values
 * bound. Building and compiling a query costs more than running it on an indexed lookup (about two thirds of a
 * GET by id), and the SQL of one shape never changes.
 *
 * The builder receives stand-ins for the values that vary; after compiling, each parameter that is a stand-in
 * is remembered as a slot. The shape key must name everything the builder branches on: the same key must always
 * build the same SQL.
 */
const STAND_IN = '\u0001sb-slot:'
const LIMIT = 2_000

interface Template {
  sql: string
  /** Per parameter: the index of the value to bind, or the constant the builder wrote. */
  bind: Array<{ slot: number } | { constant: unknown }>
}

const templates = new Map<string, Template>()

/** A stand-in for value `i`, to pass wherever the builder would put a value. */
export function slot(i: number): any {
  return `${STAND_IN}${i}`
}

function compile(query: Compilable): Template {
  const compiled = query.compile()
  return {
    sql: compiled.sql,
    bind: compiled.parameters.map((p) =>
      typeof p === 'string' && p.startsWith(STAND_IN) ? { slot: Number(p.slice(STAND_IN.length)) } : { constant: p },
    ),
  }
}

/** Runs the template `key` (building it on first use) with `values` in its slots, on `lane` (see Lane). */
export async function runTemplate<Row = Record<string, unknown>>(db: Executor, key: string, build: () => Compilable, values: readonly unknown[], lane: Lane = 'pool'): Promise<Row[]> {
  let template = templates.get(key)
  if (!template) {
    // Shapes are bounded by the code, but list filters combine freely: a full cache starts over.
    if (templates.size >= LIMIT) templates.clear()
    template = compile(build())
    templates.set(key, template)
  }
  const parameters = template.bind.map((b) => ('slot' in b ? values[b.slot] : b.constant))
  return run<Row>(db, template.sql, parameters, lane)
}

/** Runs one statement (a write too) on the direct path where there is one, else through Kysely's driver. */
export async function execute<Row = Record<string, unknown>>(db: Executor, query: Compilable, lane: Lane = 'pool'): Promise<Row[]> {
  const { sql, parameters } = query.compile()
  return run<Row>(db, sql, parameters, lane)
}

/** Runs one statement written as SQL with positional parameters, on the direct path where there is one. */
export async function run<Row>(db: Executor, sql: string, parameters: readonly unknown[], lane: Lane = 'pool'): Promise<Row[]> {
  const direct = directFor(db)
  if (direct) return (await direct(sql, parameters, lane)) as Row[]
  return (await db.executeQuery<Row>(CompiledQuery.raw(sql, [...parameters]))).rows
}
