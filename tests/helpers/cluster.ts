import { afterAll, beforeAll } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { createPostgresDatabase, databaseEnv, TEST_DATABASE_URL } from './database.ts'
import { untilReady } from './main-process.ts'
import { freePort } from './ports.ts'
import type { Principal, Reply } from './platform.ts'
import type { CallBody } from './typed-call.ts'

/**
 * Several real platform processes (`bun src/main.ts`, as `npm start` runs it) on one PostgreSQL database, behind
 * a round-robin reverse proxy in the test process: what a deployment scaled out behind a load balancer looks like.
 */

const MAIN = join(import.meta.dir, '..', '..', 'src', 'main.ts')

/** Why the cluster suites skip without PostgreSQL: PGlite is one process's embedded database, it cannot be shared. */
export const CLUSTER_NEEDS_POSTGRES = 'multi-process tests need PostgreSQL (TEST_DATABASE_URL); CI runs them there'

export const CLUSTER_ADMIN_PASSWORD = 'cluster-admin-password'
// One vault key for every process, so a secret sealed by one is opened by another (32 characters at least).
const MASTER_KEY = 'scale-out-tests-master-key-shared-by-all-processes'
// Stdio MCP servers run in bubblewrap unless told otherwise; where it is missing they run unsandboxed, as in the
// in-process suites (tests/helpers/platform.ts).
const HAS_BWRAP = Bun.which('bwrap') !== null

/** One platform process of the cluster. */
export interface PlatformProcess {
  /** Its place in start order, which is also its place in the proxy's rotation. */
  index: number
  /** Its own api base URL (no trailing slash), for aiming a request at this process alone. */
  api: string
  admin: string
  pid: number
  /** What it printed so far, stdout then stderr, for a failure's report. */
  output(): string
}

/** One request the proxy passed on: to which process, and what it answered. */
export interface Forwarded {
  backend: number
  method: string
  path: string
  /** Its Mcp-Session-Id header, if any: which process served which request of an MCP session. */
  session: string | null
  /** Known once the process has answered the headers; 502 when it could not be reached. */
  status?: number
}

/** A user the tests act as: a Principal (ids and a personal API token), and the password they sign in with. */
export interface Member extends Principal {
  password: string
}

/** A user made through the API who has not signed in yet (so has no token). */
export interface NewUser {
  userId: string
  username: string
  password: string
}

export interface CallOptions {
  /** Who calls with their API token: the superadmin by default, null for nobody (or when `cookie` is given). */
  as?: Principal | null
  /** A session cookie (`name=value`) instead of a token. */
  cookie?: string
  json?: unknown
  headers?: Record<string, string>
}

export interface Cluster {
  /** The round-robin proxy's base URL: each request goes to the next process in turn. */
  url: string
  processes: PlatformProcess[]
  /** The superadmin the first start created (owner of the `default` company), with an API token. */
  admin: Member
  /** Every request the proxy has passed on, in order of arrival. */
  forwarded: Forwarded[]
  /** A request to `base` (the proxy's url or one process's api), its body parsed when it is JSON. */
  call<const Method extends string, const Path extends string>(base: string, method: Method, path: Path, options?: CallOptions): Promise<Reply<CallBody<Method, Path>>>
  /** POST /auth/login as JSON: the raw answer, so a test can look at refusals too. */
  signIn(base: string, username: string, password: string): Promise<Response>
  /** A session cookie for `user`, signing in through the proxy; fails the test when the sign-in does. */
  sessionCookie(user: Pick<NewUser, 'username' | 'password'>): Promise<string>
  /** A member of the default company, made by the superadmin through the API; they never signed in. */
  createUser(): Promise<NewUser>
  /** A member of the default company who signed in and made themselves an API token, all through the API. */
  addMember(): Promise<Member>
  /** Every process's output, labelled: for the report of a failed test. */
  output(): string
  /** SIGTERM to every process, waits for them, stops the proxy, drops the database. */
  stop(): Promise<void>
}

export interface ClusterOptions {
  processes?: number
  /** More environment for every process (rates, plugin paths…). */
  env?: Record<string, string>
}

let serial = 0
const unique = () => `${Date.now().toString(36)}${(serial++).toString(36)}`

