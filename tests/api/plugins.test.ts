import { afterAll, beforeAll, expect, test } from 'bun:test'
import { join } from 'node:path'
import { chatTurn } from '../helpers/chat.ts'
import { listToolsFailure, startMcpPlatform, type McpTestPlatform } from '../helpers/mcp.ts'
import type { Principal, TestPlatform } from '../helpers/platform.ts'
import { expectProblem } from '../helpers/problem.ts'

const fixtures = join(import.meta.dir, '..', 'fixtures', 'plugins')
const runtime = join(import.meta.dir, '..', 'plugin-host', 'fixtures', 'runtime')
const startups = ((globalThis as Record<string, unknown>).pluginStartups ??= []) as string[]
const configuredStartups = ((globalThis as Record<string, unknown>).configuredStartups ??= []) as Array<Record<string, string>>
let p: McpTestPlatform
let member: Principal
let outsider: Principal

beforeAll(async () => {
  startups.length = 0
  p = await startMcpPlatform({
    env: {
      SWITCHBOARD_PLUGIN_PATHS: [join(fixtures, 'good'), join(fixtures, 'tools'), runtime].join(':'),
      // The operator's value: it wins over anything stored.
      SWITCHBOARD_PLUGIN_CONFIGURED_REGION: 'eu-west',
    },
    rules: [{ server: '*', tool: '*', effect: 'allow' }],
  })
  member = await p.createUser()
  // The owner of another company: administers their own company, never the host.
  outsider = await p.createUser({ companyId: await p.createCompany(), role: 'owner' })
})
afterAll(() => p.close())

const info = async (name: string) => ((await p.call('GET', '/api/plugins')).body.data as Array<Record<string, any>>).find((x) => x.name === name)!
const enable = (name: string, as?: Principal) => p.call('POST', `/api/plugins/${name}/enable`, { as })
const disable = (name: string, as?: Principal) => p.call('POST', `/api/plugins/${name}/disable`, { as })

test('ON_STARTUP fired once at boot, in dependency order', () => {
  expect(startups).toEqual(['alpha', 'beta'])
})

