import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { sql } from 'kysely'
import { sweepAudit } from '../../src/audit/trail.ts'
import { modelCases, unique } from '../helpers/fixtures.ts'
import { startTestPlatform, type Principal, type TestPlatform } from '../helpers/platform.ts'
import { expectProblem } from '../helpers/problem.ts'
import { fieldsOf, rowsOf } from '../helpers/typed-call.ts'

let p: TestPlatform
let cases: ReturnType<typeof modelCases>
let companyA: string
let ownerA: Principal
let adminA: Principal
let memberA: Principal
let ownerB: Principal
const json = { accept: 'application/json' }

beforeAll(async () => {
  p = await startTestPlatform()
  cases = modelCases(p)
  companyA = await p.createCompany()
  ownerA = await p.createUser({ companyId: companyA, role: 'owner' })
  adminA = await p.createUser({ companyId: companyA, role: 'admin' })
  memberA = await p.createUser({ companyId: companyA, role: 'member', password: 'member-password-1' })
  ownerB = await p.createUser({ companyId: await p.createCompany(), role: 'owner' })
})
afterAll(() => p.close())

/** The events about one record (or account), oldest first, read straight from the store. */
function eventsOf(recordId: string, model?: string) {
  return p.store.db
    .selectFrom('audit_events')
    .selectAll()
    .where('record_id', '=', recordId)
    .$if(model !== undefined, (q) => q.where('model', '=', model!))
    .orderBy('created_at')
    .orderBy('id')
    .execute()
}

/** The one event an action left, with its fields checked; fails when there is none or more than one. */
async function theEvent(recordId: string, action: string) {
  const events = (await eventsOf(recordId)).filter((e) => e.action === action)
  expect(events, `${action} of ${recordId}`).toHaveLength(1)
  return events[0]!
}

async function signIn(username: string, password: string, requestId?: string) {
  return p.call('POST', '/auth/login', { as: null, json: { username, password }, headers: { ...json, ...(requestId ? { 'x-request-id': requestId } : {}) }, address: '203.0.113.7' })
}

describe('sign-ins, sign-outs and passwords', () => {
  test('a sign-in, a failed one and a sign-out are each one event with the address and request id', async () => {
    const person = await p.createUser({ companyId: companyA, password: 'right-password-1' })
    expect((await signIn(person.username, 'wrong-password-1', 'req-failed-1')).status).toBe(401)
    const ok = await signIn(person.username, 'right-password-1', 'req-signin-1')
    expect(ok.status).toBe(200)
    const cookie = /switchboard_session_token=[^;]+/.exec(ok.headers.get('set-cookie')!)![0]
    expect((await p.call('POST', '/auth/logout', { as: null, headers: { ...json, cookie, origin: 'http://127.0.0.1:8000' } })).status).toBe(204)

    const failed = await theEvent(person.userId, 'sign_in_failed')
    expect(failed).toMatchObject({ model: 'User', actor_id: null, company_id: null, address: '203.0.113.7', request_id: 'req-failed-1', changes: {} })
    expect(await theEvent(person.userId, 'sign_in')).toMatchObject({ actor_id: person.userId, address: '203.0.113.7', request_id: 'req-signin-1' })
    expect(await theEvent(person.userId, 'sign_out')).toMatchObject({ actor_id: person.userId, company_id: null })
    expect(JSON.stringify(await eventsOf(person.userId))).not.toContain('password-1')
  })

  test('a failed sign-in with a name nobody has is recorded without the name typed', async () => {
    const name = `nobody-${unique()}`
    expect((await signIn(name, 'whatever-123')).status).toBe(401)
    const [event] = await p.store.db.selectFrom('audit_events').selectAll().where('action', '=', 'sign_in_failed').where('record_id', 'is', null).orderBy('created_at', 'desc').limit(1).execute()
    expect(event).toMatchObject({ model: 'User', actor_id: null, address: '203.0.113.7' })
    expect(JSON.stringify(event)).not.toContain(name)
  })

  test('a password change says what it ended, never the password', async () => {
    const person = await p.createUser({ companyId: companyA, password: 'old-password-1' })
    // A wrong current password changes nothing and records nothing.
    expectProblem(await p.call('POST', '/api/me/password', { as: person, json: { current_password: 'wrong-one-1', password: 'another-password-3' } }), 422, 'validation_error')
    expect(await eventsOf(person.userId)).toEqual([])
    const changed = await p.call('POST', '/api/me/password', { as: person, json: { current_password: 'old-password-1', password: 'new-password-22', end_api_tokens: true } })
    expect(changed.status).toBe(204)
    const event = await theEvent(person.userId, 'password_change')
    expect(event).toMatchObject({ model: 'User', actor_id: person.userId, company_id: null, changes: { password: 'changed', ended: { api_tokens: 1, oauth_grants: 0 } } })
    expect(JSON.stringify(event)).not.toContain('password-22')
  })

  test('a reset link made by a superadmin and spent by the person: two events, the second by nobody signed in', async () => {
    const person = await p.createUser({ companyId: companyA, password: 'forgotten-password-1' })
    const link = await p.call('POST', `/api/users/${person.userId}/password-reset`, {})
    expect(link.status).toBe(201)
    expect(await theEvent(person.userId, 'password_reset_link')).toMatchObject({ actor_id: p.root.userId, changes: { link: 'shown' } })
    const token = fieldsOf(link.body).token as string
    expect((await p.call('POST', '/auth/password-reset', { as: null, json: { token, password: 'remembered-password-2' }, headers: json })).status).toBe(204)
    expect(await theEvent(person.userId, 'password_reset')).toMatchObject({ actor_id: null, changes: { password: 'changed' } })
    expect(JSON.stringify(await eventsOf(person.userId))).not.toContain(token)
  })

  test('a password set through the User record is "changed", never its value', async () => {
    const person = await p.createUser({ companyId: companyA })
    expect((await p.call('PATCH', `/api/v1/User/${person.userId}`, { json: { password: 'set-by-superadmin-9', display_name: 'Pat' } })).status).toBe(200)
    const event = await theEvent(person.userId, 'update')
    expect(event).toMatchObject({ model: 'User', actor_id: p.root.userId })
    expect(event.changes).toEqual({ display_name: { from: '', to: 'Pat' }, password: 'changed' })
    expect(JSON.stringify(event)).not.toContain('superadmin-9')
  })
})