/** Starts one `bun src/main.ts` and waits until it has printed its addresses. */
async function startProcess(index: number, env: Record<string, string>): Promise<PlatformProcess & { child: Bun.Subprocess<'ignore', 'pipe', 'pipe'>; dataDir: string }> {
  // Each process has its own data directory (key file, lock, plugin state); the database is what they share.
  const dataDir = mkdtempSync(join(tmpdir(), `switchboard-cluster-${index}-`))
  const child = Bun.spawn([process.execPath, MAIN], {
    env: {
      PATH: process.env.PATH ?? '',
      SWITCHBOARD_DATA_DIR: dataDir,
      // Real ports, not 0: the configuration derives the base URLs (and so the Origins it accepts) from them.
      SWITCHBOARD_API_PORT: String(freePort()),
      SWITCHBOARD_ADMIN_PORT: String(freePort()),
      SWITCHBOARD_ADMIN_PASSWORD: CLUSTER_ADMIN_PASSWORD,
      SWITCHBOARD_MASTER_KEY: MASTER_KEY,
      ...(HAS_BWRAP ? {} : { SWITCHBOARD_MCP_SANDBOX: 'none' }),
      ...env,
    },
    stdin: 'ignore',
    stdout: 'pipe',
    stderr: 'pipe',
  })
  let started
  try {
    started = await untilReady(child)
  } catch (error) {
    rmSync(dataDir, { recursive: true, force: true })
    throw new Error(`platform process ${index} did not start: ${(error as Error).message}`, { cause: error })
  }
  return {
    index,
    api: started.api,
    admin: started.admin,
    pid: child.pid,
    output: started.output,
    child,
    dataDir,
  }
}

/**
 * A reverse proxy that hands each request to the next backend in turn. Bodies stream both ways (an NDJSON turn or
 * an MCP event stream is passed on as it is written, never buffered), and a client that goes away cancels the
 * request to the backend, as a real load balancer does.
 *
 * The platform takes the caller's address from the socket (src/http/client-address.ts trusts no forwarded
 * header), so every request through the proxy comes from 127.0.0.1, as every request of the tests would anyway.
 * X-Forwarded-For is set all the same, as a load balancer sets it, for when the platform learns to trust one.
 */
function startProxy(backends: readonly string[]) {
  const forwarded: Forwarded[] = []
  let next = 0
  const server = Bun.serve({
    hostname: '127.0.0.1',
    port: 0,
    // As long as Bun allows: an MCP event stream or a slow turn may be quiet for a while.
    idleTimeout: 255,
    async fetch(request, server) {
      const backend = next++ % backends.length
      const url = new URL(request.url)
      const entry: Forwarded = { backend, method: request.method, path: url.pathname, session: request.headers.get('mcp-session-id') }
      forwarded.push(entry)
      const headers = new Headers(request.headers)
      headers.delete('host') // the backend's own, set by fetch
      const peer = server.requestIP(request)?.address
      if (peer) headers.set('x-forwarded-for', [request.headers.get('x-forwarded-for'), peer].filter(Boolean).join(', '))
      const hasBody = request.method !== 'GET' && request.method !== 'HEAD'
      try {
        const response = await fetch(`${backends[backend]}${url.pathname}${url.search}`, {
          method: request.method,
          headers,
          body: hasBody ? request.body : undefined,
          duplex: 'half',
          redirect: 'manual',
          signal: request.signal,
        } as RequestInit)
        entry.status = response.status
        // Handing back the backend's response as it is streams its body to the client.
        return response
      } catch (error) {
        entry.status = 502
        return new Response(`proxy: backend ${backend} failed: ${(error as Error).message}`, { status: 502 })
      }
    },
  })
  return { url: `http://127.0.0.1:${server.port}`, forwarded, stop: () => server.stop(true) }
}

async function reply<T>(response: Response): Promise<Reply<T>> {
  const text = await response.text()
  const type = response.headers.get('content-type') ?? ''
  return { status: response.status, headers: response.headers, body: /application\/(?:[\w.-]+\+)?json/.test(type) && text ? JSON.parse(text) : text }
}

function cookieOf(response: Response): string {
  const header = response.headers.get('set-cookie')
  if (!header) throw new Error(`the sign-in answered ${response.status} without a session cookie`)
  return header.split(';')[0]!
}

/**
 * Starts the cluster: one database, the first process alone (it migrates and creates the superadmin, the default
 * company and the demo agent), then the others together, then the proxy; signs in as the superadmin and makes
 * them an API token. Anything that fails on the way stops what had started.
 */
