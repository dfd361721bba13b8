import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { hasRole } from '../../src/auth/actor.ts'
import type { Verb } from '../../src/models/define.ts'
import { MODELS } from '../../src/models/registry.ts'
import { modelCases, unique } from '../helpers/fixtures.ts'
import { startTestPlatform, type Principal, type Reply, type TestPlatform } from '../helpers/platform.ts'
import { expectProblem } from '../helpers/problem.ts'
import { crudRoutes, expectRouteSecurity } from '../helpers/security.ts'
import { fieldsOf, rowsOf } from '../helpers/typed-call.ts'

let p: TestPlatform
let cases: ReturnType<typeof modelCases>
let alice: Principal // owner of company A
let bob: Principal // owner of company B
let aliceMember: Principal

beforeAll(async () => {
  p = await startTestPlatform()
  cases = modelCases(p)
  alice = await p.createUser({ companyId: await p.createCompany('company-a'), role: 'owner' })
  bob = await p.createUser({ companyId: await p.createCompany('company-b'), role: 'owner' })
  aliceMember = await p.createUser({ companyId: alice.companyId, role: 'member' })
})
afterAll(() => p.close())

/** A record of `model` belonging to `owner`'s company (or to them), and its id. */
async function recordOf(model: string, owner: Principal): Promise<string> {
  if (model === 'CompanyUser') {
    const listed = await p.call('GET', `/api/v1/CompanyUser?user_id=eq.${owner.userId}`, { as: owner })
    return listed.body.data[0]!.id
  }
  if (model === 'User') return owner.userId
  if (model === 'Company') return owner.companyId!
  // What only the platform writes (usage, linked accounts by hand) a superadmin makes, working in the owner's company.
  const writer = hasRole(ownerActor, modelNamed(model).access.create) ? { as: owner } : { as: p.root, headers: { 'x-switchboard-company': owner.companyId! } }
  if (cases[model]!.create) return (await cases[model]!.create!(owner)).id
  const made = await p.call('POST', `/api/v1/${model}`, { ...writer, json: await cases[model]!.make(owner) })
  if (made.status !== 201) throw new Error(`${model}: ${made.status} ${JSON.stringify(made.body)}`)
  return fieldsOf(made.body).id as string
}

const ownerActor = { userId: '', companyId: '', role: 'owner', isSuperadmin: false } as const
const modelNamed = (name: string) => MODELS.find((m) => m.name === name)!

// Platform-wide models hold no tenant's data: only superadmins write them (tested below).
const GLOBAL = new Set(['SystemConfig', 'ModelAcl', 'McpCommand', 'OAuthClient'])
const TENANT_DATA = MODELS.filter((m) => !GLOBAL.has(m.name)).map((m) => m.name)

describe.each(TENANT_DATA)('%s: company A cannot reach company B’s record', (model) => {
  test('list, read, replace, patch and delete all behave as if it did not exist', async () => {
    const id = await recordOf(model, bob)
    const before = await p.call('GET', `/api/v1/${model}/${id}`, { as: bob })
    expect(before.status).toBe(200)

    // Where the owner's role allows the verb at all, the record is simply not there (404); otherwise the verb
    // itself is refused (403) before any record is looked at.
    // A model only the platform writes refuses every write as such (405), whoever's record it names.
    const refused = (reply: Reply, verb: Verb) =>
      verb !== 'read' && modelNamed(model).writtenElsewhere
        ? expectProblem(reply, 405, 'method_not_allowed')
        : hasRole(ownerActor, modelNamed(model).access[verb])
          ? expectProblem(reply, 404, 'not_found')
          : expectProblem(reply, 403, 'forbidden')
    expect(rowsOf((await p.call('GET', `/api/v1/${model}?id=eq.${id}`, { as: alice })).body)).toEqual([])
    refused(await p.call('GET', `/api/v1/${model}/${id}`, { as: alice }), 'read')
    const body = await cases[model]!.make(p.root)
    refused(await p.call('PUT', `/api/v1/${model}/${id}`, { as: alice, json: body }), 'update')
    refused(await p.call('PATCH', `/api/v1/${model}/${id}`, { as: alice, json: cases[model]!.patch }), 'update')
    refused(await p.call('DELETE', `/api/v1/${model}/${id}`, { as: alice }), 'delete')

    const after = await p.call('GET', `/api/v1/${model}/${id}`, { as: bob })
    expect(after.body).toEqual(before.body)
  })
})

