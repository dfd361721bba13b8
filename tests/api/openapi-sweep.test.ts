import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { MODELS } from '../../src/models/registry.ts'
import { modelCases } from '../helpers/fixtures.ts'
import {
  bodyOf,
  callOperation,
  exampleOf,
  fillPath,
  isIdParam,
  judgeForeignRecord,
  judgeMalformedId,
  judgeWithoutCredentials,
  MALFORMED_IDS,
  MISSING_ID,
  operationsOf,
  resolve,
  type Caller,
  type OpenApiDocument,
  type Operation,
} from '../helpers/openapi.ts'
import { startTestPlatform, type Principal, type Reply } from '../helpers/platform.ts'
import { fieldsOf } from '../helpers/typed-call.ts'

/*
 * Every operation of /api/openapi.json, driven by the document itself, so a route added later is swept without a
 * case written for it: (a) without credentials, 401 problem+json where the operation declares security, and no
 * demand for credentials where it does not; (b) a malformed id in the path, a 4xx problem, never a 5xx; (c) another
 * company's record, 404 exactly like a record that does not exist.
 *
 * No exception list: the special kinds need only the right credentials. Internal routes answer 401 rather than 503
 * because this platform has INTERNAL_API_SECRET set; vault-token routes get a token from the platform's issuer;
 * the MCP gateway is an operation like the others for all three checks.
 */

const INTERNAL_SECRET = `sweep-${crypto.randomUUID()}`

// The tests are made from the document, which only a running platform serves, so it starts as the file loads
// rather than in a beforeAll (usePlatform) that would run after the tests had to be defined.
const p = await startTestPlatform({ INTERNAL_API_SECRET: INTERNAL_SECRET })
afterAll(() => p.close())
const document = (await p.call('GET', '/api/openapi.json', { as: null })).body as OpenApiDocument
const operations = operationsOf(document)
// Someone signed in whose calls change nothing anyone else sees: a member of a company of their own.
const bystander = await p.createUser({ companyId: await p.createCompany(), role: 'member' })
const named = (ops: Operation[]) => ops.map((op) => [op.label, op] as const)

/**
 * Credentials that let a caller in by one of the operation's schemes: the superadmin's where a person signs in. A
 * public operation is called signed in too: it has no use for them, and where the document wrongly calls an
 * operation public, the check still gets past the sign-in to what it means to test.
 */
/** A SCIM token of the superadmin's company, made once. */
let madeScimToken: string | undefined
async function scimToken(): Promise<string> {
  madeScimToken ??= ((await p.call('POST', '/api/v1/ScimToken', { json: { name: 'sweep' } })).body as { token: string }).token
  return madeScimToken
}

async function credentialsFor(op: Operation): Promise<Caller> {
  if (op.schemes.length === 0 || op.schemes.includes('apiToken')) return p.root
  if (op.schemes.includes('internalSecret')) return { authorization: `Bearer ${INTERNAL_SECRET}` }
  if (op.schemes.includes('vaultToken')) return { authorization: `Bearer ${await p.services.vaultTokens.issue([], 60_000)}` }
  if (op.schemes.includes('scimToken')) return { authorization: `Bearer ${await scimToken()}` }
  throw new Error(`${op.label} takes only ${op.schemes.join(', ')}: teach credentialsFor in the sweep how to sign in with it.`)
}

test('the document lists the platform’s operations', () => {
  // A sweep over an empty or broken document would pass by checking nothing.
  expect(operations.length).toBeGreaterThan(100)
  expect(operations.map((op) => op.label)).toEqual(expect.arrayContaining(['GET /api/v1/User/{id}', 'POST /api/agents/{id}/reload', 'POST /mcp/{server}', 'GET /api/internal/ping', 'POST /api/vault/get']))
})

describe('(a) without credentials', () => {
  test.each(named(operations))('%s', async (_, op) => {
    const anonymous = await callOperation(p, document, op, { caller: null })
    // A public operation that answered 401 is asked again signed in, to tell "wrong password" from "sign in first";
    // by a bystander, so that a call that goes through leaves nothing behind for the other checks.
    const signedIn = op.schemes.length === 0 && anonymous.status === 401 ? await callOperation(p, document, op, { caller: bystander }) : undefined
    expect(judgeWithoutCredentials(op.schemes.length > 0, anonymous, signedIn)).toEqual([])
  })
})