export async function startCluster({ processes = 3, env = {} }: ClusterOptions = {}): Promise<Cluster> {
  const database = await createPostgresDatabase()
  const started: Awaited<ReturnType<typeof startProcess>>[] = []
  let proxy: ReturnType<typeof startProxy> | undefined

  async function stop(): Promise<void> {
    const problems: string[] = []
    await Promise.all(
      started.map(async (p) => {
        p.child.kill('SIGTERM')
        // A clean stop answers the requests in flight, waits up to 5 s for MCP event streams, then exits 0.
        const code = await Promise.race([p.child.exited, Bun.sleep(20_000).then(() => 'timeout' as const)])
        if (code === 'timeout') {
          p.child.kill('SIGKILL')
          await p.child.exited
          problems.push(`process ${p.index} did not stop within 20 s of SIGTERM:\n${p.output()}`)
        } else if (code !== 0) {
          problems.push(`process ${p.index} exited with ${code}:\n${p.output()}`)
        }
        rmSync(p.dataDir, { recursive: true, force: true })
      }),
    )
    proxy?.stop()
    await database.drop()
    if (problems.length > 0) throw new Error(problems.join('\n\n'))
  }

  try {
    const processEnv = { ...databaseEnv(database), ...env }
    started.push(await startProcess(0, processEnv))
    const rest = await Promise.allSettled(Array.from({ length: processes - 1 }, (_, i) => startProcess(i + 1, processEnv)))
    for (const outcome of rest) if (outcome.status === 'fulfilled') started.push(outcome.value)
    const failed = rest.find((outcome) => outcome.status === 'rejected')
    if (failed) throw failed.reason
    started.sort((a, b) => a.index - b.index)
    proxy = startProxy(started.map((p) => p.api))
  } catch (error) {
    await stop().catch(() => {})
    throw error
  }
  const url = proxy.url

  async function call<const Method extends string, const Path extends string>(base: string, method: Method, path: Path, options: CallOptions = {}): Promise<Reply<CallBody<Method, Path>>> {
    const headers: Record<string, string> = { ...options.headers }
    if (options.cookie) headers.cookie = options.cookie
    const principal = options.as === undefined && !options.cookie ? cluster.admin : options.as
    if (principal) headers.authorization = `Bearer ${principal.token}`
    let body: string | undefined
    if (options.json !== undefined) {
      body = JSON.stringify(options.json)
      headers['content-type'] ??= 'application/json'
    }
    return reply<CallBody<Method, Path>>(await fetch(`${base}${path}`, { method, headers, body }))
  }

  function signIn(base: string, username: string, password: string): Promise<Response> {
    return fetch(`${base}/auth/login`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json' },
      body: JSON.stringify({ username, password }),
    })
  }

  async function sessionCookie(user: Pick<NewUser, 'username' | 'password'>): Promise<string> {
    const response = await signIn(url, user.username, user.password)
    if (response.status !== 200) throw new Error(`signing in as ${user.username} answered ${response.status}: ${await response.text()}`)
    return cookieOf(response)
  }

  /** A personal API token made with the user's own session (tokens are always their maker's). */
  async function issueToken(cookie: string): Promise<string> {
    const made = await call(url, 'POST', '/api/v1/ApiToken', { cookie, json: { name: 'scale-out tests' } })
    if (made.status !== 201) throw new Error(`making an API token answered ${made.status}: ${JSON.stringify(made.body)}`)
    return made.body.token
  }

  const cluster: Cluster = {
    url,
    processes: started.map(({ child: _, dataDir: __, ...p }) => p),
    admin: undefined as unknown as Member, // set below, before anyone can call
    forwarded: proxy.forwarded,
    call,
    signIn,
    sessionCookie,
    async createUser() {
      const username = `member-${unique()}`
      const password = `password-of-${username}`
      // The superadmin works in the default company, so the new user joins it as a member (User.afterCreate).
      const made = await call(url, 'POST', '/api/v1/User', { json: { email: `${username}@example.com`, username, password } })
      if (made.status !== 201) throw new Error(`creating the user ${username} answered ${made.status}: ${JSON.stringify(made.body)}`)
      return { userId: made.body.id, username, password }
    },
    async addMember() {
      const user = await cluster.createUser()
      const token = await issueToken(await cluster.sessionCookie(user))
      return { ...user, token, companyId: cluster.admin.companyId }
    },
    output: () => started.map((p) => `--- platform process ${p.index} (${p.api}) ---\n${p.output()}`).join('\n'),
    stop,
  }

  try {
    const cookie = await cluster.sessionCookie({ username: 'admin', password: CLUSTER_ADMIN_PASSWORD })
    const token = await issueToken(cookie)
    const me = await call(url, 'GET', '/api/me', { cookie })
    cluster.admin = { userId: me.body.user.id, username: 'admin', password: CLUSTER_ADMIN_PASSWORD, companyId: me.body.company_id, token }
  } catch (error) {
    await stop().catch(() => {})
    throw new Error(`signing in to the cluster failed: ${(error as Error).message}\n${cluster.output()}`, { cause: error })
  }
  return cluster
}

/**
 * A cluster for the enclosing describe block (or file), started before its tests and stopped after them; the
 * tests reach it through the returned accessor. Without PostgreSQL nothing starts (the tests skip).
 */
export function useCluster(options: ClusterOptions = {}): () => Cluster {
  let cluster: Cluster | undefined
  if (TEST_DATABASE_URL) {
    // Three processes start in a few seconds; a loaded CI machine may take longer.
    beforeAll(async () => {
      cluster = await startCluster(options)
    }, 60_000)
    afterAll(async () => {
      const running = cluster
      cluster = undefined
      await running?.stop()
    }, 60_000)
  }
  return () => {
    if (!cluster) throw new Error('the cluster is not running: it starts in beforeAll, so reach it inside a test')
    return cluster
  }
}
