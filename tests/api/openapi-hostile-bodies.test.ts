import { afterAll, describe, expect, test } from 'bun:test'
import { bodyOf, fillPath, operationsOf, resolve, type OpenApiDocument, type Operation } from '../helpers/openapi.ts'
import { hostileBodies, judgeHostileReply } from '../helpers/hostile.ts'
import { startTestPlatform } from '../helpers/platform.ts'

/*
 * Every operation of /api/openapi.json that takes a body is sent hostile bodies made from its own schema: the body
 * as a whole broken (not JSON, the wrong shape, nested past any reason), then each field in turn given a hostile
 * value of its type (a huge or NUL-bearing or lone-surrogate string, an integer past 64 bits, a deep object, a
 * prototype-polluting key, a wrong type), then no body at all. Whatever the route makes of it, it must answer a
 * success or a 4xx problem, never a 5xx. The calls are the superadmin's, who gets furthest into every handler; the
 * platform is this file's own, since a hostile value that is accepted changes what it holds.
 */

const p = await startTestPlatform({ INTERNAL_API_SECRET: `hostile-${crypto.randomUUID()}` })
afterAll(() => p.close())
const document = (await p.call('GET', '/api/openapi.json', { as: null })).body as OpenApiDocument
// Signing out would end the credential the rest of the sweep calls with; it takes no fields to attack anyway.
const withBodies = operationsOf(document).filter((op) => bodyOf(document, op) && op.path !== '/auth/logout')

function credentialsFor(op: Operation): Record<string, string> {
  if (op.schemes.includes('internalSecret') && !op.schemes.includes('apiToken')) return {}
  return { authorization: `Bearer ${p.root.token}` }
}

test('the sweep has operations with bodies to attack', () => {
  expect(withBodies.length).toBeGreaterThan(40)
})

describe('hostile bodies', () => {
  test.each(withBodies.map((op) => [op.label, op] as const))('%s', async (_, op) => {
    const valid = bodyOf(document, op)!
    const schema = resolve(document, op.spec.requestBody).content[valid.contentType].schema ?? {}
    const wrong: string[] = []
    let sent = 0
    const multipart = valid.contentType.startsWith('multipart/')
    for (const hostile of hostileBodies(document, schema, valid.value, multipart)) {
      if (multipart && hostile.raw === undefined) continue
      const headers = { ...credentialsFor(op), 'content-type': hostile.contentType ?? valid.contentType }
      const reply = await p.call(op.method, fillPath(document, op), { as: null, headers, body: hostile.raw ?? encodeBody(valid.contentType, hostile.value) })
      sent++
      wrong.push(...judgeHostileReply(reply, { oauth: op.path.startsWith('/oauth/') }).map((w) => `${hostile.label}: ${w}`))
    }
    // No body at all: without a Content-Type, and empty with the right one.
    for (const [label, headers] of [['no body, no Content-Type', {}], ['an empty body', { 'content-type': valid.contentType }]] as const) {
      const reply = await p.call(op.method, fillPath(document, op), { as: null, headers: { ...credentialsFor(op), ...headers } })
      wrong.push(...judgeHostileReply(reply, { oauth: op.path.startsWith('/oauth/') }).map((w) => `${label}: ${w}`))
    }
    expect(sent).toBeGreaterThan(0)
    expect(wrong).toEqual([])
  })
})

function encodeBody(contentType: string, body: unknown): string {
  // A form cannot carry a top-level array or null: those go as their JSON text, which a form parser reads as garbage.
  if (/json$/.test(contentType) || typeof body !== 'object' || body === null || Array.isArray(body)) return JSON.stringify(body)
  return new URLSearchParams(Object.entries(body as Record<string, unknown>).map(([k, v]) => [k, typeof v === 'string' ? v : JSON.stringify(v)])).toString()
}