const withIds = operations.filter((op) => op.pathParams.some(isIdParam))

describe('(b) a malformed id in the path', () => {
  test('the sweep has operations with ids to try', () => {
    expect(withIds.length).toBeGreaterThan(10)
  })

  test.each(named(withIds))('%s', async (_, op) => {
    const wrong: string[] = []
    for (const param of op.pathParams.filter(isIdParam)) {
      for (const bad of MALFORMED_IDS) {
        const reply = await callOperation(p, document, op, { caller: await credentialsFor(op), path: fillPath(document, op, { [param.name]: bad }) })
        wrong.push(...judgeMalformedId(reply).map((w) => `${param.name}=${JSON.stringify(bad.slice(0, 40))}: ${w}`))
      }
    }
    expect(wrong).toEqual([])
  })
})

/** The models of the generic API, by name, from the document's own paths. */
const modelNames = [...new Set(operations.map((op) => /^\/api\/v1\/([^/{}]+)$/.exec(op.path)?.[1]).filter((name): name is string => name !== undefined))]

/**
 * Which model the record of an operation's last id names: `/api/v1/{Model}/{id}` says so; elsewhere the collection
 * before the id does (`/api/agents/{id}` → AgentConfigRecord, `/api/users/{id}` → User).
 */
function recordModel(op: Operation): string | undefined {
  const crud = /^\/api\/v1\/([^/{}]+)\/\{[^}]+\}$/.exec(op.path)
  if (crud) return crud[1]
  // A tool approval is a record the platform keeps outside the generic models.
  if (op.path.startsWith('/api/approvals/{')) return 'ToolApproval'
  // So is a voice note heard or an answer spoken, kept beside a conversation's messages.
  if (op.path.startsWith('/api/chat/voice/{')) return 'VoiceClip'
  // A channel's webhook, `/channels/telegram/{agent_id}`, names the agent it reaches.
  if (op.pathParams.some((param) => param.name === 'agent_id')) return 'AgentConfigRecord'
  const collection = /\/([^/{}]+)\/\{[^}]+\}(?:\/[^{}]*)?$/.exec(op.path)?.[1]?.toLowerCase().replace(/s$/, '')
  if (!collection) return undefined
  const exact = modelNames.find((name) => name.toLowerCase() === collection)
  const prefixed = modelNames.filter((name) => name.toLowerCase().startsWith(collection))
  // `/api/chat/conversations/{id}` names a WebchatConversation.
  const suffixed = modelNames.filter((name) => name.toLowerCase().endsWith(collection))
  return exact ?? (prefixed.length === 1 ? prefixed[0] : suffixed.length === 1 ? suffixed[0] : undefined)
}

// Operations on one record that a person may call (signed in, or public): what a user of another company could
// aim at. Those for the internal secret or a vault token are not a person's.
const onRecords = withIds.filter((op) => op.schemes.length === 0 || op.schemes.includes('apiToken'))

