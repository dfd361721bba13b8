import { ApiError } from '../errors.ts'

/** One comparison of a SCIM filter (RFC 7644 §3.4.2.2) this server evaluates. */
export interface Condition {
  attribute: string
  op: 'eq' | 'ne' | 'co' | 'sw' | 'ew'
  value: string | boolean
}

const COMPARISON = /^\s*([A-Za-z][\w.:]*)\s+(eq|ne|co|sw|ew)\s+("(?:[^"\\]|\\.)*"|true|false)\s*/i

function invalidFilter(detail: string): ApiError {
  return new ApiError('bad_request', `The filter ${detail}`, { errors: [{ path: 'filter', message: detail }] })
}

/**
 * A filter of comparisons joined by `and`, each on an attribute this resource can be filtered by (lower-cased, as
 * SCIM's attribute names are case-insensitive). `or`, `not`, grouping and value paths are refused as invalid
 * filters, naming what is supported, rather than read wrongly.
 */
export function parseFilter(text: string | undefined, attributes: readonly string[]): Condition[] {
  if (text === undefined || text.trim() === '') return []
  if (text.length > 1000) throw invalidFilter('is longer than 1000 characters.')
  const conditions: Condition[] = []
  let rest = text
  for (;;) {
    const match = COMPARISON.exec(rest)
    if (!match) throw invalidFilter(`${JSON.stringify(text)} is not one this server reads: attribute eq|ne|co|sw|ew "value", joined by and, on ${attributes.join(', ')}.`)
    const attribute = match[1]!.toLowerCase().replace(/^urn:ietf:params:scim:schemas:core:2\.0:(user|group):/, '')
    if (!attributes.includes(attribute)) throw invalidFilter(`cannot use ${match[1]}; these can be filtered by: ${attributes.join(', ')}.`)
    const raw = match[3]!
    const value = raw.startsWith('"') ? (JSON.parse(raw) as string) : raw.toLowerCase() === 'true'
    conditions.push({ attribute, op: match[2]!.toLowerCase() as Condition['op'], value })
    rest = rest.slice(match[0].length)
    if (rest === '') return conditions
    const and = /^and\s+/i.exec(rest)
    if (!and) throw invalidFilter(`${JSON.stringify(text)} joins comparisons with something other than and, which this server does not read.`)
    rest = rest.slice(and[0].length)
  }
}

/** Whether a value meets a condition: strings compared without regard to case, as userName and emails are. */
export function meets(value: string | boolean | null | undefined, condition: Condition): boolean {
  if (typeof condition.value === 'boolean') return condition.op === 'ne' ? value !== condition.value : value === condition.value
  const have = typeof value === 'string' ? value.toLowerCase() : ''
  const want = condition.value.toLowerCase()
  switch (condition.op) {
    case 'eq':
      return value !== null && value !== undefined && have === want
    case 'ne':
      return have !== want
    case 'co':
      return have.includes(want)
    case 'sw':
      return have.startsWith(want)
    case 'ew':
      return have.endsWith(want)
  }
}
