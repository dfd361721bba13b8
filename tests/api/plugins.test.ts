import { afterAll, beforeAll, expect, test } from 'bun:test'
import { join } from 'node:path'
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts'
import { expectProblem } from '../helpers/problem.ts'

const startups = ((globalThis as Record<string, unknown>).pluginStartups ??= []) as string[]
let p: TestPlatform

beforeAll(async () => {
  startups.length = 0
  p = await startTestPlatform({ SWITCHBOARD_PLUGIN_PATHS: join(import.meta.dir, '..', 'fixtures', 'plugins', 'good') })
})
afterAll(() => p.close())

test('ON_STARTUP fired once at boot, in dependency order', () => {
  expect(startups).toEqual(['alpha', 'beta'])
})

test('GET /api/plugins lists what was loaded, for signed-in callers', async () => {
  const listed = await p.call('GET', '/api/plugins')
  expect(listed.status).toBe(200)
  expect(listed.body.data).toContainEqual({
    name: 'beta',
    version: '0.2.0',
    kind: 'runner',
    description: 'Depends on alpha; serves a private route.',
    public_api: false,
    mounted_at: '/api/plugins/beta',
    dependencies: ['alpha'],
  })
  // The shipped plugins first, then the extra folder's, each in dependency order.
  expect(listed.body.data.map((x: { name: string }) => x.name)).toEqual(['rlm', 'runner-anthropic', 'runner-echo', 'runner-openai', 'runner-kimi', 'alpha', 'beta', 'hooks'])
  expectProblem(await p.call('GET', '/api/plugins', { as: null }), 401, 'unauthorized')
})

test('a private plugin router answers under /api/plugins/<name>/ behind sign-in', async () => {
  const user = await p.createUser()
  expect((await p.call('GET', '/api/plugins/beta/whoami', { as: user })).body).toEqual({ user: user.userId, plugin: 'beta' })
  expectProblem(await p.call('GET', '/api/plugins/beta/whoami', { as: null }), 401, 'unauthorized')
})

test('a public_api router answers at its prefix without sign-in, and checks its own signature', async () => {
  const ok = await p.call('POST', '/webhooks/demo', { as: null, json: { event: 'ping' }, headers: { 'x-demo-signature': 'valid' } })
  expect(ok.body).toEqual({ received: { event: 'ping' } })
  expectProblem(await p.call('POST', '/webhooks/demo', { as: null, json: {}, headers: { 'x-demo-signature': 'forged' } }), 401, 'unauthorized')
})

test('a private plugin route shares the per-user API throttle with /api/v1/*', async () => {
  const tight = await startTestPlatform({
    SWITCHBOARD_PLUGIN_PATHS: join(import.meta.dir, '..', 'fixtures', 'plugins', 'good'),
    SWITCHBOARD_API_RATE_BURST: '3',
    SWITCHBOARD_API_RATE_PER_SECOND: '0.01',
  })
  try {
    const user = await tight.createUser()
    expect((await tight.call('GET', '/api/v1/AgentConfigRecord', { as: user })).status).toBe(200)
    expect((await tight.call('GET', '/api/plugins/beta/whoami', { as: user })).status).toBe(200)
    expect((await tight.call('GET', '/api/plugins/beta/whoami', { as: user })).status).toBe(200)
    const refused = await tight.call('GET', '/api/plugins/beta/whoami', { as: user })
    expectProblem(refused, 429, 'rate_limited')
    expect(refused.headers.get('retry-after')).toMatch(/^[1-9]\d*$/)
    expect((await tight.call('GET', '/api/v1/AgentConfigRecord', { as: user })).status).toBe(429)
  } finally {
    await tight.close()
  }
})
