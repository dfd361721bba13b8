import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { sql } from 'kysely'
import { MODELS } from '../../src/models/registry.ts'
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts'
import { expectProblem } from '../helpers/problem.ts'
import { modelCases, unique } from '../helpers/fixtures.ts'
import { fieldsOf, rowsOf, type CallBody } from '../helpers/typed-call.ts'

let p: TestPlatform
let CASES: ReturnType<typeof modelCases>

async function create<const Model extends string>(model: Model, json: Record<string, unknown>): Promise<CallBody<'POST', `/api/v1/${Model}`>> {
  const reply = await p.call('POST', `/api/v1/${model}`, { json })
  if (reply.status !== 201) throw new Error(`creating ${model}: ${reply.status} ${JSON.stringify(reply.body)}`)
  return reply.body
}
const newAgent = async () => (await create('AgentConfigRecord', { name: `agent-${unique()}` })).id
const newConversation = async () => (await create('WebchatConversation', { title: 'c', agent_id: await newAgent() })).id

beforeAll(async () => {
  p = await startTestPlatform()
  CASES = modelCases(p)
})
afterAll(() => p.close())

test('every model of the registry has a CRUD case here', () => {
  expect(Object.keys(CASES).sort()).toEqual(MODELS.map((m) => m.name).sort())
})

/**
 * Makes a record the way its model is made: the generic create, with its answer checked; or, for a model created
 * elsewhere (a document is uploaded), that way, after checking that the generic create answers 405 saying so.
 */
async function createThroughApi(model: string, input: Record<string, unknown>) {
  const elsewhere = MODELS.find((m) => m.name === model)!.createdElsewhere
  if (elsewhere) {
    const refused = expectProblem(await p.call('POST', `/api/v1/${model}`, { json: input }), 405, 'method_not_allowed')
    expect(refused.detail).toContain(elsewhere)
    const body = await CASES[model]!.create!(p.root)
    return { body }
  }
  const created = await p.call('POST', `/api/v1/${model}`, { json: input })
  expect(created.status).toBe(201)
  const body = fieldsOf(created.body)
  expect(created.headers.get('etag')).toBe('"1"')
  expect(created.headers.get('location')).toBe(`/api/v1/${model}/${body.id}`)
  expect(body).toMatchObject(input)
  return { body }
}

describe.each(MODELS.filter((m) => m.writtenElsewhere).map((m) => m.name))('%s, which only the platform writes', (model) => {
  test('is read and listed; every write is refused with 405 and changes nothing', async () => {
    const made = await CASES[model]!.create!(p.root)
    const read = await p.call('GET', `/api/v1/${model}/${made.id}`)
    expect(read.status).toBe(200)
    expect(read.body).toEqual(made)
    expect(rowsOf((await p.call('GET', `/api/v1/${model}?id=eq.${made.id}`)).body)).toEqual([made])
    const writes = [
      ['POST', `/api/v1/${model}`, { json: {} }],
      ['PUT', `/api/v1/${model}/${made.id}`, { json: {} }],
      ['PATCH', `/api/v1/${model}/${made.id}`, { json: {} }],
      ['DELETE', `/api/v1/${model}/${made.id}`, {}],
    ] as const
    for (const [method, path, options] of writes) {
      const refused = expectProblem(await p.call(method, path, options), 405, 'method_not_allowed')
      expect(refused.detail).toContain(MODELS.find((m) => m.name === model)!.writtenElsewhere!)
    }
    expect((await p.call('GET', `/api/v1/${model}/${made.id}`)).body).toEqual(made)
  })
})

