import { afterAll, beforeAll, expect, test } from 'bun:test'
import { join } from 'node:path'
import { systemClock } from '../../src/clock.ts'
import { CLUSTER_NEEDS_POSTGRES } from '../helpers/cluster.ts'
import { createPostgresDatabase, openTestStore, TEST_DATABASE_URL, type TestDatabase } from '../helpers/database.ts'
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts'
import { expectProblem } from '../helpers/problem.ts'
import { until } from '../helpers/until.ts'

// Two platforms in this process on one PostgreSQL database, each with its own pool and its own LISTEN connection,
// as two processes behind a load balancer have: a plugin switched on one must be switched on the other.
const fixtures = join(import.meta.dir, '..', 'fixtures', 'plugins')
const startups = ((globalThis as Record<string, unknown>).pluginStartups ??= []) as string[]

let database: Awaited<ReturnType<typeof createPostgresDatabase>>
let one: TestPlatform
let two: TestPlatform

/** One of the two: its own pool on the shared database, the same vault key as the other. */
function start(on: TestDatabase): Promise<TestPlatform> {
  const env = { SWITCHBOARD_MASTER_KEY: 'a'.repeat(64), SWITCHBOARD_PLUGIN_PATHS: join(fixtures, 'good') }
  return startTestPlatform(env, systemClock, openTestStore(on))
}

const call = <const Method extends string, const Path extends string>(platform: TestPlatform, method: Method, path: Path) => platform.call(method, path)

if (TEST_DATABASE_URL) {
  beforeAll(async () => {
    database = await createPostgresDatabase()
    one = await start(database)
    two = await start(database)
  })
  afterAll(async () => {
    for (const platform of [one, two]) await platform?.close()
    await database?.drop()
  })
}

const pgTest = (name: string, body: () => Promise<void>) => (TEST_DATABASE_URL ? test(name, body, 30_000) : test.skip(`${name} (${CLUSTER_NEEDS_POSTGRES})`, () => {}))

pgTest('a plugin disabled on one process answers 404 on the other at once, and answers there again once enabled', async () => {
  expect((await call(two, 'GET', '/api/plugins/beta/whoami')).status).toBe(200)
  expect((await call(one, 'POST', '/api/plugins/beta/disable')).status).toBe(200)
  await until(async () => (await call(two, 'GET', '/api/plugins/beta/whoami')).status === 404, { what: 'beta switched off on the second platform' })
  expectProblem(await call(two, 'GET', '/api/plugins/beta/whoami'), 404, 'not_found')
  expect((await call(two, 'GET', '/api/plugins')).body.data.find((x) => x.name === 'beta')!.enabled).toBe(false)

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
  expect(expectProblem(refused, 409, 'conflict').detail).toContain('depends on alpha')
  await call(two, 'POST', '/api/plugins/alpha/enable')
  await call(two, 'POST', '/api/plugins/beta/enable')
})
