import { afterAll, beforeAll, expect, test } from 'bun:test'
import { ADMIN_PASSWORD, startTestPlatform, type TestPlatform } from '../helpers/platform.ts'
import { expectProblem } from '../helpers/problem.ts'

let p: TestPlatform
let cookie: string

beforeAll(async () => {
  p = await startTestPlatform({ SWITCHBOARD_BASE_URL: 'https://api.example.com', SWITCHBOARD_ADMIN_BASE_URL: 'https://console.example.com' })
  const login = await p.call('POST', '/auth/login', { as: null, json: { username: 'admin', password: ADMIN_PASSWORD }, headers: { accept: 'application/json' } })
  cookie = login.headers.get('set-cookie')!.split(';')[0]!
  expect(login.headers.get('set-cookie')).toContain('Secure')
})
afterAll(() => p.close())

const write = (headers: Record<string, string>) =>
  p.call('POST', '/api/v1/AgentConfigRecord', { as: null, json: { name: `csrf-${crypto.randomUUID()}` }, headers })

test('a cookie-authenticated write from a foreign page is refused', async () => {
  expectProblem(await write({ cookie, origin: 'https://evil.example' }), 403, 'forbidden')
  expectProblem(await write({ cookie, 'sec-fetch-site': 'cross-site' }), 403, 'forbidden')
  expectProblem(await write({ cookie, origin: 'null' }), 403, 'forbidden')
})

test('writes from either of the platform’s own origins, or from a non-browser client, pass', async () => {
  expect((await write({ cookie, origin: 'https://console.example.com' })).status).toBe(201)
  expect((await write({ cookie, origin: 'https://api.example.com' })).status).toBe(201)
  expect((await write({ cookie, 'sec-fetch-site': 'same-origin' })).status).toBe(201)
  expect((await write({ cookie })).status).toBe(201)
})

test('a bearer token carries no ambient authority, so its origin does not matter', async () => {
  expect((await write({ authorization: `Bearer ${p.root.token}`, origin: 'https://evil.example' })).status).toBe(201)
})

test('a foreign page cannot sign a browser in either (login CSRF)', async () => {
  const reply = await p.call('POST', '/auth/login', { as: null, json: { username: 'admin', password: ADMIN_PASSWORD }, headers: { origin: 'https://evil.example' } })
  expectProblem(reply, 403, 'forbidden')
  expect(reply.headers.get('set-cookie')).toBeNull()
})
