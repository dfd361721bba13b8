import { judgeProblem, resolve, type OpenApiDocument } from './openapi.ts'
import type { Reply } from './platform.ts'

/**
 * Hostile request bodies made from an operation's schema, for the sweep that checks no input crashes a route: the
 * body broken as a whole, then each field (and each field of a nested object) given values of its own type that a
 * careless handler, driver or database would choke on, and values of the wrong type.
 */

type Schema = Record<string, any>

export interface HostileBody {
  label: string
  /** Sent as it is (a body that is not JSON at all). */
  raw?: string
  /** Encoded as the operation's content type asks. */
  value?: unknown
  /** Sent under this content type instead of the operation's. */
  contentType?: string
}

/** Nested this deep, a recursive parser or validator without a bound runs out of stack. */
const DEEP = 5_000

const STRINGS: Array<[string, string]> = [
  ['an empty string', ''],
  ['a 200 000-character string', 'x'.repeat(200_000)],
  ['a NUL byte', 'a\u0000b'],
  ['a lone surrogate', 'a\ud800b'],
  ['a right-to-left override', 'txt.\u202Eexe'],
  ['markup', '<img src=x onerror=alert(1)>"\'`'],
  ['SQL', "x'); DROP TABLE users; --"],
  ['a path traversal', '../../../../etc/passwd'],
]

const NUMBERS: Array<[string, unknown]> = [
  ['a negative number', -1],
  ['a number past 64 bits', 1e30],
  ['the largest double', Number.MAX_VALUE],
  ['a fraction', 0.5],
  ['a number as a string', '1'],
]

const WRONG_TYPES: Array<[string, unknown]> = [
  ['null', null],
  ['a boolean', true],
  ['a number', 7],
  ['a string', 'x'],
  ['an array', ['x']],
  ['an object', { x: 1 }],
]

const FORMATS: Record<string, Array<[string, string]>> = {
  uuid: [['a malformed uuid', 'not-a-uuid'], ['a uuid with a NUL', '01936f3e-6d2a-7c41-9b1e-00000000000\u0000']],
  email: [['an address of 320 characters', `${'a'.repeat(64)}@${'b'.repeat(251)}.com`], ['an address with a newline', 'a@b.com\r\nBcc: c@d.com']],
  uri: [['a javascript: URL', 'javascript:alert(1)'], ['a loopback URL', 'http://127.0.0.1:5432/'], ['a file: URL', 'file:///etc/passwd']],
  'date-time': [['a date past year 9999', '+275760-09-13T00:00:00.000Z'], ['a date that is not one', '2030-02-30T25:61:00Z']],
}
FORMATS.url = FORMATS.uri!

export function* hostileBodies(document: OpenApiDocument, schema: Schema, valid: unknown, multipart = false): Generator<HostileBody> {
  yield { label: 'a body that is not JSON', raw: '{"unterminated": ' }
  yield { label: 'an empty body', raw: '' }
  yield { label: 'a JSON array for a body', value: [valid] }
  yield { label: 'JSON null for a body', value: null }
  yield { label: 'a body nested 5 000 deep', raw: '['.repeat(DEEP) + ']'.repeat(DEEP) }
  yield { label: 'a __proto__ key', value: JSON.parse(`{"__proto__": {"is_superadmin": true, "role": "owner"}, ${JSON.stringify(valid ?? {}).slice(1, -1) || '"x": 1'}}`) }
  if (!isObject(valid)) return
  if (multipart) {
    yield* brokenMultipart()
    return
  }
  yield* fieldsOf(document, schema, valid, [], 0)
}

/** Uploads: a form whose boundary is missing, whose part never ends, or whose file name is a path with tricks in it. */
function* brokenMultipart(): Generator<HostileBody> {
  const part = (filename: string, end = '--x--\r\n') =>
    `--x\r\nContent-Disposition: form-data; name="file"; filename="${filename}"\r\nContent-Type: text/plain\r\n\r\nhello\r\n${end}`
  yield { label: 'a form without a boundary', raw: part('a.txt'), contentType: 'multipart/form-data' }
  yield { label: 'a form whose part never ends', raw: part('a.txt', ''), contentType: 'multipart/form-data; boundary=x' }
  yield { label: 'a file named with a path and a right-to-left override', raw: part('../../../etc/\u202Etxt.exe'), contentType: 'multipart/form-data; boundary=x' }
  yield { label: 'a file named with control characters', raw: part('a\u0001\u0007\u001b[2J.txt'), contentType: 'multipart/form-data; boundary=x' }
  yield { label: 'a form with no file in it', raw: '--x--\r\n', contentType: 'multipart/form-data; boundary=x' }
}

