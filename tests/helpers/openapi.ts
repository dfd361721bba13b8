import type { Principal, Reply, TestPlatform } from './platform.ts'

/**
 * Reading the platform's own OpenAPI document to drive tests: every operation it lists, what credentials it
 * declares, which path parameters name records, and a request body its schema accepts. What a route answers is
 * judged by the small `judge…` functions at the end, which return what is wrong (nothing when all is well), so the
 * sweep's verdicts can themselves be tested on made-up replies.
 */

type Schema = Record<string, any>
export type OpenApiDocument = { paths: Record<string, Record<string, any>>; components?: { schemas?: Record<string, Schema> }; security?: Security }
type Security = Array<Record<string, string[]>>

export interface Parameter {
  name: string
  in: string
  required?: boolean
  schema?: Schema
  example?: unknown
}

export interface Operation {
  method: string
  /** The path as the document writes it, `{id}` and all. */
  path: string
  /** `POST /api/agents/{id}/reload`: how test names and messages call it. */
  label: string
  spec: Record<string, any>
  pathParams: Parameter[]
  queryParams: Parameter[]
  /** Security schemes of which any one lets a caller in; empty for a public operation. */
  schemes: string[]
}

const METHODS = ['get', 'put', 'post', 'delete', 'options', 'head', 'patch', 'trace']

/** A record id that is well formed and names nothing. */
export const MISSING_ID = '01936f3e-6d2a-7c41-9b1e-000000000000'

/** Ids that are not ids: each must be refused with a 4xx problem, never reach the store as a crash. */
export const MALFORMED_IDS = [
  'not-a-uuid',
  '12345',
  '01936f3e-6d2a-7c41-9b1e-00000000000', // one digit short
  '01936f3e-6d2a-7c41-9b1e-00000000000g', // not hex
  "1' OR '1'='1",
  '\u0000', // a NUL, which PostgreSQL refuses in text
  'ü'.repeat(8),
  'x'.repeat(2_000),
]

export function operationsOf(document: OpenApiDocument): Operation[] {
  const operations: Operation[] = []
  for (const [path, item] of Object.entries(document.paths)) {
    for (const method of METHODS) {
      const spec = item[method]
      if (!spec) continue
      const parameters: Parameter[] = [...(item.parameters ?? []), ...(spec.parameters ?? [])].map((p) => resolve(document, p))
      // An operation's own `security` replaces the document's; `[]`, or a requirement `{}`, means anyone may call.
      const security: Security = spec.security ?? document.security ?? []
      const schemes = security.some((requirement) => Object.keys(requirement).length === 0) ? [] : [...new Set(security.flatMap((r) => Object.keys(r)))]
      operations.push({ method: method.toUpperCase(), path, label: `${method.toUpperCase()} ${path}`, spec, pathParams: parameters.filter((p) => p.in === 'path'), queryParams: parameters.filter((p) => p.in === 'query'), schemes })
    }
  }
  return operations
}

/** A path parameter that names a record: a UUID, or called id (`{id}`, `{user_id}`). */
export function isIdParam(param: Parameter): boolean {
  return param.schema?.format === 'uuid' || /(^|_)id$/i.test(param.name) || /[a-z]Id$/.test(param.name)
}

/**
 * The path with each parameter replaced (`values` first, then an id that names nothing, then the parameter's
 * example) and the query parameters the operation requires, so that only what a check changes is wrong.
 */
export function fillPath(document: OpenApiDocument, operation: Operation, values: Record<string, string> = {}): string {
  const path = operation.path.replace(/\{([^}]+)\}/g, (_, name: string) => {
    const param = operation.pathParams.find((p) => p.name === name)
    const value = values[name] ?? (param && isIdParam(param) ? MISSING_ID : String(param?.example ?? param?.schema?.example ?? 'sweep'))
    return encodeURIComponent(value)
  })
  const query = new URLSearchParams()
  for (const param of operation.queryParams.filter((p) => p.required)) {
    query.set(param.name, String(param.example ?? exampleOf(document, param.schema ?? { type: 'string' })))
  }
  return query.size > 0 ? `${path}?${query}` : path
}

