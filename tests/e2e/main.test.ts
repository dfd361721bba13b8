import { afterAll, afterEach, expect, test } from 'bun:test'
import { existsSync, mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createPostgresDatabase, databaseEnv, TEST_DATABASE_URL } from '../helpers/database.ts'
import { untilReady } from '../helpers/main-process.ts'
import { until } from '../helpers/until.ts'

const MAIN = join(import.meta.dir, '..', '..', 'src', 'main.ts')
const dataDir = mkdtempSync(join(tmpdir(), 'switchboard-main-'))
const database = TEST_DATABASE_URL ? await createPostgresDatabase() : undefined
afterAll(() => database?.drop())

interface Running {
  process: Bun.Subprocess<'ignore', 'pipe', 'pipe'>
  api: string
  admin: string
  output: () => string
}

const PASSWORD = 'e2e-admin-password'

function spawnMain(env: Record<string, string> = {}, command: string[] = [process.execPath, MAIN]) {
  return Bun.spawn(command, {
    env: {
      PATH: process.env.PATH ?? '',
      SWITCHBOARD_DATA_DIR: dataDir,
      SWITCHBOARD_API_PORT: '0',
      SWITCHBOARD_ADMIN_PORT: '0',
      SWITCHBOARD_ADMIN_PASSWORD: PASSWORD,
      ...(database ? databaseEnv(database) : {}),
      ...env,
    },
    stdin: 'ignore',
    stdout: 'pipe',
    stderr: 'pipe',
  })
}

/** Starts the server as `npm start` does and waits for it to print both addresses. */
async function start(child = spawnMain()): Promise<Running> {
  return { process: child, ...(await untilReady(child)) }
}

// Servers a failed test left running are stopped, so they hold no lock over the next test.
const running = new Set<Running>()
afterEach(async () => {
  for (const server of running) await stop(server)
})

async function stop(server: Running): Promise<number> {
  running.delete(server)
  server.process.kill('SIGTERM')
  return server.process.exited
}

test('serves the docs and the console, keeps data across a restart, and stops cleanly on SIGTERM', async () => {
  const first = await start()
  running.add(first)
  expect((await fetch(`${first.api}/api/docs`)).status).toBe(200)
  const signIn = await fetch(`${first.admin}/`)
  expect(signIn.status).toBe(200)
  expect(signIn.url).toBe(`${first.admin}/login?post_login_redirect=%2F`)
  expect(await signIn.text()).toContain('Sign in')

  const login = await fetch(`${first.api}/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json' },
    body: JSON.stringify({ username: 'admin', password: PASSWORD }),
  })
  expect(login.status).toBe(200)
  const cookie = login.headers.get('set-cookie')!.split(';')[0]!
  const created = await fetch(`${first.api}/api/v1/AgentConfigRecord`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', cookie },
    body: JSON.stringify({ name: 'survivor', personality: 'Still here.' }),
  })
  expect(created.status).toBe(201)
  const { id } = (await created.json()) as { id: string }
  const overview = await fetch(`${first.admin}/`, { headers: { cookie } })
  expect(await overview.text()).toMatch(/AgentConfigRecord<\/a><\/td><td>2</) // with the demo agent

  expect(await stop(first)).toBe(0)
  expect(existsSync(join(dataDir, 'switchboard.lock'))).toBe(false)

  const second = await start()
  running.add(second)
  // The session, like the data, outlives the restart.
  const read = await fetch(`${second.api}/api/v1/AgentConfigRecord/${id}`, { headers: { cookie } })
  expect(read.status).toBe(200)
  expect(await read.json()).toMatchObject({ name: 'survivor', personality: 'Still here.' })
  expect(await stop(second)).toBe(0)
}, 60_000)

test('SIGTERM lets a request in flight finish before the process exits', async () => {
  const server = await start()
  running.add(server)
  const login = await fetch(`${server.api}/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json' },
    body: JSON.stringify({ username: 'admin', password: PASSWORD }),
  })
  const cookie = login.headers.get('set-cookie')!.split(';')[0]!
  // The body arrives in two parts; the signal comes between them.
  const body = JSON.stringify({ name: `in-flight-${Date.now()}` })
  let sendRest!: () => void
  const upload = new ReadableStream<Uint8Array>({
    start(controller) {
      controller.enqueue(new TextEncoder().encode(body.slice(0, 5)))
      sendRest = () => {
        controller.enqueue(new TextEncoder().encode(body.slice(5)))
        controller.close()
      }
    },
  })
  const reply = fetch(`${server.api}/api/v1/AgentConfigRecord`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', cookie },
    body: upload,
    duplex: 'half',
  } as RequestInit)
  // Nothing outside the server can tell that it has begun handling a request whose body is still coming, so it is
  // given a moment; a slow machine that missed it fails below with the request refused, not with a wrong pass.
  await Bun.sleep(300)
  running.delete(server)
  server.process.kill('SIGTERM')
  await until(() => server.output().includes('"shutting down"'), { what: 'the server to log that it is shutting down' })
  sendRest()
  expect((await reply).status).toBe(201)
  expect(await server.process.exited).toBe(0)
}, 60_000)