describe.each(MODELS.filter((m) => !m.writtenElsewhere).map((m) => m.name))('%s', (model) => {
  test('create, read, list, patch, replace, delete', async () => {
    const { make, patch, after, replacement: replacing, changedBy } = CASES[model]!
    const input = await make(p.root)
    const changer = changedBy?.(input) ?? p.root
    const created = await createThroughApi(model, input)
    const id = created.body.id as string
    expect(created.body.created_at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/)
    // Values generated on create (an API token) are shown in that response only.
    const shownOnce = new Set(Object.keys(MODELS.find((m) => m.name === model)!.generated?.shape ?? {}))
    const stored = Object.fromEntries(Object.entries(created.body).filter(([key]) => !shownOnce.has(key)))

    const read = await p.call('GET', `/api/v1/${model}/${id}`)
    expect(read.status).toBe(200)
    expect(read.body).toEqual(stored)

    const listed = await p.call('GET', `/api/v1/${model}?id=eq.${id}`)
    expect(rowsOf(listed.body)).toEqual([stored])

    const patched = await p.call('PATCH', `/api/v1/${model}/${id}`, {
      json: patch,
      headers: { 'content-type': 'application/merge-patch+json', 'if-match': '"1"' },
      as: changer,
    })
    expect(patched.status).toBe(200)
    expect(patched.headers.get('etag')).toBe('"2"')
    expect(patched.body).toMatchObject(after)
    expect(fieldsOf(patched.body).created_at).toBe(created.body.created_at)
    expect((await p.call('GET', `/api/v1/${model}/${id}`)).body).toEqual(patched.body)

    const stale = await p.call('PATCH', `/api/v1/${model}/${id}`, { json: patch, headers: { 'if-match': '"1"' }, as: changer })
    expectProblem(stale, 412, 'precondition_failed')

    const replacement = replacing ? await replacing(input) : await make(p.root)
    const replaced = await p.call('PUT', `/api/v1/${model}/${id}`, { json: replacement, headers: { 'if-match': '"2"' }, as: changer })
    expect(replaced.status).toBe(200)
    expect(replaced.headers.get('etag')).toBe('"3"')
    expect(replaced.body).toMatchObject(replacement)
    expect(fieldsOf(replaced.body).id).toBe(id)

    expect((await p.call('DELETE', `/api/v1/${model}/${id}`, { headers: { 'if-match': '"2"' } })).status).toBe(412)
    const deleted = await p.call('DELETE', `/api/v1/${model}/${id}`, { headers: { 'if-match': '"3"' } })
    expect(deleted.status).toBe(204)
    expectProblem(await p.call('GET', `/api/v1/${model}/${id}`), 404, 'not_found')
    expectProblem(await p.call('DELETE', `/api/v1/${model}/${id}`), 404, 'not_found')
    expectProblem(await p.call('PATCH', `/api/v1/${model}/${id}`, { json: patch }), 404, 'not_found')
  })

  test('read-only fields and unknown fields in a body are refused with 422', async () => {
    const input = await CASES[model]!.make(p.root)
    // Where the generic create is not offered, a replace is where a body's fields are judged.
    const target = CASES[model]!.create ? `/api/v1/${model}/${(await CASES[model]!.create!(p.root)).id}` : `/api/v1/${model}`
    const method = CASES[model]!.create ? 'PUT' : 'POST'
    for (const extra of [{ id: '01936f3e-6d2a-7c41-9b1e-2f3a4b5c6d7e' }, { created_at: '2020-01-01T00:00:00Z' }, { no_such_field: 1 }]) {
      const problem = expectProblem(await p.call(method, target, { json: { ...input, ...extra } }), 422, 'validation_error')
      expect(problem.errors?.[0]?.message).toContain(Object.keys(extra)[0]!)
    }
  })
})

