import { sql, type AliasableExpression, type Expression, type ExpressionBuilder, type SqlBool } from 'kysely'
import { ApiError } from '../api/errors.ts'
import type { Actor } from '../auth/actor.ts'
import { scoped } from '../db/scoped.ts'
import type { Executor } from '../db/schema.ts'
import type { Model } from './define.ts'
import type { Filter, ListQuery } from './list-query.ts'
import { mergePatch } from './merge-patch.ts'
import { validationError } from './validation.ts'

export type ApiRecord = Record<string, unknown>

/** A record as a caller sees it, with the version its ETag is made from. */
export interface Versioned {
  record: ApiRecord
  version: number
}

type Eb = ExpressionBuilder<any, any>

function field(eb: Eb, model: Model, name: string): AliasableExpression<unknown> {
  return model.computed?.[name]?.select(eb) ?? sql.ref(`${model.table}.${name}`)
}

function selection(model: Model, fields?: readonly string[]) {
  const names = fields ?? [...model.columns, ...Object.keys(model.computed ?? {})]
  return (eb: Eb) => [...names.map((name) => field(eb, model, name).as(name)), sql.ref(`${model.table}.version`).as('version')]
}

function condition(eb: Eb, model: Model, filter: Filter): Expression<SqlBool> {
  const lhs = field(eb, model, filter.field)
  switch (filter.op) {
    case 'is':
      return filter.value === null ? sql<SqlBool>`${lhs} is null` : filter.value ? sql<SqlBool>`${lhs} is true` : sql<SqlBool>`${lhs} is false`
    case 'in':
      return eb(lhs, 'in', filter.value as unknown[])
    case 'like':
    case 'ilike':
      return eb(lhs, filter.op, filter.value)
    default:
      return eb(lhs, ({ eq: '=', neq: '<>', gt: '>', gte: '>=', lt: '<', lte: '<=' } as const)[filter.op], filter.value)
  }
}

/** Separates the version and writes timestamps as ISO-8601 UTC, as every response shows them. */
function split(row: Record<string, unknown>): Versioned {
  const { version, ...record } = row
  for (const key in record) if (record[key] instanceof Date) record[key] = (record[key] as Date).toISOString()
  return { record, version: Number(version) }
}

/**
 * A jsonb value as a text parameter cast in SQL: postgres.js would serialise a parameter it knows is jsonb once
 * more (storing a JSON string), while PGlite would not; as text both drivers send it unchanged.
 */
function jsonb(value: unknown) {
  return sql`${JSON.stringify(value)}::text::jsonb`
}

/** Validated input → column values: the model's own conversion, then JSON fields as jsonb. */
async function toColumns(model: Model, input: ApiRecord, actor: Actor): Promise<ApiRecord> {
  const row = model.toRow ? await model.toRow(input, actor) : { ...input }
  for (const column of model.jsonColumns) if (column in row) row[column] = jsonb(row[column])
  return row
}

export async function listRecords(db: Executor, actor: Actor, model: Model, query: ListQuery) {
  const where = (eb: Eb) => eb.and(query.filters.map((f) => condition(eb, model, f)))
  const s = scoped(db, actor)
  let rows = s.selectFrom(model).select(selection(model, query.select)).where(where)
  for (const { field: name, direction } of query.order) rows = rows.orderBy((eb: Eb) => field(eb, model, name), direction)
  // The id (UUIDv7, so creation order) breaks ties: pages never repeat or skip a row.
  rows = rows.orderBy(`${model.table}.id`, query.order.at(-1)?.direction ?? 'asc').limit(query.limit).offset(query.offset)
  const [data, total] = await Promise.all([
    rows.execute(),
    query.count
      ? s.selectFrom(model).select(sql<number>`count(*)::int`.as('count')).where(where).executeTakeFirstOrThrow()
      : undefined,
  ])
  return {
    data: data.map((row: Record<string, unknown>) => split(row).record),
    count: total === undefined ? undefined : Number(total.count),
  }
}

export async function getRecord(db: Executor, actor: Actor, model: Model, id: string): Promise<Versioned> {
  const row = await scoped(db, actor)
    .selectFrom(model)
    .select(selection(model))
    .where(`${model.table}.id`, '=', id)
    .executeTakeFirst()
  if (!row) throw notFound(model, id)
  return split(row)
}

export async function createRecord(db: Executor, actor: Actor, model: Model, input: ApiRecord): Promise<Versioned> {
  const stamps = Object.fromEntries((model.actorColumns ?? []).map((column) => [column, actor.userId]))
  const row = { ...(await toColumns(model, input, actor)), ...stamps, id: Bun.randomUUIDv7() }
  return split(await scoped(db, actor).insertInto(model, row).returning(selection(model)).executeTakeFirstOrThrow())
}

/**
 * Writes `input` over the record if its version is still `expected` (when given). A stale version is a 412 so
 * that concurrent edits are never silently lost.
 */
export async function replaceRecord(
  db: Executor,
  actor: Actor,
  model: Model,
  id: string,
  input: ApiRecord,
  expected?: number,
): Promise<Versioned> {
  const row = await scoped(db, actor)
    .updateTable(model)
    .set({ ...(await toColumns(model, input, actor)), version: sql`version + 1`, updated_at: sql`now()` })
    .where(`${model.table}.id`, '=', id)
    .$if(expected !== undefined, (q: any) => q.where(`${model.table}.version`, '=', expected))
    .returning(selection(model))
    .executeTakeFirst()
  if (row) return split(row)
  await getRecord(db, actor, model, id) // 404 when it is gone or never was ours
  throw stale(model)
}

/** JSON merge patch (RFC 7396) over the writable fields, validated whole, written only if nobody wrote between. */
export async function patchRecord(
  db: Executor,
  actor: Actor,
  model: Model,
  id: string,
  patch: ApiRecord,
  expected?: number,
): Promise<Versioned> {
  for (let attempt = 0; attempt < 5; attempt++) {
    const current = await getRecord(db, actor, model, id)
    if (expected !== undefined && current.version !== expected) throw stale(model)
    const writable = Object.fromEntries(Object.keys(model.create.shape).filter((k) => k in current.record).map((k) => [k, current.record[k]]))
    const parsed = model.create.safeParse(mergePatch(writable, patch))
    if (!parsed.success) throw validationError(parsed.error)
    try {
      return await replaceRecord(db, actor, model, id, parsed.data, current.version)
    } catch (error) {
      // Someone wrote between our read and our write: with If-Match that is the caller's 412, otherwise merge again.
      if (expected !== undefined || !(error instanceof ApiError && error.code === 'precondition_failed')) throw error
    }
  }
  throw new ApiError('conflict', `The ${model.name} keeps changing under this patch; try again.`)
}

export async function deleteRecord(db: Executor, actor: Actor, model: Model, id: string, expected?: number): Promise<void> {
  const row = await scoped(db, actor)
    .deleteFrom(model)
    .where(`${model.table}.id`, '=', id)
    .$if(expected !== undefined, (q: any) => q.where(`${model.table}.version`, '=', expected))
    .returning(`${model.table}.id`)
    .executeTakeFirst()
  if (row) return
  await getRecord(db, actor, model, id)
  throw stale(model)
}

function notFound(model: Model, id: string): ApiError {
  return new ApiError('not_found', `No ${model.name} with id ${id}.`)
}

function stale(model: Model): ApiError {
  return new ApiError('precondition_failed', `The ${model.name} has changed since the version named in If-Match; read it again and retry.`)
}
