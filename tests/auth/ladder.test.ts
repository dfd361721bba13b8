import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { startTestPlatform, type Principal, type TestPlatform } from '../helpers/platform.ts'
import { expectProblem } from '../helpers/problem.ts'

// The role ladder, each rule from both sides: member < admin < owner < superadmin.
let p: TestPlatform
let company: string
let owner: Principal
let admin: Principal
let otherAdmin: Principal
let member: Principal

/** The user's membership of their company, as the superadmin working in that company reads it. */
const membershipOf = async (user: Principal) =>
  (await p.call('GET', `/api/v1/CompanyUser?user_id=eq.${user.userId}`, { headers: { 'x-switchboard-company': user.companyId! } })).body.data[0]!
const membership = async (user: Principal) => (await membershipOf(user)).id as string
const roleOf = async (user: Principal) => (await membershipOf(user))?.role

beforeAll(async () => {
  p = await startTestPlatform()
  company = await p.createCompany()
  owner = await p.createUser({ companyId: company, role: 'owner' })
  admin = await p.createUser({ companyId: company, role: 'admin' })
  otherAdmin = await p.createUser({ companyId: company, role: 'admin' })
  member = await p.createUser({ companyId: company, role: 'member' })
})
afterAll(() => p.close())

describe('nobody grants a role above their own', () => {
  test('an admin cannot make themselves or anyone owner', async () => {
    expectProblem(await p.call('PATCH', `/api/v1/CompanyUser/${await membership(admin)}`, { as: admin, json: { role: 'owner' } }), 403, 'forbidden')
    expectProblem(await p.call('PATCH', `/api/v1/CompanyUser/${await membership(member)}`, { as: admin, json: { role: 'owner' } }), 403, 'forbidden')
    expect(await roleOf(admin)).toBe('admin')
    expect(await roleOf(member)).toBe('member')
  })

  test('an admin grants up to admin; an owner grants owner', async () => {
    const hired = await p.createUser({ companyId: company, role: 'member' })
    expect((await p.call('PATCH', `/api/v1/CompanyUser/${await membership(hired)}`, { as: admin, json: { role: 'admin' } })).status).toBe(200)
    expect((await p.call('PATCH', `/api/v1/CompanyUser/${await membership(hired)}`, { as: owner, json: { role: 'owner' } })).status).toBe(200)
    expect(await roleOf(hired)).toBe('owner')
  })

  test('only a superadmin makes or unmakes superadmins', async () => {
    expectProblem(await p.call('PATCH', `/api/v1/User/${owner.userId}`, { as: owner, json: { is_superadmin: true } }), 403, 'forbidden')
    expectProblem(await p.call('PATCH', `/api/v1/User/${member.userId}`, { as: admin, json: { is_superadmin: true } }), 403, 'forbidden')
    const made = await p.call('POST', '/api/v1/User', { as: admin, json: { username: `sneaky${Date.now()}`, email: `s${Date.now()}@example.com`, is_superadmin: true } })
    expectProblem(made, 403, 'forbidden')
  })
})

describe('nobody changes, removes or deletes someone above them', () => {
  test('an admin cannot demote, remove, edit or delete the owner', async () => {
    expectProblem(await p.call('PATCH', `/api/v1/CompanyUser/${await membership(owner)}`, { as: admin, json: { role: 'member' } }), 403, 'forbidden')
    expectProblem(await p.call('DELETE', `/api/v1/CompanyUser/${await membership(owner)}`, { as: admin }), 403, 'forbidden')
    expectProblem(await p.call('PATCH', `/api/v1/User/${owner.userId}`, { as: admin, json: { display_name: 'Mallory was here' } }), 403, 'forbidden')
    expectProblem(await p.call('DELETE', `/api/v1/User/${owner.userId}`, { as: admin }), 403, 'forbidden')
    expect(await roleOf(owner)).toBe('owner')
  })

  test('the owner demotes an admin; an admin changes a peer or a member', async () => {
    const peer = await p.createUser({ companyId: company, role: 'admin' })
    expect((await p.call('PATCH', `/api/v1/CompanyUser/${await membership(peer)}`, { as: otherAdmin, json: { role: 'member' } })).status).toBe(200)
    expect((await p.call('PATCH', `/api/v1/User/${member.userId}`, { as: admin, json: { display_name: 'Renamed' } })).status).toBe(200)
    const demoted = await p.createUser({ companyId: company, role: 'admin' })
    expect((await p.call('PATCH', `/api/v1/CompanyUser/${await membership(demoted)}`, { as: owner, json: { role: 'member' } })).status).toBe(200)
  })

  test('a member cannot change an admin; a membership stays with its user', async () => {
    expectProblem(await p.call('PATCH', `/api/v1/CompanyUser/${await membership(admin)}`, { as: member, json: { role: 'member' } }), 403, 'forbidden')
    const moved = expectProblem(await p.call('PATCH', `/api/v1/CompanyUser/${await membership(member)}`, { as: owner, json: { user_id: admin.userId } }), 422, 'validation_error')
    expect(moved.errors).toContainEqual({ path: 'user_id', message: 'cannot change' })
  })

  test('a user of two companies is changed only by a superadmin, though their membership here is the admin’s to change', async () => {
    const shared = await p.createUser({ companyId: company, role: 'member' })
    await p.store.db.insertInto('company_users').values({ id: Bun.randomUUIDv7(), company_id: await p.createCompany(), user_id: shared.userId, role: 'member' }).execute()
    expectProblem(await p.call('PATCH', `/api/v1/User/${shared.userId}`, { as: admin, json: { display_name: 'x' } }), 403, 'forbidden')
    expect((await p.call('PATCH', `/api/v1/CompanyUser/${await membership(shared)}`, { as: admin, json: { role: 'admin' } })).status).toBe(200)
    expect((await p.call('PATCH', `/api/v1/User/${shared.userId}`, { json: { display_name: 'x' } })).status).toBe(200)
  })
})