describe('(c) another company’s record', () => {
  let cases: ReturnType<typeof modelCases>
  let stranger: Principal
  /** Operations where the case could not apply, and why; checked against the models' rules at the end. */
  const notApplicable = new Map<string, string>()

  beforeAll(async () => {
    cases = modelCases(p)
    // Company A is the superadmin's own; B is a company of its own whose owner holds the highest company role.
    stranger = await p.createUser({ companyId: await p.createCompany(), role: 'owner' })
  })

  /** A body `as` may send to the operation: the model's own fixture for a replace, else one from the schema. */
  async function bodyFor(op: Operation, model: string, as: Principal) {
    const body = bodyOf(document, op)
    if (op.method === 'PUT' && body && cases[model]) return { ...body, value: await cases[model].make(as) }
    return body
  }

  /** A record of `model` in company A, made through the generic API as its superadmin. */
  async function recordOfCompanyA(model: string): Promise<Record<string, any>> {
    // A model made some other way than the generic create (an upload) has its own maker.
    if (cases[model]?.create) return cases[model].create(p.root)
    // A tool approval is asked by a turn; here it is written as the platform writes it, waiting for an answer.
    if (model === 'ToolApproval') {
      const row = { id: Bun.randomUUIDv7(), company_id: p.root.companyId!, user_id: p.root.userId, server: 's', tool: 't', rule: 'a rule', approvers: 'admins' as const, expires_at: new Date(Date.now() + 600_000) }
      await p.store.db.insertInto('tool_approvals').values(row).execute()
      return row
    }
    // A voice clip is kept by the platform as it hears a note: here written as it writes one, in a conversation of A.
    if (model === 'VoiceClip') {
      const conversation = await p.call('POST', '/api/v1/WebchatConversation', { json: { title: 'Spoken' } })
      const row = { id: Bun.randomUUIDv7(), company_id: p.root.companyId!, conversation_id: (conversation.body as { id: string }).id, direction: 'heard' as const, media_type: 'audio/ogg', bytes: new Uint8Array([79, 103, 103, 83]), duration_ms: 1000 }
      await p.store.db.insertInto('voice_clips').values(row).execute()
      return row
    }
    const create = operations.find((op) => op.method === 'POST' && op.path === `/api/v1/${model}`)
    if (!create) throw new Error(`no POST /api/v1/${model} to make a record with`)
    const schema = create.spec.requestBody.content['application/json'].schema
    const json: Record<string, unknown> = cases[model] ? await cases[model].make(p.root) : (exampleOf(document, schema) as Record<string, unknown>)
    // A record the model lets one company own (a program offered to one company) is made company A's.
    const properties = resolve(document, schema).properties ?? {}
    if ('company_id' in properties && json.company_id === undefined) json.company_id = p.root.companyId
    const reply = await p.call('POST', `/api/v1/${model}`, { json })
    if (reply.status !== 201) throw new Error(`making a ${model} in company A: ${reply.status} ${JSON.stringify(reply.body)}`)
    return fieldsOf(reply.body)
  }

  test.each(named(onRecords))('%s', async (_, op) => {
    const model = recordModel(op)
    if (!model) throw new Error(`Cannot tell which model the id of ${op.label} names: teach recordModel in the sweep.`)
    const record = await recordOfCompanyA(model)
    if (record.company_id === null) {
      notApplicable.set(op.label, 'the record is shared with every company')
      return
    }
    const idName = op.pathParams.filter(isIdParam).at(-1)!.name
    const body = await bodyFor(op, model, stranger)
    const missing = await callOperation(p, document, op, { caller: stranger, path: fillPath(document, op, { [idName]: MISSING_ID }), body })
    if (missing.status === 403) {
      // The verb is above every company role: only a superadmin, who sees every company, may call it at all.
      notApplicable.set(op.label, 'no company role may call it')
      return
    }
    const foreign = await callOperation(p, document, op, { caller: stranger, path: fillPath(document, op, { [idName]: String(record.id) }), body })
    expect(judgeForeignRecord(missing, foreign)).toEqual([])
  })

  test('the case ran on every operation of a company-owned model that a company role may call', () => {
    // Guards the skips above: a tenant-scoped model whose verb a company role may use must not have been passed over.
    const verbOf: Record<string, 'read' | 'update' | 'delete'> = { GET: 'read', PUT: 'update', PATCH: 'update', DELETE: 'delete' }
    const passedOver = onRecords
      .filter((op) => notApplicable.has(op.label))
      .filter((op) => {
        const model = MODELS.find((m) => m.name === recordModel(op))
        const verb = verbOf[op.method]
        return model && verb && (model.tenantColumn || model.recordRule) && model.access[verb] !== 'superadmin'
      })
      .map((op) => `${op.label}: ${notApplicable.get(op.label)}`)
    expect(passedOver).toEqual([])
    expect(onRecords.length - notApplicable.size).toBeGreaterThan(30)
  })
})

