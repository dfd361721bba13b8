import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { startTestPlatform, type Principal, type TestPlatform } from '../helpers/platform.ts'
import { expectProblem } from '../helpers/problem.ts'

// /api/artifacts as a script uses it: make one, act on it, share it; and what everyone else gets.

let p: TestPlatform
let alice: Principal
let colleague: Principal
let outsider: Principal

const MISSING = '01936f3e-6d2a-7c41-9b1e-2f3a4b5c6d7e'
const body = { title: 'Figures', kind: 'markdown', content: '# Q3\n\nUp 12 %.' }

beforeAll(async () => {
  p = await startTestPlatform()
  const company = await p.createCompany()
  alice = await p.createUser({ companyId: company, role: 'member' })
  colleague = await p.createUser({ companyId: company, role: 'owner' })
  outsider = await p.createUser({ companyId: await p.createCompany(), role: 'owner' })
})
afterAll(() => p.close())

async function made(as: Principal = alice, json: Record<string, unknown> = body) {
  const reply = await p.call('POST', '/api/artifacts', { json, as })
  expect(reply.status).toBe(201)
  return reply
}

describe('POST /api/artifacts', () => {
  test('makes an artifact for the caller, readable through the generic API exactly as answered', async () => {
    const reply = await made()
    expect(reply.headers.get('location')).toBe(`/api/v1/Artifact/${reply.body.id}`)
    expect(reply.headers.get('etag')).toBe('"1"')
    expect(reply.body).toMatchObject({ title: 'Figures', media_type: 'text/markdown', size_bytes: 14, user_id: alice.userId, company_id: alice.companyId, pinned: false, revoked_at: null, ttl_days: 30, conversation_id: null, agent_id: null })
    expect(Date.parse(reply.body.expires_at!) - Date.now()).toBeGreaterThan(29.9 * 24 * 3600 * 1000)
    expect(Object.keys(reply.body)).not.toContain('content')
    const read = await p.call('GET', `/api/v1/Artifact/${reply.body.id}`, { as: alice })
    expect(read.body).toEqual(reply.body)
  })

  test('401 without credentials, 422 for a bad body, 413 over the cap, 415 for a picture of another format', async () => {
    expectProblem(await p.call('POST', '/api/artifacts', { json: body, as: null }), 401, 'unauthorized')
    const missing = expectProblem(await p.call('POST', '/api/artifacts', { json: { title: 'x', kind: 'pdf', content: 'x' }, as: alice }), 422, 'validation_error')
    expect(missing.errors?.map((e) => e.path)).toEqual(['kind'])
    expectProblem(await p.call('POST', '/api/artifacts', { json: { ...body, extra: 1 }, as: alice }), 422, 'validation_error')
    expectProblem(await p.call('POST', '/api/artifacts', { json: { ...body, kind: 'json', content: '{' }, as: alice }), 422, 'validation_error')
    expectProblem(await p.call('POST', '/api/artifacts', { json: { ...body, ttl_days: 400 }, as: alice }), 422, 'validation_error')
    expectProblem(await p.call('POST', '/api/artifacts', { json: { ...body, content: 'x'.repeat(2 * 1024 * 1024) }, as: alice }), 413, 'payload_too_large')
    const svg = Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"/>').toString('base64')
    const refused = expectProblem(await p.call('POST', '/api/artifacts', { json: { ...body, kind: 'image', content: svg }, as: alice }), 415, 'unsupported_media_type')
    expect(refused.detail).toContain('html artifact')
  })

  test('403 for someone of no company; the generic create answers 405 saying how', async () => {
    const loner = await p.createUser({ companyId: null })
    expectProblem(await p.call('POST', '/api/artifacts', { json: body, as: loner }), 403, 'forbidden')
    const refused = expectProblem(await p.call('POST', '/api/v1/Artifact', { json: { title: 'x' }, as: alice }), 405, 'method_not_allowed')
    expect(refused.detail).toContain('create_artifact')
  })
})

