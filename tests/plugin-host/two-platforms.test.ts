import { afterAll, beforeAll, expect, test } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { TOKEN_PREFIX } from '../../src/auth/authenticator.ts'
import { hashSecret, newSecret } from '../../src/auth/secrets.ts'
import { loadConfig } from '../../src/config.ts'
import { openPostgres, type Store } from '../../src/db/connect.ts'
import { silentLogger } from '../../src/logger.ts'
import { createPlatform, type Platform } from '../../src/platform.ts'
import { CLUSTER_NEEDS_POSTGRES } from '../helpers/cluster.ts'
import { createPostgresDatabase, TEST_DATABASE_URL } from '../helpers/database.ts'
import { expectProblem } from '../helpers/problem.ts'
import { until } from '../helpers/until.ts'

// Two platforms in this process on one PostgreSQL database, each with its own pool and its own LISTEN connection,
// as two processes behind a load balancer have: a plugin switched on one must be switched on the other.
const fixtures = join(import.meta.dir, '..', 'fixtures', 'plugins')
const startups = ((globalThis as Record<string, unknown>).pluginStartups ??= []) as string[]

interface Member {
  platform: Platform
  store: Store
  dataDir: string
}

let database: Awaited<ReturnType<typeof createPostgresDatabase>>
let one: Member
let two: Member
let token: string

async function start(url: string): Promise<Member> {
  const dataDir = mkdtempSync(join(tmpdir(), 'switchboard-plugins-'))
  const store = openPostgres(url, 4)
  const config = loadConfig({
    SWITCHBOARD_DATA_DIR: dataDir,
    SWITCHBOARD_ADMIN_PASSWORD: 'admin-password-for-tests',
    // Both must open the same vault.
    SWITCHBOARD_MASTER_KEY: 'a'.repeat(64),
    SWITCHBOARD_MCP_SANDBOX: 'none',
    SWITCHBOARD_PLUGIN_PATHS: join(fixtures, 'good'),
  })
  return { platform: await createPlatform(config, store, silentLogger), store, dataDir }
}

async function call(member: Member, method: string, path: string) {
  const response = await member.platform.api.request(path, { method, headers: { authorization: `Bearer ${token}` } }, { requestIP: () => ({ address: '192.0.2.1' }) })
  return { status: response.status, headers: response.headers, body: await response.json().catch(() => undefined) }
}

if (TEST_DATABASE_URL) {
  beforeAll(async () => {
    database = await createPostgresDatabase()
    one = await start(database.url)
    two = await start(database.url)
    const admin = await one.store.db.selectFrom('users').select('id').where('is_superadmin', '=', true).executeTakeFirstOrThrow()
    token = newSecret(TOKEN_PREFIX)
    await one.store.db
      .insertInto('api_tokens')
      .values({ id: Bun.randomUUIDv7(), user_id: admin.id, name: 'tests', token_hash: hashSecret(token), prefix: token.slice(0, 10), expires_at: null, last_used_at: null })
      .execute()
  })
  afterAll(async () => {
    for (const member of [one, two]) {
      if (!member) continue
      await member.platform.close()
      await member.store.close()
      rmSync(member.dataDir, { recursive: true, force: true })
    }
    await database?.drop()
  })
}

const pgTest = (name: string, body: () => Promise<void>) => (TEST_DATABASE_URL ? test(name, body, 30_000) : test.skip(`${name} (${CLUSTER_NEEDS_POSTGRES})`, () => {}))

pgTest('a plugin disabled on one process answers 404 on the other at once, and answers there again once enabled', async () => {
  expect((await call(two, 'GET', '/api/plugins/beta/whoami')).status).toBe(200)
  expect((await call(one, 'POST', '/api/plugins/beta/disable')).status).toBe(200)
  await until(async () => (await call(two, 'GET', '/api/plugins/beta/whoami')).status === 404, { what: 'beta switched off on the second platform' })
  expectProblem(await call(two, 'GET', '/api/plugins/beta/whoami'), 404, 'not_found')
  expect((await call(two, 'GET', '/api/plugins')).body.data.find((x: { name: string }) => x.name === 'beta').enabled).toBe(false)

  startups.length = 0
  expect((await call(one, 'POST', '/api/plugins/beta/enable')).status).toBe(200)
  await until(async () => (await call(two, 'GET', '/api/plugins/beta/whoami')).status === 200, { what: 'beta switched on again on the second platform' })
  // ON_STARTUP ran again in both processes.
  await until(() => startups.length === 2, { what: 'both platforms ran beta’s ON_STARTUP' })
  expect(startups).toEqual(['beta', 'beta'])
})

pgTest('the second process refuses a dependency conflict the first one made possible, judging the shared store', async () => {
  // Process two has beta on in memory; process one's disable of beta must be seen before two disables alpha.
  expect((await call(one, 'POST', '/api/plugins/beta/disable')).status).toBe(200)
  expect((await call(two, 'POST', '/api/plugins/alpha/disable')).status).toBe(200)
  const refused = await call(one, 'POST', '/api/plugins/beta/enable')
  expectProblem(refused, 409, 'conflict')
  expect(refused.body.detail).toContain('depends on alpha')
  await call(two, 'POST', '/api/plugins/alpha/enable')
  await call(two, 'POST', '/api/plugins/beta/enable')
})
