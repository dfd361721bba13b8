import { afterAll, beforeAll, expect, test } from 'bun:test'
import { startFakeOpenAI } from '../helpers/fake-openai.ts'
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts'
import { expectProblem } from '../helpers/problem.ts'

const fake = startFakeOpenAI()
let p: TestPlatform
beforeAll(async () => {
  p = await startTestPlatform({
    SWITCHBOARD_PLUGIN_RUNNER_OPENAI_BASE_URL: fake.url,
    SWITCHBOARD_PLUGIN_RUNNER_OPENAI_API_KEY: 'sk-test',
    SWITCHBOARD_PLUGIN_RUNNER_OPENAI_MODELS: 'fast:gpt-fast-2026,smart:gpt-smart-2026',
  })
})
afterAll(async () => {
  await p.close()
  fake.stop()
})

const models = async (runner = 'openai') => (await p.call('GET', `/api/runners/${runner}/models`)).body.data as Array<Record<string, unknown>>

test('the registry starts with the models the runner ships with', async () => {
  expect(await models()).toEqual([
    { id: 'fast', name: 'fast', api_id: 'gpt-fast-2026', placeholder: false, curated: false, in_catalogue: false },
    { id: 'smart', name: 'smart', api_id: 'gpt-smart-2026', placeholder: false, curated: false, in_catalogue: false },
  ])
  expect((await models('echo')).map((m) => m.api_id)).toEqual(['echo-1'])
})

test('refresh merges the catalogue, keeping hand-curated api_ids and names and the models it omits', async () => {
  const curated = await p.call('POST', '/api/runners/openai/models', { json: { id: 'smart', name: 'Smart (pinned)', api_id: 'gpt-smart-pinned' } })
  expect(curated.body).toMatchObject({ id: 'smart', curated: true, api_id: 'gpt-smart-pinned' })
  await p.call('POST', '/api/runners/openai/models', { json: { id: 'legacy', name: 'Legacy', api_id: 'gpt-legacy-1' } })

  fake.catalogue.ids = ['smart', 'gpt-5-new', 'gpt-fast-2026']
  const refreshed = await p.call('POST', '/api/runners/openai/models/refresh')
  expect(refreshed.status).toBe(200)
  expect(refreshed.body).toMatchObject({ added: 2, updated: 0, kept: 2 })
  const byId = Object.fromEntries((refreshed.body.data as Array<{ id: string }>).map((m) => [m.id, m]))
  expect(byId.smart).toMatchObject({ name: 'Smart (pinned)', api_id: 'gpt-smart-pinned', curated: true, in_catalogue: true })
  expect(byId.legacy).toMatchObject({ api_id: 'gpt-legacy-1', curated: true, in_catalogue: false })
  expect(byId.fast).toMatchObject({ api_id: 'gpt-fast-2026', in_catalogue: false })
  expect(byId['gpt-5-new']).toMatchObject({ api_id: 'gpt-5-new', curated: false, in_catalogue: true })
  expect(await models()).toEqual(refreshed.body.data)

  // A turn sends the curated api_id.
  const agent = (await p.call('POST', '/api/v1/AgentConfigRecord', { json: { name: 'pinned', runner: 'openai', model: 'smart' } })).body.id
  fake.scripts.push({ text: ['ok'] })
  await p.call('POST', '/api/chat', { json: { agent_id: agent, text: 'hi' } })
  expect(fake.received.at(-1)!.body.model).toBe('gpt-smart-pinned')
})

test('a provider that cannot list its models is a 503; a runner without a catalogue a 409', async () => {
  fake.catalogue.ids = null
  expectProblem(await p.call('POST', '/api/runners/openai/models/refresh'), 503, 'unavailable')
  fake.catalogue.ids = []
  expectProblem(await p.call('POST', '/api/runners/echo/models/refresh'), 409, 'conflict')
})

test('auth status and the sign-in endpoints say what each runner needs', async () => {
  expect((await p.call('GET', '/api/runners/openai/auth/status')).body).toEqual({ method: 'api_key', configured: true })
  expect((await p.call('GET', '/api/runners/echo/auth/status')).body).toEqual({ method: 'none', configured: true })
  for (const path of ['login', 'logout', 'code']) expectProblem(await p.call('POST', `/api/runners/openai/auth/${path}`), 409, 'conflict')
  expectProblem(await p.call('POST', '/api/runners/echo/auth/api-key', { json: { api_key: 'x' } }), 409, 'conflict')
  expectProblem(await p.call('POST', '/api/runners/openai/auth/api-key', { json: {} }), 422, 'validation_error')
})