describe('server-set and secret fields', () => {
  test('the tenant column, the author and the role come from the server, never the body', async () => {
    for (const [model, field] of [['AgentConfigRecord', 'company_id'], ['WebchatMessage', 'sender_id'], ['WebchatMessage', 'role'], ['User', 'id']] as const) {
      const input = { ...(await CASES[model]!.make(p.root)), [field]: field === 'role' ? 'agent' : '01936f3e-6d2a-7c41-9b1e-2f3a4b5c6d7e' }
      const problem = expectProblem(await p.call('POST', `/api/v1/${model}`, { json: input }), 422, 'validation_error')
      expect(problem.errors?.[0]?.message).toContain(field)
    }
    const message = await create('WebchatMessage', { conversation_id: await newConversation(), text: 'mine' })
    expect(message.sender_id).toBe(p.root.userId)
    expect(message.company_id).toBe(p.root.companyId!)
  })

  test('a password is stored as an argon2id hash and never shown', async () => {
    const user = await create('User', { email: 'grace@example.com', username: 'grace', password: 'correct horse battery' })
    expect(Object.keys(user)).not.toContain('password')
    expect(Object.keys(user)).not.toContain('password_hash')
    const stored = await p.store.db.selectFrom('users').select('password_hash').where('id', '=', user.id).executeTakeFirstOrThrow()
    expect(stored.password_hash).toStartWith('$argon2id$')
    expect(await Bun.password.verify('correct horse battery', stored.password_hash!)).toBe(true)
    const listed = await p.call('GET', '/api/v1/User?username=eq.grace')
    expect(JSON.stringify(listed.body)).not.toContain('argon2')
    // A patch that leaves the password out keeps it.
    await p.call('PATCH', `/api/v1/User/${user.id}`, { json: { display_name: 'Grace' } })
    const after = await p.store.db.selectFrom('users').select('password_hash').where('id', '=', user.id).executeTakeFirstOrThrow()
    expect(after.password_hash).toBe(stored.password_hash)
  })

  test('a message shows its sender’s display name, resolved in the same query', async () => {
    const conversation = await newConversation()
    await create('WebchatMessage', { conversation_id: conversation, text: 'one' })
    expect((await p.call('PATCH', `/api/v1/User/${p.root.userId}`, { json: { display_name: '' } })).status).toBe(200)
    const listed = await p.call('GET', `/api/v1/WebchatMessage?conversation_id=eq.${conversation}&select=text,sender_name`)
    expect(rowsOf(listed.body)).toEqual([{ text: 'one', sender_name: 'admin' }])
    expect((await p.call('PATCH', `/api/v1/User/${p.root.userId}`, { json: { display_name: 'Administrator' } })).status).toBe(200)
  })

  test('a conversation reports has_plan, and can be filtered by it', async () => {
    const withPlan = await newConversation()
    const without = await newConversation()
    expect((await p.call('POST', '/api/plans', { json: { conversation_id: withPlan, title: 'Plan', tasks: [{ title: 'Step' }] } })).status).toBe(201)
    const listed = await p.call('GET', `/api/v1/WebchatConversation?id=in.(${withPlan},${without})&has_plan=is.true&select=id,has_plan`)
    expect(rowsOf(listed.body)).toEqual([{ id: withPlan, has_plan: true }])
  })
})

describe('the Allow header says what the caller’s role may do', () => {
  test('an admin may change an agent; a member only read it; a superadmin-only model offers a member nothing but reading', async () => {
    const id = await newAgent()
    const member = await p.createUser({ role: 'member' })
    const allow = async (path: string, as = p.root) => (await p.call('GET', path, { as })).headers.get('allow')
    expect(await allow('/api/v1/AgentConfigRecord')).toBe('GET, HEAD, POST')
    expect(await allow(`/api/v1/AgentConfigRecord/${id}`)).toBe('GET, HEAD, PATCH, PUT, DELETE')
    expect(await allow('/api/v1/AgentConfigRecord', member)).toBe('GET, HEAD')
    expect(await allow(`/api/v1/AgentConfigRecord/${id}`, member)).toBe('GET, HEAD')
    expect(await allow('/api/v1/Company', member)).toBe('GET, HEAD')
    // A model only the platform writes, or one created elsewhere, is never offered a generic write.
    expect(await allow('/api/v1/AuditEvent')).toBe('GET, HEAD')
    expect(await allow('/api/v1/WebchatDocument')).toBe('GET, HEAD')
  })

  test('a ModelAcl that lets members update agents shows at once', async () => {
    const id = await newAgent()
    const member = await p.createUser({ role: 'member' })
    const acl = await p.call('POST', '/api/v1/ModelAcl', { json: { model: 'AgentConfigRecord', verb: 'update', min_role: 'member' } })
    expect(acl.status).toBe(201)
    try {
      expect((await p.call('GET', `/api/v1/AgentConfigRecord/${id}`, { as: member })).headers.get('allow')).toBe('GET, HEAD, PATCH, PUT')
    } finally {
      expect((await p.call('DELETE', `/api/v1/ModelAcl/${acl.body.id}`)).status).toBe(204)
    }
  })
})