describe('the sweep’s verdicts', () => {
  const reply = (status: number, body: unknown, type = 'application/problem+json'): Reply => ({ status, headers: new Headers({ 'content-type': type }), body })
  const problem = (status: number, code: string) => reply(status, { type: `urn:switchboard:problem:${code}`, title: code, status, detail: code, code, request_id: MISSING_ID })

  test('an operation that declares security yet answers 200 without credentials is reported', () => {
    expect(judgeWithoutCredentials(true, reply(200, { data: [] }, 'application/json'))).toEqual([
      'without credentials: answered 200, not 401',
      'without credentials: Content-Type is "application/json", not application/problem+json',
      'without credentials: the problem has no code',
      "without credentials: its status field is undefined, the response's 200",
      'without credentials: the problem has no request_id',
    ])
    expect(judgeWithoutCredentials(true, problem(401, 'unauthorized'))).toEqual([])
  })

  test('a 401 that is not a problem, or has the wrong code, is reported', () => {
    expect(judgeWithoutCredentials(true, reply(401, 'Unauthorized', 'text/plain')).length).toBeGreaterThan(0)
    expect(judgeWithoutCredentials(true, problem(401, 'forbidden'))).toEqual(['without credentials: its code is forbidden, not unauthorized'])
  })

  test('a public operation that demands credentials is reported; one refusing a wrong password is not', () => {
    expect(judgeWithoutCredentials(false, problem(401, 'unauthorized'), reply(200, {}, 'application/json'))[0]).toStartWith('it declares no security (public), yet without credentials it answered 401 and with them 200')
    expect(judgeWithoutCredentials(false, problem(401, 'unauthorized'), problem(401, 'unauthorized'))).toEqual([])
    expect(judgeWithoutCredentials(false, reply(200, {}, 'application/json'))).toEqual([])
    expect(judgeWithoutCredentials(false, problem(500, 'internal_error'))).toEqual(['it is public, yet without credentials it answered 500'])
  })

  test('a malformed id that crashes, or succeeds, is reported', () => {
    expect(judgeMalformedId(problem(500, 'internal_error'))).toEqual(['answered 500'])
    expect(judgeMalformedId(reply(200, {}, 'application/json'))[0]).toBe('answered 200')
    expect(judgeMalformedId(problem(404, 'not_found'))).toEqual([])
    expect(judgeMalformedId(problem(400, 'bad_request'))).toEqual([])
  })

  test('another company’s record that is shown, or refused with 403, is reported', () => {
    const missing = problem(404, 'not_found')
    expect(judgeForeignRecord(missing, problem(403, 'forbidden'))).toEqual(["another company's record: answered 403, not 404", "another company's record: its code is forbidden, not not_found"])
    expect(judgeForeignRecord(missing, reply(200, { id: MISSING_ID }, 'application/json'))[0]).toBe("another company's record: answered 200, not 404")
    expect(judgeForeignRecord(missing, problem(404, 'not_found'))).toEqual([])
  })

  test('security is read from the operation, else from the document; [] or {} makes it public', () => {
    const doc: OpenApiDocument = {
      security: [{ apiToken: [] }],
      paths: {
        '/inherits': { get: {} },
        '/public': { get: { security: [] } },
        '/optional': { get: { security: [{}, { apiToken: [] }] } },
        '/internal': { get: { security: [{ internalSecret: [] }] } },
      },
    }
    expect(Object.fromEntries(operationsOf(doc).map((op) => [op.path, op.schemes]))).toEqual({ '/inherits': ['apiToken'], '/public': [], '/optional': [], '/internal': ['internalSecret'] })
  })

  test('a body is built from the required properties, using examples, enums and formats', () => {
    const doc: OpenApiDocument = {
      paths: {},
      components: { schemas: { Ref: { type: 'object', properties: { name: { type: 'string', pattern: '^[a-z]+$', example: 'abc' } }, required: ['name'] } } },
    }
    const schema = {
      type: 'object',
      properties: {
        id: { type: 'string', format: 'uuid' },
        scope: { type: 'string', enum: ['global', 'company'] },
        count: { type: 'integer', minimum: 1 },
        password: { type: 'string', minLength: 8 },
        nested: { $ref: '#/components/schemas/Ref' },
        maybe: { anyOf: [{ type: 'null' }, { type: 'boolean' }] },
        optional: { type: 'string' },
      },
      required: ['id', 'scope', 'count', 'password', 'nested', 'maybe'],
    }
    expect(exampleOf(doc, schema)).toEqual({ id: MISSING_ID, scope: 'global', count: 1, password: 'xxxxxxxx', nested: { name: 'abc' }, maybe: false })
    expect(exampleOf(doc, { ...schema, example: { given: true } })).toEqual({ given: true })
  })
})