test.skipIf(database !== undefined)('a second process on the same embedded data directory refuses to start', async () => {
  const first = await start()
  running.add(first)
  try {
    const second = spawnMain()
    expect(await second.exited).toBe(1)
    expect(await new Response(second.stderr).text()).toContain(`in use by another Switchboard process (pid ${first.process.pid})`)
    expect((await fetch(`${first.api}/api/openapi.json`)).status).toBe(200)
  } finally {
    expect(await stop(first)).toBe(0)
  }
}, 60_000)

test('killed with SIGKILL and started again at once on the same data directory, it comes back up', async () => {
  // Its parent here never reaps it, so the killed process stays a zombie that still answers kill(pid, 0), as a
  // process does while it is being torn down or until a slow supervisor reaps it.
  const parent = spawnMain({}, ['sh', '-c', '"$0" "$1" & echo "platform pid $!"; exec sleep 120', process.execPath, MAIN])
  try {
    const crashed = await start(parent)
    expect((await fetch(`${crashed.api}/api/openapi.json`)).status).toBe(200)
    const pid = Number(/platform pid (\d+)/.exec(crashed.output())![1])
    // No SIGTERM: the lock file stays behind, naming the killed process.
    process.kill(pid, 'SIGKILL')
    const restarted = await start()
    running.add(restarted)
    expect((await fetch(`${restarted.api}/api/openapi.json`)).status).toBe(200)
    expect(await stop(restarted)).toBe(0)
  } finally {
    parent.kill('SIGKILL')
    await parent.exited
  }
}, 60_000)

// Libraries only some deployments use load when first used: each took from 5 to 40 ms of every start.
const LOADED_WHEN_USED = [
  '@anthropic-ai/sdk',
  'openai',
  '@slack/web-api',
  'grammy',
  'openid-client',
  'jose',
  'nodemailer',
  'imapflow',
  'mailparser',
  'unpdf',
  'mammoth',
  'exceljs',
  'file-type',
  'music-metadata',
  'prom-client',
  '@opentelemetry/sdk-trace',
  '@opentelemetry/exporter-trace-otlp-http',
  '@opentelemetry/resources',
  '@opentelemetry/core',
  '@opentelemetry/context-async-hooks',
  // The MCP SDK's client side, and the JSON Schema compiler its client and server share.
  '@modelcontextprotocol/sdk/dist/esm/client',
  'ajv',
]
// Loaded by every start, after the process has re-executed itself (src/boot/clean-environ.ts): seen, it shows that
// the recorder ran in the process that serves.
const ALWAYS_LOADED = 'hono'
const RECORD_LOADS = join(import.meta.dir, '..', 'fixtures', 'start-up', 'record-loads.ts')
const ROOT = join(import.meta.dir, '..', '..')

/** The environment that has the recorder note loads of `packages`, and what it has noted so far. */
function recorder(packages: string[], env: Record<string, string> = {}): { env: Record<string, string>; loaded: (name: string) => string[] } {
  const file = join(mkdtempSync(join(tmpdir(), 'switchboard-loads-')), 'loaded')
  const loaded = (name: string) => (existsSync(file) ? readFileSync(file, 'utf8').split('\n').filter((path) => path.includes(`/node_modules/${name}/`)) : [])
  return { env: { ...env, RECORD_LOADS_TO: file, RECORD_LOADS_OF: packages.map((name) => name.replace(/[/.]/g, '\\$&')).join('|') }, loaded }
}

