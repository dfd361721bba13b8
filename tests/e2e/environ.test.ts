import { afterEach, expect, test } from 'bun:test'
import { existsSync, mkdtempSync, readdirSync, readFileSync, readlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createPostgresDatabase, databaseEnv, TEST_DATABASE_URL } from '../helpers/database.ts'
import { untilReady } from '../helpers/main-process.ts'

// What any process of the same user can read about another: /proc/<pid>/environ and /proc/<pid>/cmdline.
const onLinux = process.platform === 'linux'
const MAIN = join(import.meta.dir, '..', '..', 'src', 'main.ts')
const unique = crypto.randomUUID()
const SECRETS = {
  INTERNAL_API_SECRET: `internal-${unique}`,
  SWITCHBOARD_MASTER_KEY: `master-key-${unique}`,
  SWITCHBOARD_ADMIN_PASSWORD: `admin-${unique}`,
  SWITCHBOARD_PLUGIN_RUNNER_OPENAI_API_KEY: `sk-${unique}`,
}

interface Running {
  process: Bun.Subprocess<'ignore', 'pipe', 'pipe'>
  api: string
  dataDir: string
}

/** A fresh data directory (and database, on PostgreSQL), so the admin password of this start is the one that counts. */
async function freshPlace(): Promise<Record<string, string>> {
  const dataDir = mkdtempSync(join(tmpdir(), 'switchboard-environ-'))
  const database = TEST_DATABASE_URL ? await createPostgresDatabase() : undefined
  if (database) drops.push(database.drop)
  return { SWITCHBOARD_DATA_DIR: dataDir, ...(database ? databaseEnv(database) : {}) }
}

function spawnMain(env: Record<string, string>) {
  const child = Bun.spawn([process.execPath, MAIN], {
    env: { PATH: process.env.PATH ?? '', SWITCHBOARD_API_PORT: '0', SWITCHBOARD_ADMIN_PORT: '0', ...env },
    stdin: 'ignore',
    stdout: 'pipe',
    stderr: 'pipe',
  })
  children.add(child)
  return child
}

/** Starts the server as `npm start` does and waits for it to print its addresses. */
async function start(env: Record<string, string>): Promise<Running> {
  const child = spawnMain(env)
  return { process: child, api: (await untilReady(child)).api, dataDir: env.SWITCHBOARD_DATA_DIR! }
}

// Servers a failed test left running are stopped, so none outlives the suite.
const children = new Set<Bun.Subprocess>()
const drops: (() => Promise<void>)[] = []
afterEach(async () => {
  for (const child of children) {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM')
    await child.exited
  }
  children.clear()
  for (const drop of drops.splice(0)) await drop()
})

function stop(server: Running, signal: 'SIGTERM' | 'SIGINT'): Promise<number> {
  server.process.kill(signal)
  return server.process.exited
}

/** Whether the process holds the socket listening on the port, as `ss -ltnp` would tell. */
function listensOn(pid: number, port: number): boolean {
  const hexPort = `:${port.toString(16).toUpperCase().padStart(4, '0')}`
  const inodes = ['/proc/net/tcp', '/proc/net/tcp6']
    .filter((table) => existsSync(table))
    .flatMap((table) => readFileSync(table, 'utf8').trim().split('\n').slice(1))
    .map((line) => line.trim().split(/\s+/))
    .filter((fields) => fields[1]!.endsWith(hexPort) && fields[3] === '0A')
    .map((fields) => `socket:[${fields[9]}]`)
  const held = readdirSync(`/proc/${pid}/fd`).map((fd) => {
    try {
      return readlinkSync(`/proc/${pid}/fd/${fd}`)
    } catch {
      return ''
    }
  })
  return inodes.some((inode) => held.includes(inode))
}

const internalPing = (server: Running, secret: string) =>
  fetch(`${server.api}/api/internal/ping`, { headers: { authorization: `Bearer ${secret}` } })