describe('ETags', () => {
  test('a GET with a current If-None-Match answers 304', async () => {
    const agent = await create('AgentConfigRecord', { name: `etag-${unique()}` })
    const first = await p.call('GET', `/api/v1/AgentConfigRecord/${agent.id}`)
    const again = await p.call('GET', `/api/v1/AgentConfigRecord/${agent.id}`, { headers: { 'if-none-match': first.headers.get('etag')! } })
    expect(again.status).toBe(304)
    await p.call('PATCH', `/api/v1/AgentConfigRecord/${agent.id}`, { json: { description: 'changed' } })
    const changed = await p.call('GET', `/api/v1/AgentConfigRecord/${agent.id}`, { headers: { 'if-none-match': first.headers.get('etag')! } })
    expect(changed.status).toBe(200)
    expect(changed.body.description).toBe('changed')
  })

  test('an If-Match that was never an ETag is a 412, and nothing is written', async () => {
    const agent = await create('AgentConfigRecord', { name: `etag-${unique()}` })
    expectProblem(await p.call('PUT', `/api/v1/AgentConfigRecord/${agent.id}`, { json: { name: 'x' }, headers: { 'if-match': 'garbage' } }), 412, 'precondition_failed')
    expect((await p.call('GET', `/api/v1/AgentConfigRecord/${agent.id}`)).body.name).toBe(agent.name)
  })

  test('twenty concurrent patches of different fields all land: no change is lost or refused', async () => {
    const agent = await create('AgentConfigRecord', { name: `race-${unique()}` })
    const keys = Array.from({ length: 20 }, (_, i) => `server-${i}`)
    const replies = await Promise.all(
      keys.map((key) => p.call('PATCH', `/api/v1/AgentConfigRecord/${agent.id}`, { json: { mcp_permissions: { servers: { [key]: { deny: ['x'] } } } } })),
    )
    expect(replies.map((r) => r.status)).toEqual(keys.map(() => 200))
    const final = await p.call('GET', `/api/v1/AgentConfigRecord/${agent.id}`)
    expect(Object.keys(final.body.mcp_permissions?.servers ?? {}).sort()).toEqual(keys.sort())
    expect(final.headers.get('etag')).toBe('"21"')
  })

  test('If-Match may list tags; comparison is strong; If-None-Match: * matches any current record', async () => {
    const agent = await create('AgentConfigRecord', { name: `tags-${unique()}` })
    const path = `/api/v1/AgentConfigRecord/${agent.id}`
    expect((await p.call('PATCH', path, { json: { description: 'a' }, headers: { 'if-match': '"7", "1"' } })).status).toBe(200)
    expectProblem(await p.call('PATCH', path, { json: { description: 'b' }, headers: { 'if-match': 'W/"2"' } }), 412, 'precondition_failed')
    expect((await p.call('PATCH', path, { json: { description: 'c' }, headers: { 'if-match': '*' } })).status).toBe(200)
    expect((await p.call('GET', path, { headers: { 'if-none-match': '*' } })).status).toBe(304)
    expect((await p.call('GET', path, { headers: { 'if-none-match': 'W/"3"' } })).status).toBe(304)
  })
})