/** The node a `$ref` points at (followed through further refs); any other node as it is. */
export function resolve<T>(document: OpenApiDocument, node: T): T {
  let current: any = node
  for (let hops = 0; current && typeof current === 'object' && typeof current.$ref === 'string'; hops++) {
    if (hops > 20) throw new Error(`$ref cycle at ${current.$ref}`)
    current = current.$ref.replace(/^#\//, '').split('/').reduce((at: any, key: string) => at?.[key.replace(/~1/g, '/').replace(/~0/g, '~')], document)
    if (current === undefined) throw new Error(`unresolvable $ref ${(node as any).$ref}`)
  }
  return current
}

/**
 * A value the schema accepts, as small as it can be: its example when it gives one, else its default, else built
 * from its type (objects from their required properties only).
 */
export function exampleOf(document: OpenApiDocument, schemaOrRef: Schema, depth = 0): unknown {
  const schema = resolve(document, schemaOrRef)
  if (depth > 12) throw new Error('schema too deep to make an example of')
  if (schema.example !== undefined) return schema.example
  if (Array.isArray(schema.examples) && schema.examples.length > 0) return schema.examples[0]
  if (schema.const !== undefined) return schema.const
  if (schema.default !== undefined) return schema.default
  if (Array.isArray(schema.enum) && schema.enum.length > 0) return schema.enum[0]
  for (const key of ['oneOf', 'anyOf'] as const) {
    // The first alternative that is not null: a nullable field gets a real value.
    const options: Schema[] = schema[key] ?? []
    const option = options.find((o) => resolve(document, o).type !== 'null') ?? options[0]
    if (option) return exampleOf(document, option, depth + 1)
  }
  if (Array.isArray(schema.allOf)) return Object.assign({}, ...schema.allOf.map((part: Schema) => exampleOf(document, part, depth + 1)))
  const type = Array.isArray(schema.type) ? (schema.type.find((t: string) => t !== 'null') ?? 'null') : schema.type
  switch (type) {
    case 'object':
    case undefined: {
      if (type === undefined && !schema.properties) return {}
      const required: string[] = schema.required ?? []
      return Object.fromEntries(required.map((name) => [name, exampleOf(document, schema.properties?.[name] ?? {}, depth + 1)]))
    }
    case 'array':
      return Array.from({ length: schema.minItems ?? 0 }, () => exampleOf(document, schema.items ?? {}, depth + 1))
    case 'string':
      return stringOf(schema)
    case 'integer':
    case 'number':
      return schema.minimum ?? (schema.exclusiveMinimum !== undefined ? schema.exclusiveMinimum + 1 : 0)
    case 'boolean':
      return false
    case 'null':
      return null
    default:
      throw new Error(`no example for a schema of type ${String(type)}`)
  }
}

function stringOf(schema: Schema): string {
  switch (schema.format) {
    case 'uuid':
      return MISSING_ID
    case 'date-time':
      return '2030-01-01T00:00:00.000Z'
    case 'date':
      return '2030-01-01'
    case 'email':
      return 'sweep@example.com'
    case 'uri':
    case 'url':
      return 'https://example.com/'
  }
  return 'x'.repeat(Math.max(1, schema.minLength ?? 1))
}

export interface Body {
  contentType: string
  value: unknown
}

/** A body for the operation that its schema accepts, in JSON when it takes JSON; undefined when it takes none. */
export function bodyOf(document: OpenApiDocument, operation: Operation): Body | undefined {
  const content: Record<string, { schema?: Schema }> | undefined = resolve(document, operation.spec.requestBody ?? {}).content
  if (!content) return undefined
  const types = Object.keys(content)
  const contentType = types.find((t) => t === 'application/json') ?? types.find((t) => /[/+]json$/.test(t)) ?? types[0]!
  return { contentType, value: exampleOf(document, content[contentType]!.schema ?? {}) }
}

/** Who calls: a principal (its API token), a raw Authorization value, or nobody. */
export type Caller = Principal | { authorization: string } | null

/** Sends the operation with the body its schema accepts (or `body`), as `caller`. */
export async function callOperation(
  p: TestPlatform,
  document: OpenApiDocument,
  operation: Operation,
  { caller, path = fillPath(document, operation), body = bodyOf(document, operation) }: { caller: Caller; path?: string; body?: Body },
): Promise<Reply> {
  const headers: Record<string, string> = {}
  const as = caller && 'token' in caller ? caller : null
  if (caller && 'authorization' in caller) headers.authorization = caller.authorization
  if (!body) return p.call(operation.method, path, { as, headers })
  headers['content-type'] = body.contentType
  const encoded = /json$/.test(body.contentType)
    ? JSON.stringify(body.value)
    : new URLSearchParams(Object.entries(body.value as Record<string, unknown>).map(([k, v]) => [k, typeof v === 'string' ? v : JSON.stringify(v)])).toString()
  return p.call(operation.method, path, { as, headers, body: encoded })
}

// ---- Verdicts: each answers what is wrong with a reply, or nothing. ----

/** What keeps a reply from being an RFC 9457 problem of the platform's shape with a status that `status` accepts. */
export function judgeProblem(reply: Reply, status: number | ((status: number) => boolean), code?: string): string[] {
  const wrong: string[] = []
  const statusOk = typeof status === 'number' ? reply.status === status : status(reply.status)
  if (!statusOk) wrong.push(`answered ${reply.status}${typeof status === 'number' ? `, not ${status}` : ''}`)
  const type = reply.headers.get('content-type') ?? ''
  if (!/^application\/problem\+json\b/.test(type)) wrong.push(`Content-Type is ${JSON.stringify(type)}, not application/problem+json`)
  if (!reply.body || typeof reply.body !== 'object') {
    wrong.push(`the body is not a problem: ${JSON.stringify(reply.body)?.slice(0, 200)}`)
    return wrong
  }
  const body = reply.body as Record<string, unknown>
  if (typeof body.code !== 'string') wrong.push('the problem has no code')
  else if (code && body.code !== code) wrong.push(`its code is ${body.code}, not ${code}`)
  if (body.status !== reply.status) wrong.push(`its status field is ${JSON.stringify(body.status)}, the response's ${reply.status}`)
  if (typeof body.request_id !== 'string' || body.request_id.length === 0) wrong.push('the problem has no request_id')
  return wrong
}

/**
 * Without credentials: an operation that declares security answers 401 problem+json. A public one must not ask
 * for credentials: it may answer 401 only where a signed-in caller gets the same (a sign-in with a wrong password),
 * so `signedIn` is the same call with credentials, needed only when the anonymous one answered 401.
 */
export function judgeWithoutCredentials(declaresSecurity: boolean, anonymous: Reply, signedIn?: Reply): string[] {
  if (declaresSecurity) return judgeProblem(anonymous, 401, 'unauthorized').map((w) => `without credentials: ${w}`)
  const wrong: string[] = []
  if (anonymous.status >= 500) wrong.push(`it is public, yet without credentials it answered ${anonymous.status}`)
  if (anonymous.status === 401 && (!signedIn || signedIn.status !== 401)) {
    wrong.push(
      `it declares no security (public), yet without credentials it answered 401 and with them ${signedIn?.status ?? 'was not tried'}: ` +
        'declare its security in the document (security: [{ sessionCookie: [] }, { apiToken: [] }]) or let anyone call it',
    )
  }
  return wrong
}

/** A malformed id: a 4xx problem, never a 5xx (nor a success). */
export function judgeMalformedId(reply: Reply): string[] {
  return judgeProblem(reply, (status) => status >= 400 && status < 500)
}

/**
 * Another company's record answers exactly as a record that does not exist: 404 not_found, never 403 (which would
 * tell that it exists) nor a success.
 */
export function judgeForeignRecord(missing: Reply, foreign: Reply): string[] {
  const wrong = judgeProblem(foreign, 404, 'not_found').map((w) => `another company's record: ${w}`)
  if (missing.status !== 404) wrong.push(`a missing record answered ${missing.status}, not 404, so the two cannot be compared`)
  return wrong
}