test('a start loads none of the libraries that only some deployments use, until they are used', async () => {
  const { env, loaded } = recorder([...LOADED_WHEN_USED, ALWAYS_LOADED], { SWITCHBOARD_DATA_DIR: mkdtempSync(join(tmpdir(), 'switchboard-loads-')) })
  const loadedWhenUsed = () => LOADED_WHEN_USED.flatMap(loaded)
  const server = await start(spawnMain(env, [process.execPath, '--preload', RECORD_LOADS, MAIN])).catch((error: Error) => error)
  // Named here first: a CommonJS module the recorder loaded may have failed the start as well.
  expect(loadedWhenUsed()).toEqual([])
  if (server instanceof Error) throw server
  running.add(server)
  expect((await fetch(`${server.api}/api/docs`)).status).toBe(200)
  expect(await stop(server)).toBe(0)
  expect(loadedWhenUsed()).toEqual([])
  expect(loaded(ALWAYS_LOADED).length).toBeGreaterThan(0)

  // The recorder sees a load of one of them when there is one.
  const probe = recorder(['jose'])
  const child = Bun.spawn([process.execPath, '--preload', RECORD_LOADS, '-e', "await import('jose')"], { cwd: ROOT, env: { PATH: process.env.PATH ?? '', ...probe.env }, stderr: 'pipe' })
  expect({ exit: await child.exited, stderr: await new Response(child.stderr).text() }).toEqual({ exit: 0, stderr: '' })
  expect(probe.loaded('jose').length).toBeGreaterThan(0)
})

test('bad configuration stops start-up with one message naming every bad variable', async () => {
  const child = spawnMain({ SWITCHBOARD_API_PORT: 'http', SWITCHBOARD_SESSION_MAX_DAYS: 'forever' })
  expect(await child.exited).toBe(1)
  const message = await new Response(child.stderr).text()
  expect(message).toContain('Invalid configuration')
  expect(message).toContain('SWITCHBOARD_API_PORT')
  expect(message).toContain('SWITCHBOARD_SESSION_MAX_DAYS')
})

test('a bad plugin manifest stops start-up, naming the file and the field', async () => {
  const plugins = join(import.meta.dir, '..', 'fixtures', 'plugins', 'bad-field')
  const child = spawnMain({ SWITCHBOARD_PLUGIN_PATHS: plugins, SWITCHBOARD_DATA_DIR: mkdtempSync(join(tmpdir(), 'switchboard-plugins-')) })
  expect(await child.exited).toBe(1)
  const message = await new Response(child.stderr).text()
  expect(message).toContain(join(plugins, 'wrong', 'manifest.json'))
  expect(message).toContain('kind:')
  expect(message).toContain('colour: unknown field')
})

test('kimi with backend=cli: the process exits non-zero, giving both reasons', async () => {
  const child = spawnMain({ SWITCHBOARD_PLUGIN_RUNNER_KIMI_BACKEND: 'cli', SWITCHBOARD_DATA_DIR: mkdtempSync(join(tmpdir(), 'switchboard-kimi-')) })
  expect(await child.exited).toBe(1)
  const message = await new Response(child.stderr).text()
  expect(message).toContain('runner-kimi/manifest.json: setup failed: backend=cli is refused')
  expect(message).toContain('none of the flags the runner contract needs')
  expect(message).toContain('outside the MCP gateway')
})

test('a runner whose model registry holds placeholder ids is refused at start, naming the runner', async () => {
  const plugins = join(import.meta.dir, '..', 'fixtures', 'plugins', 'placeholder')
  const child = spawnMain({ SWITCHBOARD_PLUGIN_PATHS: plugins, SWITCHBOARD_DATA_DIR: mkdtempSync(join(tmpdir(), 'switchboard-placeholder-')) })
  expect(await child.exited).toBe(1)
  expect(await new Response(child.stderr).text()).toContain('Runner "guesswork" is refused: its model registry holds unconfirmed placeholder ids (maybe)')
})