function* fieldsOf(document: OpenApiDocument, schemaOrRef: Schema, valid: Record<string, unknown>, path: string[], depth: number): Generator<HostileBody> {
  const schema = objectSchema(document, schemaOrRef)
  for (const [name, propertySchema] of Object.entries<Schema>(schema.properties ?? {})) {
    const at = [...path, name]
    const where = at.join('.')
    const property = resolve(document, propertySchema)
    for (const [label, value] of valuesFor(document, property)) {
      yield { label: `${where} = ${label}`, value: replaced(valid, at, value) }
    }
    const inner = getAt(valid, at)
    if (depth < 1 && isObject(inner)) yield* fieldsOf(document, property, valid, at, depth + 1)
  }
}

/** The hostile values for a field of this schema: of its own type first, then of other types. */
function valuesFor(document: OpenApiDocument, schema: Schema): Array<[string, unknown]> {
  const types = typesOf(document, schema)
  const values: Array<[string, unknown]> = []
  if (types.has('string')) {
    values.push(...STRINGS)
    const format = schema.format ?? alternatives(document, schema).find((s) => s.format)?.format
    if (format && FORMATS[format]) values.push(...FORMATS[format]!)
  }
  if (types.has('integer') || types.has('number')) values.push(...NUMBERS)
  if (types.has('array')) values.push(['an array of 10 000 items', Array.from({ length: 10_000 }, () => 'x')], ['an array of arrays', [[[['x']]]]])
  if (types.has('object') || types.size === 0) values.push(['an object nested 200 deep', nested(200)], ['an object with a __proto__ key', JSON.parse('{"__proto__": {"polluted": true}}')])
  values.push(...WRONG_TYPES.filter(([label]) => !types.has(typeName(label))))
  return values
}

function typeName(label: string): string {
  return { null: 'null', 'a boolean': 'boolean', 'a number': 'number', 'a string': 'string', 'an array': 'array', 'an object': 'object' }[label] ?? label
}

function alternatives(document: OpenApiDocument, schema: Schema): Schema[] {
  return [...(schema.anyOf ?? []), ...(schema.oneOf ?? []), ...(schema.allOf ?? [])].map((s: Schema) => resolve(document, s))
}

function typesOf(document: OpenApiDocument, schema: Schema): Set<string> {
  const types = new Set<string>()
  const add = (s: Schema) => {
    for (const t of [s.type].flat()) if (typeof t === 'string') types.add(t === 'integer' ? 'number' : t)
    if (s.type === 'integer') types.add('integer')
    if (s.properties) types.add('object')
  }
  add(schema)
  for (const alternative of alternatives(document, schema)) add(alternative)
  return types
}

/** The object schema itself, where a nullable or composed one wraps it. */
function objectSchema(document: OpenApiDocument, schemaOrRef: Schema): Schema {
  const schema = resolve(document, schemaOrRef)
  if (schema.properties) return schema
  const inner = alternatives(document, schema).filter((s) => s.properties)
  return inner.length > 0 ? { properties: Object.assign({}, ...inner.map((s) => s.properties)) } : schema
}

function nested(depth: number): unknown {
  let value: unknown = 'x'
  for (let i = 0; i < depth; i++) value = { a: value }
  return value
}

function isObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
}

function getAt(value: Record<string, unknown>, path: string[]): unknown {
  return path.reduce<unknown>((at, key) => (isObject(at) ? at[key] : undefined), value)
}

/** A copy of `valid` with the value at `path` replaced (made where the valid body leaves it out). */
function replaced(valid: Record<string, unknown>, path: string[], value: unknown): Record<string, unknown> {
  const copy: Record<string, unknown> = structuredClone(valid)
  let at = copy
  for (const key of path.slice(0, -1)) {
    if (!isObject(at[key])) at[key] = {}
    at = at[key] as Record<string, unknown>
  }
  // defineProperty, so a key named __proto__ is a key and not the object's prototype.
  Object.defineProperty(at, path.at(-1)!, { value, enumerable: true, configurable: true, writable: true })
  return copy
}

/**
 * Whatever a hostile body gets: a success, or a 4xx problem; never a 5xx. The OAuth endpoints answer errors in the
 * shape their RFCs fix (`{ error, error_description }`), which is what OAuth clients read.
 */
export function judgeHostileReply(reply: Reply, { oauth = false } = {}): string[] {
  const body: Record<string, unknown> = reply.body !== null && typeof reply.body === 'object' ? (reply.body as Record<string, unknown>) : {}
  if (reply.status >= 500) return [`answered ${reply.status}${body.detail ? ` (${String(body.detail).slice(0, 160)})` : ''}`]
  if (reply.status < 400) return []
  // The MCP gateway answers in JSON-RPC, as its specification says, not in problems.
  if (body.jsonrpc === '2.0') return []
  if (oauth) return typeof body.error === 'string' ? [] : [`answered ${reply.status} without an OAuth error: ${JSON.stringify(reply.body)?.slice(0, 160)}`]
  return judgeProblem(reply, (status) => status >= 400 && status < 500)
}