test('an API key set through the endpoint is kept encrypted in the vault and used on the wire', async () => {
  const other = await startTestPlatform({ SWITCHBOARD_PLUGIN_RUNNER_OPENAI_BASE_URL: fake.url })
  try {
    expect((await other.call('GET', '/api/runners/openai/auth/status')).body).toEqual({ method: 'api_key', configured: false })
    // Without a key nothing stands in for one on the wire: local servers get no Authorization header at all.
    fake.scripts.push({ text: ['keyless'] })
    expect((await other.call('POST', '/rlm-query', { json: { prompt: 'hi', runner: 'openai' } })).body.text).toBe('keyless')
    expect(fake.received.at(-1)!.authorization).toBeNull()
    const stored = await other.call('POST', '/api/runners/openai/auth/api-key', { json: { api_key: 'sk-from-the-vault' } })
    expect(stored.body).toEqual({ configured: true })
    expect((await other.call('GET', '/api/runners/openai/auth/status')).body.configured).toBe(true)
    const rows = await other.store.db.selectFrom('vault_secrets').selectAll().execute()
    expect(rows.map((r) => r.name)).toEqual(['plugins/runner-openai/api_key'])
    expect(JSON.stringify(rows)).not.toContain('sk-from-the-vault')
    // Audited as a vault write by the superadmin: its name, never its value.
    const audited = await other.store.db.selectFrom('audit_events').selectAll().where('model', '=', 'VaultSecret').execute()
    expect(audited).toMatchObject([{ action: 'secret_set', record_id: 'plugins/runner-openai/api_key', actor_id: other.root.userId, changes: { value: 'changed' } }])
    expect(JSON.stringify(audited)).not.toContain('sk-from-the-vault')
    fake.scripts.push({ text: ['ok'] })
    expect((await other.call('POST', '/rlm-query', { json: { prompt: 'hi', runner: 'openai' } })).body.text).toBe('ok')
    expect(fake.received.at(-1)!.authorization).toBe('Bearer sk-from-the-vault')
    const owner = await other.createUser({ role: 'owner' })
    expectProblem(await other.call('POST', '/api/runners/openai/auth/api-key', { as: owner, json: { api_key: 'mine' } }), 403, 'forbidden')
  } finally {
    await other.close()
  }
})

test('the environment setting wins over a key in the vault', async () => {
  await p.call('POST', '/api/runners/openai/auth/api-key', { json: { api_key: 'sk-vault' } })
  fake.scripts.push({ text: ['ok'] })
  await p.call('POST', '/rlm-query', { json: { prompt: 'hi', runner: 'openai' } })
  expect(fake.received.at(-1)!.authorization).toBe('Bearer sk-test')
})

test('401 anonymous, 403 for a non-superadmin change, 404 for an unknown runner, 422 for a bad model', async () => {
  expectProblem(await p.call('GET', '/api/runners/openai/models', { as: null }), 401, 'unauthorized')
  const owner = await p.createUser({ role: 'owner' })
  expect((await p.call('GET', '/api/runners/openai/models', { as: owner })).status).toBe(200)
  expectProblem(await p.call('POST', '/api/runners/openai/models', { as: owner, json: { id: 'x', name: 'x', api_id: 'x' } }), 403, 'forbidden')
  expectProblem(await p.call('POST', '/api/runners/openai/models/refresh', { as: owner }), 403, 'forbidden')
  expectProblem(await p.call('GET', '/api/runners/nowhere/models'), 404, 'not_found')
  expectProblem(await p.call('POST', '/api/runners/openai/models', { json: { id: '', name: 'x' } }), 422, 'validation_error')
})

test('GET /api/runners lists every runner with its plugin and whether it is on, for anyone signed in', async () => {
  const member = await p.createUser()
  const listed = await p.call('GET', '/api/runners', { as: member })
  expect(listed.status).toBe(200)
  expect(listed.body.data).toEqual(
    expect.arrayContaining([
      { name: 'echo', plugin: 'runner-echo', enabled: true },
      { name: 'openai', plugin: 'runner-openai', enabled: true },
      { name: 'anthropic', plugin: 'runner-anthropic', enabled: true },
      { name: 'kimi', plugin: 'runner-kimi', enabled: true },
    ]),
  )
  expect(listed.body.data).toHaveLength(4)
  expectProblem(await p.call('GET', '/api/runners', { as: null }), 401, 'unauthorized')
  // Off with its plugin, and on again.
  expect((await p.call('POST', '/api/plugins/runner-anthropic/disable')).status).toBe(200)
  expect((await p.call('GET', '/api/runners', { as: member })).body.data).toContainEqual({ name: 'anthropic', plugin: 'runner-anthropic', enabled: false })
  expect((await p.call('POST', '/api/plugins/runner-anthropic/enable')).status).toBe(200)
  expect((await p.call('GET', '/api/runners', { as: member })).body.data).toContainEqual({ name: 'anthropic', plugin: 'runner-anthropic', enabled: true })
})