describe.each(MODELS.filter((m) => m.tenantColumn).map((m) => m.name))('%s: the tenant column cannot be set', (model) => {
  test('neither on create nor by patching a record into another company', async () => {
    const body = await cases[model]!.make(alice)
    // Where the generic create is not offered, it is refused whatever the body says.
    const [status, code] = modelNamed(model).createdElsewhere ? ([405, 'method_not_allowed'] as const) : ([422, 'validation_error'] as const)
    expectProblem(await p.call('POST', `/api/v1/${model}`, { as: alice, json: { ...body, company_id: bob.companyId } }), status, code)
    const id = await recordOf(model, alice)
    expectProblem(await p.call('PATCH', `/api/v1/${model}/${id}`, { as: alice, json: { company_id: bob.companyId } }), 422, 'validation_error')
    expect(fieldsOf((await p.call('GET', `/api/v1/${model}/${id}`, { as: alice })).body).company_id).toBe(alice.companyId)
  })
})

describe('references across tenants', () => {
  test('a record cannot be made to point at another company’s record or user', async () => {
    const bobsConversation = await recordOf('WebchatConversation', bob)
    // (Documents are uploaded: an upload to another company's conversation is a 404, in tests/api/documents.test.ts;
    // plans are made through POST /api/plans, where another company's conversation is a 404, in tests/plugins/mcp-planning.test.ts.)
    for (const model of ['WebchatMessage', 'WebchatParticipant']) {
      const body = { ...(await cases[model]!.make(alice)), conversation_id: bobsConversation }
      const problem = expectProblem(await p.call('POST', `/api/v1/${model}`, { as: alice, json: body }), 422, 'validation_error')
      expect(problem.errors).toContainEqual({ path: 'conversation_id', message: 'no such record' })
    }
    const participant = { ...(await cases.WebchatParticipant!.make(alice)), user_id: bob.userId }
    expectProblem(await p.call('POST', '/api/v1/WebchatParticipant', { as: alice, json: participant }), 422, 'validation_error')
    expectProblem(await p.call('POST', '/api/v1/CompanyUser', { as: alice, json: { user_id: bob.userId, role: 'owner' } }), 422, 'validation_error')
  })

  test('an admin cannot take over a user who also belongs to another company', async () => {
    const shared = await p.createUser({ companyId: alice.companyId })
    await p.store.db.insertInto('company_users').values({ id: Bun.randomUUIDv7(), company_id: bob.companyId!, user_id: shared.userId, role: 'member' }).execute()
    expect((await p.call('GET', `/api/v1/User/${shared.userId}`, { as: alice })).status).toBe(200)
    expectProblem(await p.call('PATCH', `/api/v1/User/${shared.userId}`, { as: alice, json: { password: 'taken-over-now' } }), 403, 'forbidden')
    expectProblem(await p.call('DELETE', `/api/v1/User/${shared.userId}`, { as: alice }), 403, 'forbidden')
    const stored = await p.store.db.selectFrom('users').select('password_hash').where('id', '=', shared.userId).executeTakeFirstOrThrow()
    expect(stored.password_hash).toBeNull()
    // They may still change themselves.
    expect((await p.call('PATCH', `/api/v1/User/${shared.userId}`, { as: shared, json: { display_name: 'Me' } })).status).toBe(200)
  })
})