describe('merge patch and replace semantics', () => {
  test('a nested key can be changed alone, or removed with null', async () => {
    const agent = await create('AgentConfigRecord', {
      name: `nested-${unique()}`,
      channels: { slack: { bot_token_secret: 'slack/bot', signing_secret_secret: 'slack/signing' }, webchat: {} },
    })
    const path = `/api/v1/AgentConfigRecord/${agent.id}`
    const off = await p.call('PATCH', path, { json: { channels: { slack: { enabled: false } } } })
    expect(off.status).toBe(200)
    expect(fieldsOf(off.body).channels).toEqual({
      slack: { enabled: false, unknown_senders: 'invite', bot_token_secret: 'slack/bot', signing_secret_secret: 'slack/signing' },
      webchat: { enabled: true },
    })
    const removed = await p.call('PATCH', path, { json: { channels: { slack: null } } })
    expect(removed.status).toBe(200)
    expect(fieldsOf(removed.body).channels).toEqual({ webchat: { enabled: true } })
  })

  test('PUT resets every writable field the body leaves out to its default', async () => {
    const agent = await create('AgentConfigRecord', { name: `put-${unique()}`, personality: 'Kind.', timeout_seconds: 60, email: { account: 'a@example.com' } })
    const replaced = await p.call('PUT', `/api/v1/AgentConfigRecord/${agent.id}`, { json: { name: agent.name } })
    expect(replaced.body).toMatchObject({ name: agent.name, personality: '', timeout_seconds: 900, email: {} })
  })

  test('editing a message keeps who wrote it and what kind it is', async () => {
    const conversation = await newConversation()
    const id = Bun.randomUUIDv7()
    await p.store.db
      .insertInto('webchat_messages')
      .values({ id, company_id: p.root.companyId!, conversation_id: conversation, sender_id: null, agent_id: null, role: 'agent', text: 'I am the agent', attachments: sql`'[]'::jsonb` })
      .execute()
    const edited = await p.call('PATCH', `/api/v1/WebchatMessage/${id}`, { json: { text: 'corrected' } })
    expect(edited.status).toBe(200)
    expect(edited.body).toMatchObject({ text: 'corrected', role: 'agent', sender_id: null })
  })
})

describe('validation of bodies', () => {
  test('a wrong type, a bad nested value and a missing required field each name their path', async () => {
    const problem = expectProblem(
      await p.call('POST', '/api/v1/AgentConfigRecord', { json: { timeout_seconds: 'long', email: { account: 'not-an-email' }, channels: { slack: { enabled: true } } } }),
      422,
      'validation_error',
    )
    expect(problem.errors!.map((e) => e.path).sort()).toEqual(['channels.slack.bot_token_secret', 'channels.slack.signing_secret_secret', 'email.account', 'name', 'timeout_seconds'])
  })

  test('a patch that would make the record invalid is refused and changes nothing', async () => {
    const agent = await create('AgentConfigRecord', { name: `v-${unique()}` })
    expectProblem(await p.call('PATCH', `/api/v1/AgentConfigRecord/${agent.id}`, { json: { name: null } }), 422, 'validation_error')
    expectProblem(await p.call('PATCH', `/api/v1/AgentConfigRecord/${agent.id}`, { json: { voice: { language: 'not a tag!' } } }), 422, 'validation_error')
    expectProblem(await p.call('PATCH', `/api/v1/AgentConfigRecord/${agent.id}`, { json: { bogus: 1 } }), 422, 'validation_error')
    const after = await p.call('GET', `/api/v1/AgentConfigRecord/${agent.id}`)
    expect(after.body).toEqual(agent)
    expect(after.headers.get('etag')).toBe('"1"')
  })

  test('a duplicate unique field is a 409 naming the field', async () => {
    const name = `dup-${unique()}`
    await create('AgentConfigRecord', { name })
    const problem = expectProblem(await p.call('POST', '/api/v1/AgentConfigRecord', { json: { name } }), 409, 'conflict')
    expect(problem.detail).toContain('name')
    expect(problem.detail).not.toContain('company_id')
    const user = await create('User', { email: 'case@example.com', username: 'casey' })
    expect(user.username).toBe('casey')
    expectProblem(await p.call('POST', '/api/v1/User', { json: { email: 'CASE@example.com', username: 'other' } }), 409, 'conflict')
  })

  test('a reference to a record that does not exist is a 422 on that field', async () => {
    const problem = expectProblem(
      await p.call('POST', '/api/v1/WebchatMessage', { json: { conversation_id: '01936f3e-6d2a-7c41-9b1e-2f3a4b5c6d7e', text: 'x' } }),
      422,
      'validation_error',
    )
    expect(problem.errors).toEqual([{ path: 'conversation_id', message: 'no such record' }])
  })
})