describe('pin, unpin, revoke, unrevoke, share', () => {
  test('each answers the artifact as it is now, with its new ETag', async () => {
    const { id } = (await made()).body
    const pinned = await p.call('POST', `/api/artifacts/${id}/pin`, { as: alice })
    expect(pinned.status).toBe(200)
    expect(pinned.headers.get('etag')).toBe('"2"')
    expect(pinned.body).toMatchObject({ id, pinned: true, expires_at: null })
    const unpinned = await p.call('POST', `/api/artifacts/${id}/unpin`, { as: alice })
    expect(unpinned.body.pinned).toBe(false)
    expect(Date.parse(unpinned.body.expires_at!) - Date.now()).toBeGreaterThan(29.9 * 24 * 3600 * 1000)
    const revoked = await p.call('POST', `/api/artifacts/${id}/revoke`, { as: alice })
    expect(revoked.body.revoked_at).not.toBeNull()
    expectProblem(await p.call('POST', `/api/artifacts/${id}/share`, { as: alice }), 409, 'conflict')
    const unrevoked = await p.call('POST', `/api/artifacts/${id}/unrevoke`, { as: alice })
    expect(unrevoked.body.revoked_at).toBeNull()
    expect(unrevoked.headers.get('etag')).toBe('"5"')
    expect((await p.call('GET', `/api/v1/Artifact/${id}`, { as: alice })).body).toEqual(unrevoked.body)
  })

  test('share answers a link on the console and its expiry; the link opens the artifact', async () => {
    const { id } = (await made()).body
    const link = await p.call('POST', `/api/artifacts/${id}/share`, { as: alice, json: { expires_in_days: 2 } })
    expect(link.status).toBe(200)
    expect(link.body.url).toStartWith(`${p.services.config.adminBaseUrl}/share/artifacts/${id}?token=`)
    expect(Math.abs(Date.parse(link.body.expires_at) - (Date.now() + 2 * 24 * 3600 * 1000))).toBeLessThan(5000)
    const plain = await p.call('POST', `/api/artifacts/${id}/share`, { as: alice })
    expect(plain.status).toBe(200)
    const opened = await p.admin.request(link.body.url.slice(p.services.config.adminBaseUrl.length))
    expect(opened.status).toBe(200)
    expect(await opened.text()).toContain('<h1>Figures</h1>')
    expectProblem(await p.call('POST', `/api/artifacts/${id}/share`, { as: alice, json: { expires_in_days: 0 } }), 422, 'validation_error')
  })

  test('401 without credentials, 404 for a missing or malformed id', async () => {
    const { id } = (await made()).body
    for (const action of ['pin', 'unpin', 'revoke', 'unrevoke', 'share']) {
      expectProblem(await p.call('POST', `/api/artifacts/${id}/${action}`, { as: null }), 401, 'unauthorized')
      expectProblem(await p.call('POST', `/api/artifacts/${MISSING}/${action}`, { as: alice }), 404, 'not_found')
      expectProblem(await p.call('POST', `/api/artifacts/not-an-id/${action}`, { as: alice }), 404, 'not_found')
    }
  })

  test('another user’s artifact, even an owner’s colleague’s, and another company’s answer 404 and stay as they were', async () => {
    const mine = (await made()).body
    for (const other of [colleague, outsider, p.root]) {
      for (const action of ['pin', 'unpin', 'revoke', 'unrevoke', 'share']) {
        expectProblem(await p.call('POST', `/api/artifacts/${mine.id}/${action}`, { as: other }), 404, 'not_found')
      }
      expectProblem(await p.call('GET', `/api/v1/Artifact/${mine.id}`, { as: other }), 404, 'not_found')
      expectProblem(await p.call('DELETE', `/api/v1/Artifact/${mine.id}`, { as: other }), 404, 'not_found')
      expect((await p.call('GET', '/api/v1/Artifact', { as: other })).body.data.map((a: { id: string }) => a.id)).not.toContain(mine.id)
    }
    expect((await p.call('GET', `/api/v1/Artifact/${mine.id}`, { as: alice })).body).toEqual(mine)
  })

  test('403 when a ModelAcl raises the verb above the caller; DELETE removes it and its links', async () => {
    const { id } = (await made()).body
    const link = (await p.call('POST', `/api/artifacts/${id}/share`, { as: alice })).body.url as string
    const acl = await p.call('POST', '/api/v1/ModelAcl', { json: { model: 'Artifact', verb: 'update', min_role: 'admin' } })
    expect(acl.status).toBe(201)
    try {
      expectProblem(await p.call('POST', `/api/artifacts/${id}/pin`, { as: alice }), 403, 'forbidden')
    } finally {
      await p.call('DELETE', `/api/v1/ModelAcl/${acl.body.id}`)
    }
    expect((await p.call('POST', `/api/artifacts/${id}/pin`, { as: alice })).status).toBe(200)
    expect((await p.call('DELETE', `/api/v1/Artifact/${id}`, { as: alice })).status).toBe(204)
    expect((await p.admin.request(link.slice(p.services.config.adminBaseUrl.length))).status).toBe(404)
  })
})
