import { ApiError, type FieldError } from '../errors.ts'
import { enumValues, type ColumnKind } from './column-kind.ts'
import type { Model } from './define.ts'
import { isUuid } from './fields.ts'

export type FilterOp = 'eq' | 'neq' | 'gt' | 'gte' | 'lt' | 'lte' | 'like' | 'ilike' | 'in' | 'is'

export interface Filter {
  field: string
  op: FilterOp
  value: unknown
}

export interface ListQuery {
  filters: Filter[]
  order: Array<{ field: string; direction: 'asc' | 'desc' }>
  select?: string[]
  limit: number
  offset: number
  count: boolean
}

export const DEFAULT_LIMIT = 50
export const MAX_LIMIT = 500
export const RESERVED_PARAMS = ['select', 'order', 'limit', 'offset', 'count'] as const

const OPS = new Set<FilterOp>(['eq', 'neq', 'gt', 'gte', 'lt', 'lte', 'like', 'ilike', 'in', 'is'])
const ORDERED_KINDS = new Set<ColumnKind>(['text', 'integer', 'number', 'timestamp', 'uuid', 'enum', 'boolean'])

/** Reads a filter value's text as its field's type, or says why it cannot. */
function readValue(model: Model, field: string, kind: ColumnKind, text: string): unknown {
  switch (kind) {
    case 'uuid':
      if (!isUuid(text)) throw 'is not a UUID'
      return text
    case 'integer':
      if (!/^-?\d{1,15}$/.test(text)) throw 'is not a whole number'
      return Number(text)
    case 'number': {
      const n = Number(text)
      if (text.trim() === '' || !Number.isFinite(n)) throw 'is not a number'
      return n
    }
    case 'boolean':
      if (text !== 'true' && text !== 'false') throw 'is not true or false'
      return text === 'true'
    case 'timestamp':
      return readTimestamp(text)
    case 'enum': {
      const allowed = enumValues(model.record.shape[field]!)
      if (!allowed.includes(text)) throw `is not one of ${allowed.join(', ')}`
      return text
    }
    default:
      return text
  }
}

const ISO_DATE_TIME = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.\d{1,6})?)?(?:Z|[+-]\d{2}:\d{2})$/

/** An ISO-8601 date-time with its offset (no guessing of time zones), a real calendar date, years 0001–9999. */
function readTimestamp(text: string): string {
  const match = ISO_DATE_TIME.exec(text)
  const [, y, mo, d, h, mi, s = '0'] = match ?? []
  const day = new Date(Date.UTC(Number(y), Number(mo) - 1, Number(d)))
  const real = match && day.getUTCMonth() === Number(mo) - 1 && day.getUTCDate() === Number(d) && Number(h) < 24 && Number(mi) < 60 && Number(s) < 60
  if (!real || Number(y) < 1) throw 'is not an ISO-8601 date-time with an offset, e.g. 2026-11-21T09:30:00Z'
  return new Date(Date.parse(text)).toISOString()
}

/** A like pattern where only `*` is a wildcard: `%`, `_` and `\` from the caller match themselves. */
function likePattern(text: string): string {
  return text.replace(/[\\%_]/g, (ch) => `\\${ch}`).replaceAll('*', '%')
}

/** Splits `(a,"b,c",d)` into items; double quotes protect commas, a backslash escapes inside quotes. */
function readList(text: string): string[] {
  if (!text.startsWith('(') || !text.endsWith(')')) throw 'needs a list in parentheses: in.(a,b)'
  const body = text.slice(1, -1)
  if (body.trim() === '') throw 'needs at least one value'
  const items: string[] = []
  let current = ''
  let quoted = false
  let wasQuoted = false
  for (let i = 0; i < body.length; i++) {
    const ch = body[i]!
    if (quoted) {
      if (ch === '\\') current += body[++i] ?? ''
      else if (ch === '"') quoted = false
      else current += ch
    } else if (ch === '"') {
      quoted = wasQuoted = true
    } else if (ch === ',') {
      items.push(wasQuoted ? current : current.trim())
      current = ''
      wasQuoted = false
    } else current += ch
  }
  if (quoted) throw 'has an unclosed double quote'
  items.push(wasQuoted ? current : current.trim())
  if (items.length > 500) throw 'takes at most 500 values'
  return items
}