describe('records an admin would ask about', () => {
  test('a role change is one update naming just the role, from and to, by whom and from where', async () => {
    const person = await p.createUser({ companyId: companyA, role: 'member' })
    const membership = rowsOf((await p.call('GET', `/api/v1/CompanyUser?user_id=eq.${person.userId}`, { as: ownerA })).body)[0]!
    const changed = await p.call('PATCH', `/api/v1/CompanyUser/${membership.id}`, { as: ownerA, json: { role: 'admin' }, headers: { 'x-request-id': 'req-role-1' }, address: '198.51.100.4' })
    expect(changed.status).toBe(200)
    const event = await theEvent(String(membership.id), 'update')
    expect(event).toMatchObject({ model: 'CompanyUser', company_id: companyA, actor_id: ownerA.userId, request_id: 'req-role-1', address: '198.51.100.4' })
    expect(event.changes).toEqual({ role: { from: 'member', to: 'admin' } })
  })

  test('a write the ladder refuses leaves no event', async () => {
    const membership = rowsOf((await p.call('GET', `/api/v1/CompanyUser?user_id=eq.${ownerA.userId}`, { as: adminA })).body)[0]!
    expectProblem(await p.call('PATCH', `/api/v1/CompanyUser/${membership.id}`, { as: adminA, json: { role: 'member' } }), 403, 'forbidden')
    expect(await eventsOf(String(membership.id))).toEqual([])
  })

  test.each(['ModelAcl', 'McpCommand', 'McpServer', 'McpPermission', 'AgentConfigRecord', 'SystemConfig', 'UserPlatform', 'Company', 'CompanyUser', 'OAuthClient', 'Budget'])(
    '%s: create, update and delete are one event each',
    async (model) => {
      const made = await p.call('POST', `/api/v1/${model}`, { json: await cases[model]!.make(p.root) })
      expect(made.status).toBe(201)
      const id = String(fieldsOf(made.body).id)
      expect((await p.call('PATCH', `/api/v1/${model}/${id}`, { json: cases[model]!.patch })).status).toBe(200)
      expect((await p.call('DELETE', `/api/v1/${model}/${id}`)).status).toBe(204)
      const events = await eventsOf(id, model)
      expect(events.map((e) => e.action)).toEqual(['create', 'update', 'delete'])
      for (const event of events) expect(event.actor_id).toBe(p.root.userId)
      expect(Object.keys(events[1]!.changes).sort()).toEqual(Object.keys(cases[model]!.patch).sort())
      expect(events[2]!.changes).toEqual(Object.fromEntries(Object.entries(events[2]!.changes).map(([k, v]) => [k, { from: (v as { from: unknown }).from }])))
    },
  )

  test('an MCP server’s inline secret value is "changed" when it changes, never shown', async () => {
    const input = await cases.McpServer!.make(p.root)
    const made = fieldsOf((await p.call('POST', '/api/v1/McpServer', { json: { ...input, env: { TOKEN: { value: 'first-inline-secret' } } } })).body)
    expect((await p.call('PATCH', `/api/v1/McpServer/${made.id}`, { json: { env: { TOKEN: { value: 'second-inline-secret' } } } })).status).toBe(200)
    const [created, updated] = await eventsOf(String(made.id), 'McpServer')
    expect(created!.changes.env).toEqual({ to: { TOKEN: { set: true } } })
    expect(updated!.changes).toEqual({ env: 'changed' })
    expect(JSON.stringify([created, updated])).not.toContain('inline-secret')
  })

  test('an API token made and revoked: two events, the token never recorded', async () => {
    const made = await p.call('POST', '/api/v1/ApiToken', { as: adminA, json: { name: 'nightly' } })
    expect(made.status).toBe(201)
    const { id, token } = fieldsOf(made.body) as { id: string; token: string }
    expect((await p.call('DELETE', `/api/v1/ApiToken/${id}`, { as: adminA })).status).toBe(204)
    const events = await eventsOf(id, 'ApiToken')
    expect(events.map((e) => [e.action, e.actor_id, e.company_id])).toEqual([
      ['create', adminA.userId, companyA],
      ['delete', adminA.userId, companyA],
    ])
    expect(JSON.stringify(events)).not.toContain(token)
  })

  test('a vault write records the name and place, never the value; a delete likewise', async () => {
    const name = `crm/key-${unique()}`
    expect((await p.call('PUT', '/api/vault/secrets', { as: adminA, json: { scope: 'company', name, value: 'vault-value-123' } })).status).toBe(200)
    expect((await p.call('PUT', '/api/vault/secrets', { as: adminA, json: { scope: 'company', name, value: 'vault-value-456' } })).status).toBe(200)
    expect((await p.call('DELETE', '/api/vault/secrets', { as: adminA, json: { scope: 'company', name } })).status).toBe(204)
    // Deleting what is not there changes nothing and records nothing.
    expectProblem(await p.call('DELETE', '/api/vault/secrets', { as: adminA, json: { scope: 'company', name } }), 404, 'not_found')
    const events = await eventsOf(name, 'VaultSecret')
    expect(events.map((e) => e.action)).toEqual(['secret_set', 'secret_set', 'secret_delete'])
    expect(events[0]).toMatchObject({ company_id: companyA, actor_id: adminA.userId, changes: { scope: 'company', owner_id: companyA, value: 'changed' } })
    expect(JSON.stringify(events)).not.toContain('vault-value')
  })
})

