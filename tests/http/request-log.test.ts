import { afterAll, beforeAll, expect, test } from 'bun:test'
import { systemClock } from '../../src/clock.ts'
import { createLogger } from '../../src/logger.ts'
import { consoleCookie } from '../helpers/console.ts'
import { ADMIN_PASSWORD, startTestPlatform, type TestPlatform } from '../helpers/platform.ts'

// What the platform logs while people sign in, make tokens and keep secrets: one line per request, and never a
// password, a token or a secret's value, whatever path they travel.
const lines: string[] = []
let p: TestPlatform

beforeAll(async () => {
  p = await startTestPlatform({}, systemClock, undefined, createLogger('debug', (line) => lines.push(line)))
})
afterAll(() => p.close())

test('a vault value, a password and a token never reach the log', async () => {
  const login = await p.call('POST', '/auth/login', { as: null, json: { username: 'admin', password: ADMIN_PASSWORD }, headers: { accept: 'application/json' } })
  expect(login.status).toBe(200)
  const wrong = await p.call('POST', '/auth/login', { as: null, json: { username: 'admin', password: 'a-wrong-password-9' }, headers: { accept: 'application/json' } })
  expect(wrong.status).toBe(401)
  const made = await p.call('POST', '/api/v1/ApiToken', { json: { name: 'logged?' } })
  expect(made.status).toBe(201)
  const token = (made.body as { token: string }).token
  expect((await p.call('GET', '/api/me', { as: null, headers: { authorization: `Bearer ${token}` } })).status).toBe(200)
  expect((await p.call('PUT', '/api/vault/secrets', { json: { scope: 'global', name: 'logged/secret', value: 'vault-value-that-must-not-leak' } })).status).toBe(200)
  const log = lines.join('')
  for (const secret of [ADMIN_PASSWORD, 'a-wrong-password-9', token, p.root.token, 'vault-value-that-must-not-leak']) expect(log).not.toContain(secret)
})

test('each request is one line: its id (as the header says), method, route, path without query, status, time, who', async () => {
  const mark = lines.length
  const reply = await p.call('GET', `/api/v1/AgentConfigRecord?name=eq.query-secret`)
  expect(reply.status).toBe(200)
  const logged = lines.slice(mark).map((line) => JSON.parse(line)).filter((entry) => entry.message === 'request')
  expect(logged).toEqual([
    expect.objectContaining({
      level: 'info',
      request_id: reply.headers.get('x-request-id'),
      method: 'GET',
      route: '/api/v1/AgentConfigRecord',
      path: '/api/v1/AgentConfigRecord',
      status: 200,
      duration_ms: expect.any(Number),
      user_id: p.root.userId,
      company_id: p.root.companyId,
    }),
  ])
  expect(lines.slice(mark).join('')).not.toContain('query-secret')
})

test('the probes a balancer asks every few seconds are not logged', async () => {
  const mark = lines.length
  expect((await p.call('GET', '/healthz', { as: null })).status).toBe(200)
  expect((await p.call('GET', '/readyz', { as: null })).status).toBe(200)
  expect(lines.slice(mark)).toEqual([])
})

test('a console page is a line too, and the api calls it makes carry its request id', async () => {
  const cookie = await consoleCookie(p)
  const mark = lines.length
  const page = await p.admin.request('/agents', { headers: { cookie } })
  expect(page.status).toBe(200)
  const id = page.headers.get('x-request-id')
  const logged = lines.slice(mark).map((line) => JSON.parse(line)).filter((entry) => entry.message === 'request')
  expect(logged).toContainEqual(expect.objectContaining({ request_id: id, method: 'GET', path: '/agents', status: 200, user_id: p.root.userId }))
  // The page's reads of the api: their own lines, under the page's id.
  expect(logged.filter((entry) => entry.request_id === id && entry.path.startsWith('/api/')).length).toBeGreaterThan(0)
  expect(lines.slice(mark).join('')).not.toContain(cookie.split('=')[1]!)
})