const signIn = (server: Running, password: string) =>
  fetch(`${server.api}/auth/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', accept: 'application/json' },
    body: JSON.stringify({ username: 'admin', password }),
  })

test.skipIf(!onLinux)('the secrets reach the platform but not its environment block or command line', async () => {
  const place = await freshPlace()
  const server = await start({ ...place, ...SECRETS })
  const pid = server.process.pid
  const environ = readFileSync(`/proc/${pid}/environ`, 'utf8')
  const cmdline = readFileSync(`/proc/${pid}/cmdline`, 'utf8')
  for (const value of [...Object.values(SECRETS), ...(place.DATABASE_URL ? [place.DATABASE_URL] : [])]) {
    expect(environ).not.toContain(value)
    expect(cmdline).not.toContain(value)
  }
  const secretNames = /^(INTERNAL_API_SECRET|DATABASE_URL|SWITCHBOARD_(MASTER_KEY|ADMIN_PASSWORD|PLUGIN_\w+))=/
  expect(environ.split('\0').filter((entry) => secretNames.test(entry))).toEqual([])
  // The same command line, run by the very process that was spawned: whoever started it can still signal it.
  expect(cmdline.split('\0').filter(Boolean)).toEqual([process.execPath, MAIN])
  expect(listensOn(pid, Number(new URL(server.api).port))).toBe(true)

  expect((await internalPing(server, SECRETS.INTERNAL_API_SECRET)).status).toBe(200)
  expect((await internalPing(server, `wrong-${unique}`)).status).toBe(401)
  expect((await signIn(server, SECRETS.SWITCHBOARD_ADMIN_PASSWORD)).status).toBe(200)
  // With the master key given, no key file is made.
  expect(existsSync(join(server.dataDir, 'master.key'))).toBe(false)
  expect(await stop(server, 'SIGTERM')).toBe(0)
}, 90_000)

test.skipIf(!onLinux)('NAME_FILE gives a secret from a file, trailing newline trimmed, and Ctrl-C still stops it cleanly', async () => {
  const place = await freshPlace()
  const files = mkdtempSync(join(tmpdir(), 'switchboard-secrets-'))
  const secretFile = (name: string, content: string) => {
    writeFileSync(join(files, name), content, { mode: 0o600 })
    return join(files, name)
  }
  const server = await start({
    ...place,
    INTERNAL_API_SECRET_FILE: secretFile('internal', `${SECRETS.INTERNAL_API_SECRET}\n`),
    SWITCHBOARD_ADMIN_PASSWORD_FILE: secretFile('admin', `${SECRETS.SWITCHBOARD_ADMIN_PASSWORD}\n`),
    SWITCHBOARD_MASTER_KEY_FILE: secretFile('master', SECRETS.SWITCHBOARD_MASTER_KEY),
  })
  const environ = readFileSync(`/proc/${server.process.pid}/environ`, 'utf8')
  for (const value of [SECRETS.INTERNAL_API_SECRET, SECRETS.SWITCHBOARD_ADMIN_PASSWORD, SECRETS.SWITCHBOARD_MASTER_KEY]) {
    expect(environ).not.toContain(value)
  }
  expect((await internalPing(server, SECRETS.INTERNAL_API_SECRET)).status).toBe(200)
  expect((await signIn(server, SECRETS.SWITCHBOARD_ADMIN_PASSWORD)).status).toBe(200)
  expect(existsSync(join(server.dataDir, 'master.key'))).toBe(false)
  expect(await stop(server, 'SIGINT')).toBe(0)
}, 90_000)

test('NAME with NAME_FILE, or a file that cannot be read, stops the start naming the variables and the path', async () => {
  const place = await freshPlace()
  const secretFile = join(mkdtempSync(join(tmpdir(), 'switchboard-secrets-')), 'internal')
  writeFileSync(secretFile, SECRETS.INTERNAL_API_SECRET)
  const missing = join(tmpdir(), `no-such-key-${unique}`)
  const child = spawnMain({
    ...place,
    INTERNAL_API_SECRET: SECRETS.INTERNAL_API_SECRET,
    INTERNAL_API_SECRET_FILE: secretFile,
    SWITCHBOARD_MASTER_KEY_FILE: missing,
  })
  expect(await child.exited).toBe(1)
  const message = await new Response(child.stderr).text()
  expect(message).toContain('INTERNAL_API_SECRET and INTERNAL_API_SECRET_FILE are both set')
  expect(message).toContain(`SWITCHBOARD_MASTER_KEY_FILE: cannot read ${missing}`)
  expect(message).not.toContain(SECRETS.INTERNAL_API_SECRET)
}, 30_000)