describe('roles and model ACLs', () => {
  test('a member may list agents but not delete one', async () => {
    const id = await recordOf('AgentConfigRecord', alice)
    expect((await p.call('GET', '/api/v1/AgentConfigRecord', { as: aliceMember })).status).toBe(200)
    expectProblem(await p.call('DELETE', `/api/v1/AgentConfigRecord/${id}`, { as: aliceMember }), 403, 'forbidden')
    expect((await p.call('DELETE', `/api/v1/AgentConfigRecord/${id}`, { as: alice })).status).toBe(204)
  })

  test('a superadmin’s ModelAcl override takes effect at once, and removing it restores the default', async () => {
    expect((await p.call('GET', '/api/v1/Plan', { as: aliceMember })).status).toBe(200)
    const override = await p.call('POST', '/api/v1/ModelAcl', { json: { model: 'Plan', verb: 'list', min_role: 'admin' } })
    expect(override.status).toBe(201)
    expectProblem(await p.call('GET', '/api/v1/Plan', { as: aliceMember }), 403, 'forbidden')
    expect((await p.call('GET', '/api/v1/Plan', { as: alice })).status).toBe(200)
    await p.call('DELETE', `/api/v1/ModelAcl/${override.body.id}`)
    expect((await p.call('GET', '/api/v1/Plan', { as: aliceMember })).status).toBe(200)
  })

  test('platform settings, ACLs and the program catalogue are superadmins’ to write; settings and ACLs theirs to read', async () => {
    expectProblem(await p.call('GET', '/api/v1/SystemConfig', { as: alice }), 403, 'forbidden')
    expectProblem(await p.call('GET', '/api/v1/ModelAcl', { as: alice }), 403, 'forbidden')
    expect((await p.call('GET', '/api/v1/McpCommand', { as: alice })).status).toBe(200)
    expectProblem(await p.call('POST', '/api/v1/McpCommand', { as: alice, json: { name: 'sh', command: '/bin/sh' } }), 403, 'forbidden')
    expectProblem(await p.call('POST', '/api/v1/SystemConfig', { as: alice, json: { key: 'x', value: 1 } }), 403, 'forbidden')
    expectProblem(await p.call('GET', '/api/v1/OAuthClient', { as: alice }), 403, 'forbidden')
    expectProblem(await p.call('POST', '/api/v1/ModelAcl', { as: alice, json: { model: 'Plan', verb: 'read', min_role: 'owner' } }), 403, 'forbidden')
    expectProblem(await p.call('POST', '/api/v1/ModelAcl', { json: { model: 'NoSuchModel', verb: 'read', min_role: 'owner' } }), 422, 'validation_error')
  })

  test('a change of role is seen on the next request', async () => {
    const climber = await p.createUser({ companyId: alice.companyId, role: 'member' })
    expectProblem(await p.call('POST', '/api/v1/AgentConfigRecord', { as: climber, json: { name: `c-${unique()}` } }), 403, 'forbidden')
    const membership = (await p.call('GET', `/api/v1/CompanyUser?user_id=eq.${climber.userId}`, { as: alice })).body.data[0]!
    expect((await p.call('PATCH', `/api/v1/CompanyUser/${membership.id}`, { as: alice, json: { role: 'admin' } })).status).toBe(200)
    expect((await p.call('POST', '/api/v1/AgentConfigRecord', { as: climber, json: { name: `c-${unique()}` } })).status).toBe(201)
  })

  test('a user of several companies picks one with X-Switchboard-Company; others are refused', async () => {
    const both = await p.createUser({ companyId: alice.companyId, role: 'member' })
    await p.store.db.insertInto('company_users').values({ id: Bun.randomUUIDv7(), company_id: bob.companyId!, user_id: both.userId, role: 'admin' }).execute()
    const bobsAgent = await recordOf('AgentConfigRecord', bob)
    expectProblem(await p.call('GET', `/api/v1/AgentConfigRecord/${bobsAgent}`, { as: both }), 404, 'not_found')
    const inB = { 'x-switchboard-company': bob.companyId! }
    expect((await p.call('GET', `/api/v1/AgentConfigRecord/${bobsAgent}`, { as: both, headers: inB })).status).toBe(200)
    const other = await p.createCompany()
    expectProblem(await p.call('GET', '/api/v1/AgentConfigRecord', { as: both, headers: { 'x-switchboard-company': other } }), 403, 'forbidden')
    expectProblem(await p.call('GET', '/api/v1/AgentConfigRecord', { as: both, headers: { 'x-switchboard-company': 'acme' } }), 400, 'bad_request')
  })

  test('a user of no company is told so, not shown an empty world', async () => {
    const loner = await p.createUser({ companyId: null })
    const problem = expectProblem(await p.call('GET', '/api/v1/AgentConfigRecord', { as: loner }), 403, 'forbidden')
    expect(problem.detail).toContain('not a member of any')
    expect((await p.call('GET', `/api/v1/User/${loner.userId}`, { as: loner })).status).toBe(200)
  })

  test('conversations are private to their creator and participants, whatever the role', async () => {
    const conversation = (await p.call('POST', '/api/v1/WebchatConversation', { as: aliceMember, json: { title: 'mine' } })).body.id
    const message = await p.call('POST', '/api/v1/WebchatMessage', { as: aliceMember, json: { conversation_id: conversation, text: 'private' } })
    expectProblem(await p.call('GET', `/api/v1/WebchatConversation/${conversation}`, { as: alice }), 404, 'not_found')
    expectProblem(await p.call('GET', `/api/v1/WebchatMessage/${message.body.id}`, { as: alice }), 404, 'not_found')
    await p.call('POST', '/api/v1/WebchatParticipant', { as: aliceMember, json: { conversation_id: conversation, user_id: alice.userId } })
    const seen = await p.call('GET', `/api/v1/WebchatMessage?conversation_id=eq.${conversation}`, { as: alice })
    expect(seen.body.data.map((m: { text: string }) => m.text)).toEqual(['private'])
  })
})

describe('every route gets the same security cases', () => {
  let weak: Principal
  beforeAll(async () => {
    // Raise every verb of every model to superadmin: an owner is then below every route.
    for (const model of MODELS) {
      for (const verb of ['list', 'read', 'create', 'update', 'delete']) {
        const reply = await p.call('POST', '/api/v1/ModelAcl', { json: { model: model.name, verb, min_role: 'superadmin' } })
        if (reply.status !== 201) throw new Error(JSON.stringify(reply.body))
      }
    }
    weak = alice
  })

  test.each(MODELS.map((m) => [m.name, m] as const))('%s', async (_name, model) => {
    const body = await cases[model.name]!.make(p.root)
    for (const route of crudRoutes(model)) await expectRouteSecurity(p, route, weak, body)
  })
})
