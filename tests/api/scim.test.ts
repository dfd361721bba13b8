import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { createSession } from '../../src/auth/sessions.ts'
import { startTestPlatform, type Principal, type TestPlatform } from '../helpers/platform.ts'
import { expectProblem } from '../helpers/problem.ts'

// SCIM 2.0 provisioning as an identity system drives it (RFC 7644): a client sequence of create, patch, deactivate
// and group changes, the filters and paging it uses, and what a token of another company can and cannot do.

let p: TestPlatform
let token: string
let otherToken: string
let company: string
const SCIM = 'application/scim+json'

async function scimCall(method: string, path: string, body?: unknown, bearer = token) {
  const response = await p.api.request(`/scim/v2${path}`, {
    method,
    headers: { authorization: `Bearer ${bearer}`, accept: SCIM, ...(body === undefined ? {} : { 'content-type': SCIM }) },
    body: body === undefined ? undefined : JSON.stringify(body),
  })
  const text = await response.text()
  return { status: response.status, type: response.headers.get('content-type') ?? '', body: (text ? JSON.parse(text) : undefined) as Record<string, any> }
}

async function makeToken(as?: Principal): Promise<string> {
  const made = await p.call('POST', '/api/v1/ScimToken', { json: { name: 'Okta provisioning' }, as })
  expect(made.status).toBe(201)
  return (made.body as { token: string }).token
}

const newUser = (userName: string, extra: Record<string, unknown> = {}) => ({
  schemas: ['urn:ietf:params:scim:schemas:core:2.0:User'],
  userName,
  name: { givenName: 'Ada', familyName: 'Lovelace' },
  emails: [{ value: userName, type: 'work', primary: true }],
  active: true,
  externalId: `ext-${userName}`,
  ...extra,
})

const roleOf = async (userId: string) => (await p.store.db.selectFrom('company_users').select('role').where('user_id', '=', userId).where('company_id', '=', company).executeTakeFirst())?.role

beforeAll(async () => {
  p = await startTestPlatform()
  company = p.root.companyId!
  token = await makeToken()
  const owner = await p.createUser({ companyId: await p.createCompany(), role: 'owner' })
  otherToken = await makeToken(owner)
  // The company's role mapping: the group names its identity provider sends.
  expect((await p.call('POST', '/api/v1/IdentityProvider', { json: { slug: 'scim-idp', name: 'Okta', issuer: 'https://idp.example.com', client_id: 'x', role_mapping: [{ group: 'Engineering Leads', role: 'admin' }] } })).status).toBe(201)
})
afterAll(() => p.close())

