import { afterAll, beforeAll, expect, test } from 'bun:test'
import { chatTurn } from '../helpers/chat.ts'
import { startFakeDeviceProvider } from '../helpers/fake-device-auth.ts'
import { startFakeOpenAI } from '../helpers/fake-openai.ts'
import { startTestPlatform, type Principal, type TestPlatform } from '../helpers/platform.ts'
import { expectProblem } from '../helpers/problem.ts'
import { fieldsOf } from '../helpers/typed-call.ts'

// A runner that signs in to its provider with OAuth's device grant, through the runner endpoints: the code, the
// check, the tokens in the vault used on the wire and refreshed as they end, sign-out; against a fake provider.
const provider = startFakeDeviceProvider()
const fake = startFakeOpenAI()
let p: TestPlatform
let member: Principal
let agent: string

beforeAll(async () => {
  p = await startTestPlatform({
    SWITCHBOARD_PLUGIN_RUNNER_OPENAI_BASE_URL: fake.url,
    SWITCHBOARD_PLUGIN_RUNNER_OPENAI_MODELS: 'fast:gpt-fast-2026',
    SWITCHBOARD_PLUGIN_RUNNER_OPENAI_DEVICE_AUTHORIZATION_URL: `${provider.base}/device`,
    SWITCHBOARD_PLUGIN_RUNNER_OPENAI_TOKEN_URL: `${provider.base}/token`,
    SWITCHBOARD_PLUGIN_RUNNER_OPENAI_CLIENT_ID: 'switchboard-test',
  })
  member = await p.createUser()
  agent = fieldsOf((await p.call('POST', '/api/v1/AgentConfigRecord', { json: { name: 'signed-in', runner: 'openai', model: 'fast' } })).body).id as string
})
afterAll(async () => {
  await p.close()
  fake.stop()
  provider.stop()
})

const status = async () => fieldsOf((await p.call('GET', '/api/runners/openai/auth/status')).body)
const auth = (step: 'login' | 'code' | 'logout', as?: Principal) => p.call('POST', `/api/runners/openai/auth/${step}`, as ? { as } : {})
async function turnAuthorization(): Promise<string | null> {
  fake.scripts.push({ text: ['ok'] })
  await chatTurn(p, { agent_id: agent, text: 'hi' })
  return fake.received.at(-1)!.authorization
}

test('sign in with the code, use the token on the wire, refresh it as it ends, sign out', async () => {
  expect(await status()).toMatchObject({ method: 'device', configured: false, state: 'signed_out' })
  expectProblem(await auth('login', member), 403, 'forbidden')
  expect(expectProblem(await auth('code'), 409, 'conflict').detail).toContain('No sign-in is waiting for its code')

  const login = await auth('login')
  expect(login.status).toBe(200)
  expect(login.body).toEqual({ user_code: 'WDJB-MJHT', verification_uri: `${provider.base}/activate`, verification_uri_complete: `${provider.base}/activate?user_code=WDJB-MJHT`, expires_in: 600, interval: 1 })
  expect(await status()).toMatchObject({ state: 'pending', user_code: 'WDJB-MJHT', configured: false })
  // Not entered yet at the provider: still pending.
  expect((await auth('code')).body).toMatchObject({ state: 'pending' })

  provider.approve()
  // Tokens that end within the refresh margin: each use refreshes them first (the status's own check did, once).
  provider.state.expiresIn = 30
  const signedIn = await auth('code')
  expect(signedIn.body).toMatchObject({ method: 'device', configured: true, state: 'signed_in', user_code: null })
  expect(provider.state.refreshes).toBe(1)
  provider.state.expiresIn = 3600
  expect(await turnAuthorization()).toBe('Bearer at-3')
  expect(provider.state.refreshes).toBe(2)
  // A token with time left is used as it is.
  expect(await turnAuthorization()).toBe('Bearer at-3')
  expect(provider.state.refreshes).toBe(2)

  // The tokens are the plugin's secrets in the vault, encrypted.
  const rows = await p.store.db.selectFrom('vault_secrets').selectAll().where('name', 'like', 'plugins/runner-openai/device%').execute()
  expect(rows.map((r) => r.name)).toContain('plugins/runner-openai/device_tokens')
  expect(JSON.stringify(rows)).not.toContain('at-3')

  expect((await auth('logout')).body).toMatchObject({ state: 'signed_out', configured: false })
  expect(await turnAuthorization()).toBeNull()
})

test('a sign-in the person declines ends, saying so; one whose refresh is refused ends, saying so', async () => {
  provider.reset()
  expect((await auth('login')).status).toBe(200)
  provider.deny()
  expect((await auth('code')).body).toMatchObject({ state: 'signed_out', problem: 'The person declined the sign-in at the provider.' })
  expectProblem(await auth('code'), 409, 'conflict')

  provider.reset()
  expect((await auth('login')).status).toBe(200)
  provider.approve()
  provider.state.expiresIn = 30
  expect((await auth('code')).body).toMatchObject({ state: 'signed_in' })
  // The provider forgets the refresh token: the sign-in ends, and the status says why.
  provider.state.currentRefresh = 'something-else'
  expect(await turnAuthorization()).toBeNull()
  expect(await status()).toMatchObject({ state: 'signed_out', configured: false, problem: expect.stringContaining('would not refresh the sign-in (invalid_grant') })
})

test('a runner that signs in with an API key has no device sign-in: 409 saying how it does', async () => {
  const problem = expectProblem(await p.call('POST', '/api/runners/anthropic/auth/login'), 409, 'conflict')
  expect(problem.detail).toContain('signs in with an API key')
})

test('a provider that cannot be reached is a 502 saying so, not a crash', async () => {
  const other = await startTestPlatform({
    SWITCHBOARD_PLUGIN_RUNNER_OPENAI_DEVICE_AUTHORIZATION_URL: 'http://127.0.0.1:1/device',
    SWITCHBOARD_PLUGIN_RUNNER_OPENAI_TOKEN_URL: 'http://127.0.0.1:1/token',
    SWITCHBOARD_PLUGIN_RUNNER_OPENAI_CLIENT_ID: 'switchboard-test',
  })
  try {
    expect(expectProblem(await other.call('POST', '/api/runners/openai/auth/login'), 502, 'bad_gateway').detail).toStartWith('The provider’s sign-in could not be reached')
  } finally {
    await other.close()
  }
})
