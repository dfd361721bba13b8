import { jsonb } from '../db/jsonb.ts'
import { sql, type AliasableExpression, type Expression, type ExpressionBuilder, type SqlBool } from 'kysely'
import { ApiError, type FieldError } from '../errors.ts'
import type { Actor } from '../auth/actor.ts'
import { scoped } from '../db/scoped.ts'
import { runTemplate, slot } from '../db/templates.ts'
import type { Executor, TableName } from '../db/schema.ts'
import type { WriteScope } from '../events/writes.ts'
import type { Model, RecordOf } from './define.ts'
import type { Filter, ListQuery } from './list-query.ts'
import { mergePatch } from './merge-patch.ts'
import { audit } from '../audit/trail.ts'
import { recordChanges } from '../audit/changes.ts'
import { inTransaction } from '../db/transaction.ts'
import { validationError } from './validation.ts'

export type ApiRecord = Record<string, unknown>

/** A record as a caller sees it, with the version its ETag is made from. */
export interface Versioned<R = ApiRecord> {
  record: R
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
function split<T extends TableName>(row: Record<string, unknown>): Versioned<RecordOf<T>> {
  const { version, ...record } = row
  for (const key in record) {
    const value = record[key]
    if (value instanceof Date) record[key] = value.toISOString()
  }
  // The one place a row becomes typed: it was selected by the model's own columns (see selection).
  return { record: record as RecordOf<T>, version: Number(version) }
}


/** Validated input → column values: the model's own conversion, then JSON fields as jsonb. */
async function toColumns(model: Model, input: ApiRecord, actor: Actor): Promise<ApiRecord> {
  const row = model.toRow ? await model.toRow(input, actor) : { ...input }
  for (const column of model.jsonColumns) if (column in row) row[column] = jsonb(row[column])
  return row
}

/**
 * What a record rule may branch on. Rules bind the actor's ids as values, so one compiled query serves every
 * actor of the same shape (see db/templates.ts).
 */
function shapeOf(actor: Actor): string {
  return `${actor.isSuperadmin ? 's' : '-'}${actor.role ?? '-'}${actor.companyId === null ? 'n' : 'c'}`
}

/** The actor with its ids replaced by stand-ins for values 0 and 1. */
function standInActor(actor: Actor): Actor {
  return { ...actor, userId: slot(0), companyId: actor.companyId === null ? null : slot(1) }
}

export async function listRecords(db: Executor, actor: Actor, model: Model, query: ListQuery) {
  // Values in slot order: the actor's ids, each filter value, then limit and offset.
  const values: unknown[] = [actor.userId, actor.companyId]
  const standIn = (value: unknown) => slot(values.push(value) - 1)
  const filters = query.filters.map((f) => ({
    ...f,
    value: f.op === 'is' ? f.value : f.op === 'in' ? (f.value as unknown[]).map(standIn) : standIn(f.value),
  }))
  const [limit, offset] = [standIn(query.limit), standIn(query.offset)]
  const shape = [
    model.name,
    shapeOf(actor),
    filters.map((f) => `${f.field}.${f.op}${f.op === 'is' ? String(f.value) : f.op === 'in' ? (f.value as unknown[]).length : ''}`).join(','),
    query.order.map((o) => `${o.field}.${o.direction}`).join(','),
    query.select?.join(',') ?? '*',
  ].join('|')

  const where = (eb: Eb) => eb.and(filters.map((f) => condition(eb, model, f)))
  const page = () => {
    let rows = scoped(db, standInActor(actor)).selectFrom(model).select(selection(model, query.select)).where(where)
    for (const { field: name, direction } of query.order) rows = rows.orderBy((eb: Eb) => field(eb, model, name), direction)
    // The id (UUIDv7, so creation order) breaks ties: pages never repeat or skip a row.
    return rows.orderBy(`${model.table}.id`, query.order.at(-1)?.direction ?? 'asc').limit(limit).offset(offset)
  }
  const total = () => scoped(db, standInActor(actor)).selectFrom(model).select(sql<number>`count(*)::int`.as('count')).where(where)
  const [data, counted] = await Promise.all([
    runTemplate(db, `list|${shape}`, page, values),
    query.count ? runTemplate<{ count: number }>(db, `count|${shape}`, total, values) : undefined,
  ])
  return {
    data: data.map((row) => split(row).record),
    count: counted === undefined ? undefined : Number(counted[0]!.count),
  }
}

/** The model's id column: code written for any model names it by its table at run time. */
function idOf(model: Model) {
  return sql.ref<string>(`${model.table}.id`)
}

function byId(db: Executor, actor: Actor, model: Model, id: string, fields?: readonly string[]) {
  return scoped(db, actor).selectFrom(model).select(selection(model, fields)).where(idOf(model), '=', id)
}

export async function getRecord<T extends TableName>(
  db: Executor,
  actor: Actor,
  model: Model<T>,
  id: string,
  options: { forUpdate?: boolean } = {},
): Promise<Versioned<RecordOf<T>>> {
  const row = options.forUpdate ? await byId(db, actor, model, id).forUpdate(model.table).executeTakeFirst() : await keyedById(db, actor, model, id)
  if (!row) throw notFound(model, id)
  return split<T>(row)
}

/** One record (or some of its fields) as the actor reads it, on the keyed lane: compiled once per model, caller's shape and fields. */
async function keyedById(db: Executor, actor: Actor, model: Model, id: string, fields?: readonly string[]): Promise<Record<string, unknown> | undefined> {
  const key = `get|${model.name}|${shapeOf(actor)}${fields ? `|${fields.join(',')}` : ''}`
  const [row] = await runTemplate(db, key, () => byId(db, standInActor(actor), model, slot(2), fields), [actor.userId, actor.companyId, id], 'keyed')
  return row
}

/**
 * Some fields of one record, as getRecord reads it whole: for a hot path that reads a few fields of a record whose
 * computed ones cost more than it needs (a conversation's cost sums all its usage). Only fields a response shows
 * (columns and computed ones): never a stored secret.
 */
export async function getRecordFields<T extends TableName, const F extends string>(db: Executor, actor: Actor, model: Model<T>, id: string, fields: readonly F[]): Promise<Record<F, unknown>> {
  const unshown = fields.filter((name) => !model.columns.includes(name) && !Object.hasOwn(model.computed ?? {}, name))
  if (unshown.length > 0) throw new Error(`${model.name} shows no field ${unshown.join(', ')}`)
  const row = await keyedById(db, actor, model, id, fields)
  if (!row) throw notFound(model, id)
  return split<T>(row).record as Record<F, unknown>
}

/** A write may only name records the actor could read: no borrowing another user's conversation by its id. */
async function checkReferences(db: Executor, actor: Actor, model: Model, input: ApiRecord): Promise<void> {
  const errors: FieldError[] = []
  for (const [name, isAllowed] of Object.entries(model.references ?? {})) {
    const id = input[name]
    if (typeof id === 'string' && !(await isAllowed(db, actor, id))) errors.push({ path: name, message: 'no such record' })
  }
  if (errors.length > 0) throw new ApiError('validation_error', 'A referenced record does not exist.', { errors })
}

/** Runs a write in a transaction when the model has steps that must share one (its guard, afterCreate, audit). */
function modelTransaction<T>(db: Executor, model: Model, write: (tx: Executor) => Promise<T>): Promise<T> {
  return model.guard || model.afterCreate || model.audited ? inTransaction(db, write) : write(db)
}

/** Records an audited model's write in its transaction, with the fields it changed. */
function auditWrite(tx: Executor, scope: WriteScope, model: Model, action: 'create' | 'update' | 'delete', change: { before?: ApiRecord; after?: ApiRecord; input?: ApiRecord }) {
  const record = (change.after ?? change.before)!
  const companyId = model.tenantColumn ? (record[model.tenantColumn] as string | null) : scope.actor.companyId
  return audit(tx, scope.actor.origin, {
    action,
    model: model.name,
    recordId: String(record.id),
    companyId,
    actorId: scope.actor.userId,
    changes: recordChanges(model, change.before, change.after, change.input),
  })
}

export async function createRecord<T extends TableName>(scope: WriteScope, model: Model<T>, input: ApiRecord): Promise<Versioned<RecordOf<T>>> {
  const { db, actor } = scope
  await checkReferences(db, actor, model, input)
  const stamps = model.stamp?.(actor) ?? {}
  const generated = model.generated ? await model.generated.make() : { columns: {}, shown: {} }
  const row = { ...(await toColumns(model, input, actor)), ...generated.columns, ...stamps, id: Bun.randomUUIDv7() }
  // The guard is judged on the input, which is not yet a typed record.
  const guarded: Model = model
  const created = await modelTransaction(db, model, async (tx) => {
    await guarded.guard?.(tx, actor, { after: { ...input, ...stamps } }, scope)
    const created = split<T>(await scoped(tx, actor).insertInto(model, row).returning(selection(model)).executeTakeFirstOrThrow())
    await model.afterCreate?.(tx, created.record, actor, input)
    if (model.audited) await auditWrite(tx, scope, model, 'create', { after: created.record, input })
    return created
  })
  const record: ApiRecord = created.record
  scope.announce({ type: 'record', model: guarded, verb: 'create', id: String(record.id), record, actor })
  return { ...created, record: { ...created.record, ...generated.shown } }
}

/**
 * Writes `input` over the record if its version is one of `expected` (when given: the tags of If-Match). A stale
 * version is a 412 so that concurrent edits are never silently lost.
 */
export async function replaceRecord(scope: WriteScope, model: Model, id: string, input: ApiRecord, expected?: readonly number[]): Promise<Versioned> {
  const { db, actor } = scope
  // A missing record is a 404 before anything in the body is judged.
  if (model.references) await getRecord(db, actor, model, id)
  await checkReferences(db, actor, model, input)
  if (expected?.length === 0) throw await staleOrMissing(db, actor, model, id)
  const replaced =
    !model.guard && !model.audited
      ? await updateRow(db, actor, model, id, input, expected)
      : await modelTransaction(db, model, async (tx) => {
          const before = await getRecord(tx, actor, model, id, { forUpdate: true })
          await model.guard?.(tx, actor, { before: before.record, after: input }, scope)
          const after = await updateRow(tx, actor, model, id, input, expected)
          if (model.audited) await auditWrite(tx, scope, model, 'update', { before: before.record, after: after.record, input })
          return after
        })
  scope.announce({ type: 'record', model, verb: 'update', id, record: replaced.record, actor })
  return replaced
}

async function updateRow(db: Executor, actor: Actor, model: Model, id: string, input: ApiRecord, expected?: readonly number[]): Promise<Versioned> {
  const row = await scoped(db, actor)
    .updateTable(model)
    .set({ ...(await toColumns(model, input, actor)), version: sql`version + 1`, updated_at: sql`now()` })
    .where(idOf(model), '=', id)
    .$if(expected !== undefined, (q: any) => q.where(`${model.table}.version`, 'in', expected))
    .returning(selection(model))
    .executeTakeFirst()
  if (row) return split(row)
  throw await staleOrMissing(db, actor, model, id)
}

/**
 * JSON merge patch (RFC 7396) over the writable fields, validated whole. The row is locked from read to write,
 * so concurrent patches of different fields all land, one after the other.
 */
export async function patchRecord(scope: WriteScope, model: Model, id: string, patch: ApiRecord, expected?: readonly number[]): Promise<Versioned> {
  const run = async (tx: Executor) => {
    const current = await getRecord(tx, scope.actor, model, id, { forUpdate: true })
    if (expected !== undefined && !expected.includes(current.version)) throw stale(model)
    const writable = Object.fromEntries(Object.keys(model.create.shape).filter((k) => k in current.record).map((k) => [k, current.record[k]]))
    const parsed = model.create.safeParse(mergePatch(writable, patch))
    if (!parsed.success) throw validationError(parsed.error)
    return replaceRecord({ ...scope, db: tx }, model, id, parsed.data, [current.version])
  }
  return inTransaction(scope.db, run)
}

export async function deleteRecord(scope: WriteScope, model: Model, id: string, expected?: readonly number[]): Promise<void> {
  const { db, actor } = scope
  if (expected?.length === 0) throw await staleOrMissing(db, actor, model, id)
  const removed = await modelTransaction(db, model, async (tx) => {
    if (model.guard) {
      const before = await getRecord(tx, actor, model, id, { forUpdate: true })
      await model.guard(tx, actor, { before: before.record }, scope)
    }
    const row = await scoped(tx, actor)
      .deleteFrom(model)
      .where(idOf(model), '=', id)
      .$if(expected !== undefined, (q: any) => q.where(`${model.table}.version`, 'in', expected))
      .returning(selection(model))
      .executeTakeFirst()
    if (!row) throw await staleOrMissing(tx, actor, model, id)
    const removed = split(row)
    if (model.audited) await auditWrite(tx, scope, model, 'delete', { before: removed.record })
    return removed
  })
  scope.announce({ type: 'record', model, verb: 'delete', id, record: removed.record, actor })
}

/**
 * Why a write matched nothing: 404 when the record is gone (or never was visible), 403 when it is visible but
 * not the actor's to change, else 412 (If-Match named an old version).
 */
async function staleOrMissing(db: Executor, actor: Actor, model: Model, id: string): Promise<ApiError> {
  await getRecord(db, actor, model, id)
  const writable = await scoped(db, actor).selectWritable(model).select(idOf(model).as('id')).where(idOf(model), '=', id).executeTakeFirst()
  return writable ? stale(model) : new ApiError('forbidden', `This ${model.name} is not yours to change.`)
}

function notFound(model: Model, id: string): ApiError {
  return new ApiError('not_found', `No ${model.name} with id ${id}.`)
}

function stale(model: Model): ApiError {
  return new ApiError('precondition_failed', `The ${model.name} has changed since the version named in If-Match; read it again and retry.`)
}