describe('a SCIM client’s sequence', () => {
  let ada: string
  let group: string

  test('create: a person of the company, as a SCIM User, its media type SCIM’s', async () => {
    const made = await scimCall('POST', '/Users', newUser('ada@corp.example'))
    expect(made.status).toBe(201)
    expect(made.type).toStartWith(SCIM)
    expect(made.body).toMatchObject({
      schemas: ['urn:ietf:params:scim:schemas:core:2.0:User'],
      userName: 'ada@corp.example',
      displayName: 'Ada Lovelace',
      externalId: 'ext-ada@corp.example',
      active: true,
      emails: [{ value: 'ada@corp.example', primary: true }],
      groups: [],
      meta: { resourceType: 'User', location: `${p.services.config.baseUrl}/scim/v2/Users/${made.body.id}` },
    })
    ada = made.body.id
    expect(await roleOf(ada)).toBe('member')
    expect((await scimCall('GET', `/Users/${ada}`)).body.userName).toBe('ada@corp.example')
  })

  test('the filter a client checks existence with finds them; paging counts from 1', async () => {
    const found = await scimCall('GET', `/Users?filter=${encodeURIComponent('userName eq "ADA@corp.example"')}`)
    expect(found.body).toMatchObject({ schemas: ['urn:ietf:params:scim:api:messages:2.0:ListResponse'], totalResults: 1, startIndex: 1, itemsPerPage: 1 })
    expect(found.body.Resources[0].id).toBe(ada)
    expect((await scimCall('GET', `/Users?filter=${encodeURIComponent('externalId eq "ext-ada@corp.example" and active eq true')}`)).body.totalResults).toBe(1)
    expect((await scimCall('GET', `/Users?filter=${encodeURIComponent('userName eq "nobody@corp.example"')}`)).body).toMatchObject({ totalResults: 0, Resources: [] })
    await scimCall('POST', '/Users', newUser('bob@corp.example'))
    const all = (await scimCall('GET', '/Users')).body.totalResults as number
    const second = await scimCall('GET', '/Users?startIndex=2&count=1')
    expect(second.body).toMatchObject({ totalResults: all, startIndex: 2, itemsPerPage: 1 })
    const refused = await scimCall('GET', `/Users?filter=${encodeURIComponent('userName eq "a" or userName eq "b"')}`)
    expect(refused.status).toBe(400)
    expect(refused.body).toMatchObject({ schemas: ['urn:ietf:params:scim:api:messages:2.0:Error'], status: '400', scimType: 'invalidFilter' })
  })

  test('patch: Entra’s replace operations change exactly what they name', async () => {
    const patched = await scimCall('PATCH', `/Users/${ada}`, {
      schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'],
      Operations: [
        { op: 'Replace', path: 'displayName', value: 'Ada King' },
        { op: 'replace', path: 'emails[type eq "work"].value', value: 'ada.king@corp.example' },
      ],
    })
    expect(patched.status).toBe(200)
    expect(patched.body).toMatchObject({ displayName: 'Ada King', userName: 'ada@corp.example', emails: [{ value: 'ada.king@corp.example' }], active: true })
  })

  test('group change: a group whose name the mapping knows gives its role; leaving it takes the role back', async () => {
    const made = await scimCall('POST', '/Groups', { schemas: ['urn:ietf:params:scim:schemas:core:2.0:Group'], displayName: 'Engineering Leads', members: [{ value: ada }] })
    expect(made.status).toBe(201)
    group = made.body.id
    expect(made.body.members).toEqual([expect.objectContaining({ value: ada })])
    expect(await roleOf(ada)).toBe('admin')
    expect((await scimCall('GET', `/Users/${ada}`)).body.groups).toEqual([expect.objectContaining({ value: group, display: 'Engineering Leads' })])
    const removed = await scimCall('PATCH', `/Groups/${group}`, { schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'], Operations: [{ op: 'remove', path: `members[value eq "${ada}"]` }] })
    expect(removed.status).toBe(200)
    expect(removed.body.members).toEqual([])
    expect(await roleOf(ada)).toBe('member')
    const added = await scimCall('PATCH', `/Groups/${group}`, { schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'], Operations: [{ op: 'add', path: 'members', value: [{ value: ada }] }] })
    expect(added.body.members).toHaveLength(1)
    expect(await roleOf(ada)).toBe('admin')
    // Okta reads groups without their members.
    const listed = await scimCall('GET', `/Groups?filter=${encodeURIComponent('displayName eq "Engineering Leads"')}&excludedAttributes=members`)
    expect(listed.body.Resources).toEqual([expect.objectContaining({ id: group, members: [] })])
  })

  test('deactivate: the person’s sessions and tokens stop working at once, and they sign in nowhere', async () => {
    const password = 'a-long-password-for-scim'
    await p.store.db.updateTable('users').set({ password_hash: await Bun.password.hash(password) }).where('id', '=', ada).execute()
    const login = async () =>
      p.api.request('/auth/login', { method: 'POST', headers: { 'content-type': 'application/json', accept: 'application/json', origin: p.services.config.adminBaseUrl }, body: JSON.stringify({ username: 'ada@corp.example', password }) })
    const signedIn = await login()
    expect(signedIn.status).toBe(200)
    const session = signedIn.headers.getSetCookie()[0]!.split(';')[0]!
    const made = await p.api.request('/api/v1/ApiToken', { method: 'POST', headers: { cookie: session, origin: p.services.config.adminBaseUrl, 'content-type': 'application/json' }, body: JSON.stringify({ name: 'mine' }) })
    const apiToken = ((await made.json()) as { token: string }).token
    expect((await p.api.request('/api/me', { headers: { authorization: `Bearer ${apiToken}` } })).status).toBe(200)

    const off = await scimCall('PATCH', `/Users/${ada}`, { schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'], Operations: [{ op: 'replace', value: { active: false } }] })
    expect(off.status).toBe(200)
    expect(off.body.active).toBe(false)
    expect((await p.api.request('/api/me', { headers: { cookie: session } })).status).toBe(401)
    expect((await p.api.request('/api/me', { headers: { authorization: `Bearer ${apiToken}` } })).status).toBe(401)
    // A session made in the instant between a sign-in's check and the deactivation is refused all the same.
    const late = await createSession(p.store.db, ada, p.services.sessionPolicy, Date.now())
    const lateReply = await p.api.request('/api/me', { headers: { cookie: `switchboard_session_token=${late.token}` } })
    expect(lateReply.status).toBe(401)
    expect(((await lateReply.json()) as { detail: string }).detail).toContain('deactivated')
    const again = await login()
    expect(again.status).toBe(403)
    expect(((await again.json()) as { detail: string }).detail).toContain('deactivated')
    // Active again: the password works again; what ended stays ended.
    expect((await scimCall('PATCH', `/Users/${ada}`, { schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'], Operations: [{ op: 'replace', path: 'active', value: 'True' }] })).body.active).toBe(true)
    expect((await login()).status).toBe(200)
    expect((await p.api.request('/api/me', { headers: { authorization: `Bearer ${apiToken}` } })).status).toBe(401)
  })

  test('delete: the person leaves the company and its groups, and with no other company is deactivated', async () => {
    expect((await scimCall('DELETE', `/Users/${ada}`)).status).toBe(204)
    expect((await scimCall('GET', `/Users/${ada}`)).status).toBe(404)
    expect(await roleOf(ada)).toBeUndefined()
    expect((await scimCall('GET', `/Groups/${group}`)).body.members).toEqual([])
    const user = await p.store.db.selectFrom('users').select('deactivated_at').where('id', '=', ada).executeTakeFirstOrThrow()
    expect(user.deactivated_at).not.toBeNull()
  })
})

describe('what a SCIM client may not do', () => {
  test('without a token, or with a revoked or personal one: 401', async () => {
    const anonymous = await p.api.request('/scim/v2/Users', { headers: { accept: SCIM } })
    expect(anonymous.status).toBe(401)
    expect(((await anonymous.json()) as { schemas: string[] }).schemas).toEqual(['urn:ietf:params:scim:api:messages:2.0:Error'])
    expect((await scimCall('GET', '/Users', undefined, 'scim_not-a-real-token')).status).toBe(401)
    expect((await scimCall('GET', '/Users', undefined, p.root.token)).status).toBe(401)
    const revoked = await makeToken()
    const id = (await p.store.db.selectFrom('scim_tokens').select('id').where('prefix', '=', revoked.slice(0, 12)).executeTakeFirstOrThrow()).id
    expect((await p.call('DELETE', `/api/v1/ScimToken/${id}`)).status).toBe(204)
    expect((await scimCall('GET', '/Users', undefined, revoked)).status).toBe(401)
  })

  test('another company’s token sees none of this company’s people or groups, and changes none: 404', async () => {
    const theirs = (await scimCall('POST', '/Users', newUser('carol@corp.example'))).body.id as string
    expect((await scimCall('GET', '/Users', undefined, otherToken)).body.Resources.map((u: { id: string }) => u.id)).not.toContain(theirs)
    for (const [method, body] of [
      ['GET', undefined],
      ['PATCH', { schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'], Operations: [{ op: 'replace', path: 'active', value: false }] }],
      ['PUT', newUser('carol@corp.example')],
      ['DELETE', undefined],
    ] as const) {
      const reply = await scimCall(method, `/Users/${theirs}`, body, otherToken)
      expect(reply.status).toBe(404)
    }
    expect((await scimCall('GET', `/Users/${theirs}`)).body.active).toBe(true)
    // Nor may it put this company's person in its groups.
    const refused = await scimCall('POST', '/Groups', { displayName: 'Grab', members: [{ value: theirs }] }, otherToken)
    expect(refused.status).toBe(422)
  })

  test('a person who belongs to another company too is not deactivated everywhere by one company: 409', async () => {
    const shared = await p.createUser()
    await p.store.db.insertInto('company_users').values({ id: Bun.randomUUIDv7(), company_id: await p.createCompany(), user_id: shared.userId, role: 'member' }).execute()
    const reply = await scimCall('PATCH', `/Users/${shared.userId}`, { schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'], Operations: [{ op: 'replace', path: 'active', value: false }] })
    expect(reply.status).toBe(409)
    expect((await p.api.request('/api/me', { headers: { authorization: `Bearer ${shared.token}` } })).status).toBe(200)
  })

  test('a taken userName is 409 uniqueness; a missing one, a bad email or an unknown attribute 400/422 saying so', async () => {
    const taken = await scimCall('POST', '/Users', newUser('bob@corp.example'))
    expect(taken.status).toBe(409)
    expect(taken.body).toMatchObject({ status: '409', scimType: 'uniqueness' })
    expect((await scimCall('POST', '/Users', { emails: [{ value: 'x@corp.example' }] })).status).toBe(422)
    expect((await scimCall('POST', '/Users', newUser('dave', { emails: [{ value: 'not an address' }] }))).status).toBe(422)
    const unknown = await scimCall('PATCH', `/Users/${p.root.userId}`, { schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'], Operations: [{ op: 'replace', path: 'password', value: 'x' }] })
    expect(unknown.status).toBe(422)
    expect(unknown.body.detail).toContain('password cannot be changed here')
  })

  test('a group that maps to owner gives nothing beyond the mapping: no mapping names owner, nobody becomes one', async () => {
    const eve = (await scimCall('POST', '/Users', newUser('eve@corp.example'))).body.id as string
    await scimCall('POST', '/Groups', { displayName: 'Owners', members: [{ value: eve }] })
    expect(await roleOf(eve)).toBe('member')
  })

  test('a token acts with its maker’s role: an admin’s changes no owner or superadmin and makes nobody owner', async () => {
    const admin = await p.createUser({ role: 'admin' })
    const adminToken = await makeToken(admin)
    const owner = await p.createUser({ role: 'owner' })
    const off = { schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'], Operations: [{ op: 'replace', path: 'active', value: false }] }
    for (const target of [owner.userId, p.root.userId]) {
      const refused = await scimCall('PATCH', `/Users/${target}`, off, adminToken)
      expect(refused.status).toBe(403)
      expect(refused.body.detail).toMatch(/above the role of the token’s maker|a superadmin/)
      expect((await scimCall('PUT', `/Users/${target}`, newUser(`taken-over-${target}@evil.example`), adminToken)).status).toBe(403)
    }
    expect((await scimCall('DELETE', `/Users/${owner.userId}`, undefined, adminToken)).status).toBe(403)
    expect((await p.api.request('/api/me', { headers: { authorization: `Bearer ${owner.token}` } })).status).toBe(200)
    // An owner's mapping makes a group's people owners; through an admin's token it makes them admins at most.
    expect((await p.call('POST', '/api/v1/IdentityProvider', { json: { slug: 'owners-idp', name: 'Owners', issuer: 'https://idp.example.com', client_id: 'y', role_mapping: [{ group: 'Founders', role: 'owner' }] } })).status).toBe(201)
    const frank = (await scimCall('POST', '/Users', newUser('frank@corp.example'), adminToken)).body.id as string
    await scimCall('POST', '/Groups', { displayName: 'Founders', members: [{ value: frank }] }, adminToken)
    expect(await roleOf(frank)).toBe('admin')
  })

  test('without the SCIM media type, refusals are the API’s problems', async () => {
    expectProblem(await p.call('GET', '/scim/v2/Users/01936f3e-6d2a-7c41-9b1e-2f3a4b5c6d7e', { as: null, headers: { authorization: `Bearer ${token}` } }), 404, 'not_found')
  })

  test('an admin makes SCIM tokens; a member may not', async () => {
    const member = await p.createUser()
    expectProblem(await p.call('POST', '/api/v1/ScimToken', { json: { name: 'mine' }, as: member }), 403, 'forbidden')
  })
})