test('GET /api/plugins lists what was loaded, whether each is on, its settings schema and theme, for signed-in callers', async () => {
  const listed = await p.call('GET', '/api/plugins', { as: member })
  expect(listed.status).toBe(200)
  expect(listed.body.data).toContainEqual({
    name: 'beta',
    version: '0.2.0',
    kind: 'runner',
    description: 'Depends on alpha; serves a private route.',
    public_api: false,
    mounted_at: '/api/plugins/beta',
    dependencies: ['alpha'],
    enabled: true,
    config_schema: null,
    theme: null,
  })
  // The shipped plugins first, then the extra folders', each in dependency order.
  expect(listed.body.data.map((x: { name: string }) => x.name)).toEqual([
    'channel-email',
    'channel-slack',
    'channel-telegram',
    'channel-whatsapp',
    'mcp-artifacts',
    'mcp-planning',
    'mcp-tasks',
    'rlm',
    'runner-anthropic',
    'runner-echo',
    'runner-openai',
    'runner-kimi',
    'theme-dark',
    'alpha',
    'beta',
    'hooks',
    'notes',
    'configured',
    'theme-light',
  ])
  // Themes wait to be chosen; everything else starts on.
  expect(await info('theme-dark')).toMatchObject({ kind: 'theme', enabled: false, theme: { css: true, logo: false } })
  expect(await info('theme-light')).toMatchObject({ enabled: false, theme: { css: true, logo: true } })
  expect((await info('configured')).config_schema).toMatchObject({
    type: 'object',
    required: ['mode'],
    properties: { limit: { type: 'integer', minimum: 1, maximum: 10 }, api_key: { type: 'string', format: 'password' } },
  })
  // A shipped runner's settings: its key is a secret (a password field, never read back).
  expect((await info('runner-openai')).config_schema.properties).toMatchObject({
    base_url: { type: 'string', format: 'uri', description: expect.stringContaining('Endpoint root') },
    api_key: { type: 'string', format: 'password' },
  })
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

test('switching plugins is for superadmins: 401 without credentials, 403 for a member and another company’s owner, 404 for no such plugin', async () => {
  for (const verb of ['enable', 'disable']) {
    expectProblem(await p.call('POST', `/api/plugins/hooks/${verb}`, { as: null }), 401, 'unauthorized')
    expectProblem(await p.call('POST', `/api/plugins/hooks/${verb}`, { as: member }), 403, 'forbidden')
    expectProblem(await p.call('POST', `/api/plugins/hooks/${verb}`, { as: outsider }), 403, 'forbidden')
    expect(expectProblem(await p.call('POST', `/api/plugins/no-such-plugin/${verb}`), 404, 'not_found').detail).toContain('There is no plugin no-such-plugin')
  }
  // Nothing was switched by the refused calls.
  expect((await info('hooks')).enabled).toBe(true)
  expect((await p.call('POST', '/webhooks/demo', { as: null, json: {}, headers: { 'x-demo-signature': 'valid' } })).status).toBe(200)
})

test('a disabled plugin’s private routes answer 404 at once, and answer again once it is enabled', async () => {
  const off = await disable('beta')
  expect(off.status).toBe(200)
  expect(off.body).toMatchObject({ name: 'beta', enabled: false })
  expect(expectProblem(await p.call('GET', '/api/plugins/beta/whoami', { as: member }), 404, 'not_found').detail).toContain('beta is disabled')
  // Disabling twice is no change, not an error.
  expect((await disable('beta')).body.enabled).toBe(false)
  expect((await enable('beta')).body).toMatchObject({ name: 'beta', enabled: true })
  expect((await p.call('GET', '/api/plugins/beta/whoami', { as: member })).body).toEqual({ user: member.userId, plugin: 'beta' })
})

test('a disabled public_api plugin answers 404 at its prefix, while routes sharing a prefix with it still answer', async () => {
  await disable('hooks')
  expectProblem(await p.call('POST', '/webhooks/demo', { as: null, json: {}, headers: { 'x-demo-signature': 'valid' } }), 404, 'not_found')
  await enable('hooks')
  expect((await p.call('POST', '/webhooks/demo', { as: null, json: { n: 1 }, headers: { 'x-demo-signature': 'valid' } })).body).toEqual({ received: { n: 1 } })

  // rlm is mounted at "/": switched off, its own route is gone and every other route of the api still answers.
  await disable('rlm')
  try {
    expectProblem(await p.call('POST', '/rlm-query', { json: { prompt: 'hi' } }), 404, 'not_found')
    expect((await p.call('GET', '/api/v1/AgentConfigRecord')).status).toBe(200)
    expect((await p.call('GET', '/api/plugins')).status).toBe(200)
    expect((await p.call('POST', '/webhooks/demo', { as: null, json: {}, headers: { 'x-demo-signature': 'valid' } })).status).toBe(200)
  } finally {
    await enable('rlm')
  }
  expect((await p.call('POST', '/rlm-query', { json: { prompt: 'hi' } })).status).toBe(200)
})

test('dependencies: disabling a plugin others need, or enabling one whose dependency is off, is a 409 naming them', async () => {
  const needed = expectProblem(await disable('alpha'), 409, 'conflict')
  expect(needed.detail).toContain('beta')
  expect((await info('alpha')).enabled).toBe(true)

  await disable('beta')
  await disable('alpha')
  try {
    const missing = expectProblem(await enable('beta'), 409, 'conflict')
    expect(missing.detail).toContain('depends on alpha')
    expect((await info('beta')).enabled).toBe(false)
  } finally {
    await enable('alpha')
    await enable('beta')
  }
})

test('ON_STARTUP fires again when a plugin is enabled', async () => {
  startups.length = 0
  await disable('beta')
  expect(startups).toEqual([])
  await enable('beta')
  expect(startups).toEqual(['beta'])
})

test('a disabled mcp plugin’s tools leave the gateway, the aggregate /mcp and agents’ tool sets, and come back', async () => {
  const agent = await p.call('POST', '/api/v1/AgentConfigRecord', { json: { name: 'notes-agent', runner: 'echo', plugins: { enabled: ['notes'] } } })
  expect(agent.status).toBe(201)
  const useWhoami = async () => (await chatTurn(p, { agent_id: agent.body.id, text: '/tool notes__whoami' })).find((e) => e.type === 'tool_result')?.result
  const aggregateTools = async () => {
    const client = await connectAggregate()
    try {
      return (await client.listTools()).tools.map((t) => t.name)
    } finally {
      await client.close()
    }
  }
  const connectAggregate = async () => {
    const { Client } = await import('@modelcontextprotocol/sdk/client/index.js')
    const { StreamableHTTPClientTransport } = await import('@modelcontextprotocol/sdk/client/streamableHttp.js')
    const client = new Client({ name: 'test-host', version: '1.0.0' })
    await client.connect(new StreamableHTTPClientTransport(new URL(`${p.base}/mcp`), { requestInit: { headers: { authorization: `Bearer ${member.token}` } } }))
    return client
  }

  expect(await listToolsFailure(p.base, member, 'notes')).toBe('listed')
  expect(await aggregateTools()).toContain('notes__whoami')
  expect(await useWhoami()).toBe(`user ${p.root.userId} of ${p.root.companyId}`)

  await disable('notes')
  try {
    expectProblem(await p.call('POST', '/mcp/notes', { as: member, json: {} }), 404, 'not_found')
    expect(await aggregateTools()).not.toContain('notes__whoami')
    expect(await useWhoami()).toBe('Error: There is no tool named notes__whoami for this agent.')
  } finally {
    await enable('notes')
  }
  expect(await listToolsFailure(p.base, member, 'notes')).toBe('listed')
  expect(await aggregateTools()).toContain('notes__whoami')
  expect(await useWhoami()).toBe(`user ${p.root.userId} of ${p.root.companyId}`)
})

test('a disabled runner plugin’s runner refuses turns with a message saying so; GET /api/runners shows it off', async () => {
  const demo = (await p.call('GET', '/api/v1/AgentConfigRecord?name=eq.demo')).body.data[0]!.id
  await disable('runner-echo')
  try {
    const events = await chatTurn(p, { agent_id: demo, text: 'hello' })
    expect(events.at(-1)).toMatchObject({ type: 'error', error_type: 'runner_disabled', text: 'The runner "echo" is switched off: its plugin runner-echo is disabled.' })
    expect((await p.call('GET', '/api/runners', { as: member })).body.data).toContainEqual({ name: 'echo', plugin: 'runner-echo', enabled: false })
  } finally {
    await enable('runner-echo')
  }
  expect((await chatTurn(p, { agent_id: demo, text: 'hello' })).at(-1)).toMatchObject({ type: 'message', text: 'Echo: hello' })
})

test('one theme at a time: enabling a theme switches the other off', async () => {
  expect((await enable('theme-dark')).body).toMatchObject({ name: 'theme-dark', enabled: true })
  expect((await enable('theme-light')).body).toMatchObject({ name: 'theme-light', enabled: true })
  expect((await info('theme-dark')).enabled).toBe(false)
  expect(p.services.plugins.activeTheme()?.plugin).toBe('theme-light')
  await disable('theme-light')
  expect(p.services.plugins.activeTheme()).toBeUndefined()
})

// Settings of the fixture plugin `configured` (tests/plugin-host/fixtures/runtime/configured).
const settingsPath = '/api/plugins/configured/settings'
const seen = async () => (await p.call('GET', '/api/plugins/configured/seen', { as: member })).body as { settings: Record<string, string>; api_key: string | null }

test('settings are for superadmins: 401, 403 for a member and another company’s owner, 404 for no such plugin', async () => {
  for (const method of ['GET', 'PUT'] as const) {
    const json = method === 'PUT' ? { mode: 'fast' } : undefined
    expectProblem(await p.call(method, settingsPath, { as: null, json }), 401, 'unauthorized')
    expectProblem(await p.call(method, settingsPath, { as: member, json }), 403, 'forbidden')
    expectProblem(await p.call(method, settingsPath, { as: outsider, json }), 403, 'forbidden')
    expectProblem(await p.call(method, '/api/plugins/no-such-plugin/settings', { json }), 404, 'not_found')
  }
})

test('settings round trip: stored values reach the plugin at once, secrets never come back, the environment wins', async () => {
  const before = await p.call('GET', settingsPath)
  expect(before.status).toBe(200)
  expect(before.body).toEqual({ values: {}, secrets: { api_key: { set: false } }, fixed_by_environment: ['region'] })
  const tag = before.headers.get('etag')!
  expect(tag).toMatch(/^"\d+"$/)
  // Defaults and the environment before anything is stored.
  expect((await seen()).settings).toEqual({ greeting: 'hello', region: 'eu-west' })

  configuredStartups.length = 0
  const written = await p.call('PUT', settingsPath, {
    json: { greeting: 'hi', limit: 3, verbose: true, mode: 'careful', endpoint: 'https://example.com/x', api_key: 'sk-secret-1', region: 'us-east' },
    headers: { 'if-match': tag },
  })
  expect(written.status).toBe(200)
  expect(written.headers.get('etag')).not.toBe(tag)
  expect(written.body).toEqual({
    values: { greeting: 'hi', limit: 3, verbose: true, mode: 'careful', endpoint: 'https://example.com/x', region: 'us-east' },
    secrets: { api_key: { set: true } },
    fixed_by_environment: ['region'],
  })
  expect(JSON.stringify(written.body)).not.toContain('sk-secret-1')
  // The plugin sees the change without a restart, as text like the environment; the operator's region stands.
  const now = await seen()
  expect(now).toEqual({ settings: { greeting: 'hi', limit: '3', verbose: 'true', mode: 'careful', endpoint: 'https://example.com/x', region: 'eu-west' }, api_key: 'sk-secret-1' })
  // ON_STARTUP ran again, with the new settings in view.
  expect(configuredStartups).toEqual([now.settings])
  // The secret sits in the vault under the plugin's name.
  expect((await p.services.vault.list('global', null, 'plugins/configured/')).map((s) => s.name)).toEqual(['plugins/configured/api_key'])

  // A write that leaves the secret out keeps it; null deletes it. Non-secret settings left out fall back.
  const kept = await p.call('PUT', settingsPath, { json: { mode: 'fast' } })
  expect(kept.body).toEqual({ values: { mode: 'fast' }, secrets: { api_key: { set: true } }, fixed_by_environment: ['region'] })
  expect(await seen()).toEqual({ settings: { greeting: 'hello', mode: 'fast', region: 'eu-west' }, api_key: 'sk-secret-1' })
  const cleared = await p.call('PUT', settingsPath, { json: { mode: 'fast', api_key: null } })
  expect(cleared.body.secrets).toEqual({ api_key: { set: false } })
  expect((await seen()).api_key).toBeNull()
})

test('a settings write with a stale If-Match is refused with 412 and changes nothing', async () => {
  const current = await p.call('GET', settingsPath)
  await p.call('PUT', settingsPath, { json: { mode: 'careful' }, headers: { 'if-match': current.headers.get('etag')! } })
  const stale = await p.call('PUT', settingsPath, { json: { mode: 'fast', greeting: 'late' }, headers: { 'if-match': current.headers.get('etag')! } })
  expectProblem(stale, 412, 'precondition_failed')
  expectProblem(await p.call('PUT', settingsPath, { json: { mode: 'fast' }, headers: { 'if-match': 'W/"1"' } }), 412, 'precondition_failed')
  expect((await p.call('GET', settingsPath)).body.values).toEqual({ mode: 'careful' })
})

test('settings that break the schema answer 422 with an error per key, and nothing is stored', async () => {
  const before = await p.call('GET', settingsPath)
  const bad = await p.call('PUT', settingsPath, {
    json: { greeting: 'x'.repeat(21), limit: 11, verbose: 'yes', mode: 'reckless', endpoint: 'not a uri', colour: 'red', api_key: 42 },
  })
  const problem = expectProblem(bad, 422, 'validation_error')
  const byPath = Object.fromEntries(problem.errors!.map((e) => [e.path, e.message]))
  expect(byPath).toEqual({
    greeting: 'must be at most 20 characters',
    limit: 'must be at most 10',
    verbose: 'must be true or false',
    mode: 'must be one of "fast", "careful"',
    endpoint: 'must be an absolute URI such as https://example.com/',
    colour: 'not a setting of this plugin',
    api_key: 'must be text',
  })
  expectProblem(await p.call('PUT', settingsPath, { json: { limit: 2.5, mode: 'fast' } }), 422, 'validation_error')
  // A required setting without a value anywhere.
  expect(expectProblem(await p.call('PUT', settingsPath, { json: { greeting: 'hi' } }), 422, 'validation_error').errors).toEqual([{ path: 'mode', message: 'is required' }])
  // Not an object of scalars at all.
  expectProblem(await p.call('PUT', settingsPath, { json: { mode: { nested: true } } }), 422, 'validation_error')
  expectProblem(await p.call('PUT', settingsPath, { json: ['mode'] }), 422, 'validation_error')
  const after = await p.call('GET', settingsPath)
  expect(after.body).toEqual(before.body)
  expect(after.headers.get('etag')).toBe(before.headers.get('etag'))
})

test('attack: keys that name object internals are refused, and neither the store nor the plugin’s settings change', async () => {
  const before = (await p.call('GET', settingsPath)).body
  for (const body of ['{"__proto__": {"polluted": "yes"}, "mode": "fast"}', '{"__proto__": "x", "mode": "fast"}', '{"constructor": "x", "mode": "fast"}', '{"toString": "x", "mode": "fast"}']) {
    const reply = await p.call('PUT', settingsPath, { body, headers: { 'content-type': 'application/json' } })
    expect(reply.status, body).toBe(422)
  }
  expect(({} as Record<string, unknown>).polluted).toBeUndefined()
  expect((await p.call('GET', settingsPath)).body).toEqual(before)
  expect(Object.keys((await seen()).settings).sort()).toEqual(['greeting', 'mode', 'region'])
})

test('a plugin without a config_schema takes no settings', async () => {
  expect((await p.call('GET', '/api/plugins/alpha/settings')).body).toEqual({ values: {}, secrets: {}, fixed_by_environment: [] })
  expect(expectProblem(await p.call('PUT', '/api/plugins/alpha/settings', { json: { x: 1 } }), 422, 'validation_error').errors).toEqual([{ path: 'x', message: 'not a setting of this plugin' }])
})

test('a private plugin route shares the per-user API throttle with /api/v1/*', async () => {
  const tight = await startTestPlatformTight()
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

async function startTestPlatformTight(): Promise<TestPlatform> {
  const { startTestPlatform } = await import('../helpers/platform.ts')
  return startTestPlatform({ SWITCHBOARD_PLUGIN_PATHS: join(fixtures, 'good'), SWITCHBOARD_API_RATE_BURST: '3', SWITCHBOARD_API_RATE_PER_SECOND: '0.01' })
}

test('switching a plugin and writing its settings are audited once each, secrets as "changed", never their values', async () => {
  const since = new Date()
  const events = async () =>
    p.store.db.selectFrom('audit_events').selectAll().where('model', '=', 'Plugin').where('created_at', '>=', since).orderBy('created_at').orderBy('id').execute()
  expect((await disable('beta')).status).toBe(200)
  expect((await enable('beta')).status).toBe(200)
  // Switching to the state it is in changes nothing, and records nothing.
  expect((await enable('beta')).status).toBe(200)
  expect((await p.call('PUT', settingsPath, { json: { mode: 'fast', greeting: 'audited', api_key: 'sk-audited-secret' } })).status).toBe(200)
  // A refused write (a stale version) leaves no event.
  expectProblem(await p.call('PUT', settingsPath, { json: { mode: 'careful' }, headers: { 'if-match': '"1"' } }), 412, 'precondition_failed')
  const made = await events()
  expect(made.map((e) => [e.action, e.record_id])).toEqual([
    ['plugin_disable', 'beta'],
    ['plugin_enable', 'beta'],
    ['plugin_settings', 'configured'],
  ])
  for (const event of made) expect(event).toMatchObject({ actor_id: p.root.userId, company_id: null })
  expect(made[0]!.changes).toEqual({ enabled: { from: true, to: false } })
  expect(made[2]!.changes).toMatchObject({ greeting: { to: 'audited' }, api_key: 'changed' })
  expect(JSON.stringify(made)).not.toContain('sk-audited-secret')
  // Superadmins read it through the API too.
  const listed = await p.call('GET', `/api/v1/AuditEvent?model=eq.Plugin&record_id=eq.configured&action=eq.plugin_settings&created_at=gte.${since.toISOString()}`)
  expect(listed.body.data).toHaveLength(1)
})