describe('who reads the trail', () => {
  test('a company’s admins read its events and its members’ sign-ins; another company’s are not there; members may not read', async () => {
    const agentOfB = fieldsOf((await p.call('POST', '/api/v1/AgentConfigRecord', { as: ownerB, json: { name: `b-${unique()}` } })).body).id as string
    const eventOfB = (await theEvent(agentOfB, 'create')).id
    expect((await signIn(memberA.username, 'member-password-1')).status).toBe(200)

    const listA = rowsOf((await p.call('GET', '/api/v1/AuditEvent?limit=500&order=created_at.desc', { as: adminA })).body)
    expect(listA.length).toBeGreaterThan(0)
    for (const event of listA) {
      if (event.company_id !== null) expect(event.company_id).toBe(companyA)
    }
    expect(listA.some((e) => e.action === 'sign_in' && e.record_id === memberA.userId)).toBe(true)
    expect(listA.some((e) => e.id === eventOfB)).toBe(false)
    expectProblem(await p.call('GET', `/api/v1/AuditEvent/${eventOfB}`, { as: adminA }), 404, 'not_found')

    // Company B's owner sees neither A's records nor A's members' sign-ins.
    const listB = rowsOf((await p.call('GET', '/api/v1/AuditEvent?limit=500', { as: ownerB })).body)
    expect(listB.some((e) => e.id === eventOfB)).toBe(true)
    expect(listB.some((e) => e.company_id === companyA || e.record_id === memberA.userId)).toBe(false)

    expectProblem(await p.call('GET', '/api/v1/AuditEvent', { as: memberA }), 403, 'forbidden')
    expectProblem(await p.call('GET', '/api/v1/AuditEvent', { as: null }), 401, 'unauthorized')
    // A superadmin reads every company's.
    expect((await p.call('GET', `/api/v1/AuditEvent/${eventOfB}`)).status).toBe(200)
  })

  test('filters by action, model and time, as every list does', async () => {
    const since = new Date(Date.now() - 1000).toISOString()
    const reply = await p.call('GET', `/api/v1/AuditEvent?action=eq.sign_in&model=eq.User&created_at=gte.${since}&count=exact`, { as: adminA })
    expect(reply.status).toBe(200)
    for (const event of rowsOf(reply.body)) expect(event).toMatchObject({ action: 'sign_in', model: 'User' })
  })
})

test('retention deletes the events older than the setting, and only those', async () => {
  const old = await p.call('POST', '/api/v1/AgentConfigRecord', { json: { name: `old-${unique()}` } })
  const oldId = String(fieldsOf(old.body).id)
  await p.store.db.updateTable('audit_events').set({ created_at: sql`now() - interval '40 days'` }).where('record_id', '=', oldId).execute()
  const fresh = String(fieldsOf((await p.call('POST', '/api/v1/AgentConfigRecord', { json: { name: `new-${unique()}` } })).body).id)
  expect(await sweepAudit(p.store.db, 30, Date.now(), 2)).toBeGreaterThanOrEqual(1)
  expect(await eventsOf(oldId)).toEqual([])
  expect(await eventsOf(fresh)).toHaveLength(1)
})