function parseFilter(model: Model, field: string, raw: string): Filter {
  const dot = raw.indexOf('.')
  const op = (dot === -1 ? raw : raw.slice(0, dot)) as FilterOp
  const text = dot === -1 ? '' : raw.slice(dot + 1)
  if (!OPS.has(op)) throw `unknown operator "${op}"; use eq, neq, gt, gte, lt, lte, like, ilike, in or is`
  const kind = model.kinds.get(field)!
  if (op === 'is') {
    if (text === 'null') return { field, op, value: null }
    if (kind === 'boolean' && (text === 'true' || text === 'false')) return { field, op, value: text === 'true' }
    throw kind === 'boolean' ? 'is takes null, true or false' : 'is takes null'
  }
  if (kind === 'json') throw 'holds JSON and can only be filtered with is.null'
  if ((op === 'like' || op === 'ilike') && kind !== 'text') throw `${op} works on text fields only`
  if (op === 'in') return { field, op, value: readList(text).map((item) => readValue(model, field, kind, item)) }
  if (op === 'like' || op === 'ilike') return { field, op, value: likePattern(text) }
  return { field, op, value: readValue(model, field, kind, text) }
}

function parseBound(name: string, raw: string | undefined, fallback: number, min: number, max: number): number {
  if (raw === undefined) return fallback
  if (!/^\d{1,10}$/.test(raw) || Number(raw) < min || Number(raw) > max) {
    throw { path: name, message: `must be a whole number from ${min} to ${max}` }
  }
  return Number(raw)
}

/**
 * Parses a PostgREST-style list query (`?field=op.value&order=a.desc&select=a,b&limit=&offset=&count=exact`).
 * Anything it cannot use is a 400 naming every offending parameter.
 */
export function parseListQuery(model: Model, params: Record<string, string[]>): ListQuery {
  const errors: FieldError[] = []
  const query: ListQuery = { filters: [], order: [], limit: DEFAULT_LIMIT, offset: 0, count: false }
  const single = (name: string) => {
    const values = params[name]
    if (values && values.length > 1) errors.push({ path: name, message: 'may be given once' })
    return values?.[0]
  }
  const knownField = (name: string, path: string) => {
    if (model.kinds.has(name)) return true
    errors.push({ path, message: `unknown field "${name}"; fields of ${model.name}: ${[...model.kinds.keys()].join(', ')}` })
    return false
  }

  for (const [name, values] of Object.entries(params)) {
    if ((RESERVED_PARAMS as readonly string[]).includes(name)) continue
    if (!knownField(name, name)) continue
    for (const raw of values) {
      try {
        if (raw.includes('\u0000')) throw 'holds a NUL character'
        query.filters.push(parseFilter(model, name, raw))
      } catch (message) {
        errors.push({ path: name, message: `${JSON.stringify(raw)}: ${String(message)}` })
      }
    }
  }

  try {
    query.limit = parseBound('limit', single('limit'), DEFAULT_LIMIT, 1, MAX_LIMIT)
  } catch (error) {
    errors.push(error as FieldError)
  }
  try {
    query.offset = parseBound('offset', single('offset'), 0, 0, 1_000_000_000)
  } catch (error) {
    errors.push(error as FieldError)
  }

  const count = single('count')
  if (count !== undefined && count !== 'exact') errors.push({ path: 'count', message: 'the only value is "exact"' })
  query.count = count === 'exact'

  const order = single('order')
  if (order !== undefined) {
    for (const part of order.split(',')) {
      const [field = '', direction = 'asc', ...rest] = part.trim().split('.')
      if (!knownField(field, 'order')) continue
      if (rest.length > 0 || (direction !== 'asc' && direction !== 'desc')) {
        errors.push({ path: 'order', message: `"${part}": write field.asc or field.desc` })
      } else if (!ORDERED_KINDS.has(model.kinds.get(field)!)) {
        errors.push({ path: 'order', message: `"${field}" holds JSON and cannot be ordered by` })
      } else query.order.push({ field, direction })
    }
  }

  const select = single('select')
  if (select !== undefined) {
    const fields = select.split(',').map((f) => f.trim()).filter(Boolean)
    if (fields.length === 0) errors.push({ path: 'select', message: 'names at least one field' })
    query.select = fields.filter((f) => knownField(f, 'select'))
  }

  if (errors.length > 0) {
    throw new ApiError('bad_request', `The list query has ${errors.length} problem(s): ${errors.map((e) => `${e.path}: ${e.message}`).join('; ')}`, { errors })
  }
  return query
}