describe('usernames are no oracle of who has an account', () => {
  test('a member cannot rename themselves, so cannot try which names another company’s people hold; an admin renames them', async () => {
    const elsewhere = await p.createUser({ companyId: await p.createCompany() })
    const taken = (await p.store.db.selectFrom('users').select('username').where('id', '=', elsewhere.userId).executeTakeFirstOrThrow()).username
    const me = await p.createUser({ companyId: company, role: 'member' })
    const nameOf = async () => (await p.store.db.selectFrom('users').select('username').where('id', '=', me.userId).executeTakeFirstOrThrow()).username
    const before = await nameOf()
    // A taken name and a free one are refused alike, before the store is asked.
    const onTaken = expectProblem(await p.call('PATCH', `/api/v1/User/${me.userId}`, { as: me, json: { username: taken } }), 403, 'forbidden')
    const onFree = expectProblem(await p.call('PATCH', `/api/v1/User/${me.userId}`, { as: me, json: { username: `free-${Bun.randomUUIDv7().slice(-8)}` } }), 403, 'forbidden')
    expect(onTaken.detail).toBe(onFree.detail)
    expect(await nameOf()).toBe(before)
    // Saving the profile with the same name (any case) is no rename.
    expect((await p.call('PATCH', `/api/v1/User/${me.userId}`, { as: me, json: { username: before.toUpperCase(), display_name: 'Me' } })).status).toBe(200)
    expect((await p.call('PATCH', `/api/v1/User/${me.userId}`, { as: admin, json: { username: `renamed-${Bun.randomUUIDv7().slice(-8)}` } })).status).toBe(200)
    expect(await nameOf()).not.toBe(before)
  })
})

describe('a company keeps at least one owner; the platform at least one superadmin', () => {
  test('the last owner cannot step down, leave or be deleted, even by a superadmin', async () => {
    const solo = await p.createUser({ companyId: await p.createCompany(), role: 'owner' })
    expectProblem(await p.call('PATCH', `/api/v1/CompanyUser/${await membership(solo)}`, { as: solo, json: { role: 'admin' } }), 409, 'conflict')
    expectProblem(await p.call('DELETE', `/api/v1/CompanyUser/${await membership(solo)}`, { as: solo }), 409, 'conflict')
    expectProblem(await p.call('DELETE', `/api/v1/User/${solo.userId}`, { headers: { 'x-switchboard-company': solo.companyId! } }), 409, 'conflict')
    expect(await roleOf(solo)).toBe('owner')
  })

  test('of two owners demoting each other at once, exactly one succeeds', async () => {
    const pair = await p.createCompany()
    const first = await p.createUser({ companyId: pair, role: 'owner' })
    const second = await p.createUser({ companyId: pair, role: 'owner' })
    const [a, b] = await Promise.all([
      p.call('PATCH', `/api/v1/CompanyUser/${await membership(second)}`, { as: first, json: { role: 'admin' } }),
      p.call('PATCH', `/api/v1/CompanyUser/${await membership(first)}`, { as: second, json: { role: 'admin' } }),
    ])
    // The loser is refused as the last owner (409), or, once demoted, as an admin acting on an owner (403).
    const statuses = [a.status, b.status].sort()
    expect(statuses[0]).toBe(200)
    expect([403, 409]).toContain(statuses[1]!)
    const owners = await p.store.db.selectFrom('company_users').select('id').where('company_id', '=', pair).where('role', '=', 'owner').execute()
    expect(owners).toHaveLength(1)
  })

  test('the last superadmin cannot demote or delete itself; with another one it can', async () => {
    expectProblem(await p.call('PATCH', `/api/v1/User/${p.root.userId}`, { json: { is_superadmin: false } }), 409, 'conflict')
    expectProblem(await p.call('DELETE', `/api/v1/User/${p.root.userId}`), 409, 'conflict')
    const deputy = await p.createUser({ superadmin: true })
    expect((await p.call('PATCH', `/api/v1/User/${deputy.userId}`, { json: { is_superadmin: false } })).status).toBe(200)
    expectProblem(await p.call('PATCH', `/api/v1/User/${p.root.userId}`, { json: { is_superadmin: false } }), 409, 'conflict')
    expect((await p.call('PATCH', `/api/v1/User/${deputy.userId}`, { json: { is_superadmin: true } })).status).toBe(200)
    expect((await p.call('PATCH', `/api/v1/User/${deputy.userId}`, { as: deputy, json: { is_superadmin: false } })).status).toBe(200)
  })
})

describe('an agent’s service account is an admin’s choice', () => {
  test('a member allowed to edit agents still cannot make one act as someone else', async () => {
    const agent = (await p.call('POST', '/api/v1/AgentConfigRecord', { as: owner, json: { name: `agent-${Date.now()}` } })).body
    expect((await p.call('POST', '/api/v1/ModelAcl', { json: { model: 'AgentConfigRecord', verb: 'update', min_role: 'member' } })).status).toBe(201)
    const refused = await p.call('PATCH', `/api/v1/AgentConfigRecord/${agent.id}`, { as: member, json: { context_options: { service_account: owner.userId } } })
    expectProblem(refused, 403, 'forbidden')
    expect((await p.call('PATCH', `/api/v1/AgentConfigRecord/${agent.id}`, { as: member, json: { description: 'fine' } })).status).toBe(200)
    expect((await p.call('PATCH', `/api/v1/AgentConfigRecord/${agent.id}`, { as: admin, json: { context_options: { service_account: admin.userId } } })).status).toBe(200)
  })
})
