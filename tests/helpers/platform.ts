import { afterAll, beforeAll } from 'bun:test'
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { TOKEN_PREFIX } from '../../src/auth/authenticator.ts'
import { hashSecret, newSecret } from '../../src/auth/secrets.ts'
import { systemClock, type Clock } from '../../src/clock.ts'
import { loadConfig } from '../../src/config.ts'
import type { Store } from '../../src/db/connect.ts'
import type { CompanyRole } from '../../src/db/schema.ts'
import { silentLogger, type Logger } from '../../src/logger.ts'
import { createPlatform, type Platform } from '../../src/platform.ts'
import createClient from 'openapi-fetch'
import type { SpanExporter } from '@opentelemetry/sdk-trace'
import type { Api } from '../../src/admin/api-client.ts'
import type { paths } from '../../src/admin/api-types.ts'
import { freshStore } from './database.ts'
import type { CallBody } from './typed-call.ts'

export const ADMIN_PASSWORD = 'admin-password-for-tests'

export interface Reply<T = unknown> {
  status: number
  headers: Headers
  body: T
}

/** Someone the tests act as: their ids and a personal API token. */
export interface Principal {
  userId: string
  companyId: string | null
  token: string
  username: string
}

export interface CallOptions {
  json?: unknown
  body?: BodyInit
  headers?: Record<string, string>
  /** Who calls: the seeded superadmin by default, null for nobody (no credentials). */
  as?: Principal | null
  /** The peer address the server sees. */
  address?: string
}

export interface TestPlatform extends Platform {
  store: Store
  /** The superadmin the first start created, owner of the `default` company. */
  root: Principal
  /**
   * The API typed by its OpenAPI document, as `as` (the seeded superadmin by default, null for nobody), through
   * openapi-fetch: it refuses at compile time a body or a parameter the document does not allow.
   */
  client(as?: Principal | null, options?: { address?: string }): Api
  /**
   * Any request, hostile ones included (a malformed id, an unknown field, a wrong type), since nothing checks what
   * is sent. What comes back is typed by the document all the same: the body of the route the path matches, as it
   * answers on success (see CallBody); refusals are read with expectProblem.
   */
  call<const Method extends string, const Path extends string>(method: Method, path: Path, options?: CallOptions): Promise<Reply<CallBody<Method, Path>>>
  /** A user with a token, straight into the store (no password hashing, so suites stay fast). */
  createUser(options?: { companyId?: string | null; role?: CompanyRole; superadmin?: boolean; password?: string }): Promise<Principal>
  createCompany(slug?: string): Promise<string>
  close(): Promise<void>
}

/**
 * Stdio MCP servers run in a bubblewrap sandbox, which CI installs. Where it is missing the suites run them
 * unsandboxed, and the sandbox's own tests skip, saying so.
 */
export const HAS_BWRAP = Bun.which('bwrap') !== null
if (!HAS_BWRAP) console.warn('bubblewrap (bwrap) is not installed: stdio MCP servers run unsandboxed in these tests; the sandbox tests skip.')

let serial = 0
const unique = () => `${Date.now().toString(36)}${(serial++).toString(36)}`

/**
 * A platform on a fresh database of its own, or on `store` (two platforms on one PostgreSQL database, as two
 * processes behind a balancer are); either way the platform closes its store when it closes.
 */
export async function startTestPlatform(
  env: Record<string, string> = {},
  clock: Clock = systemClock,
  given?: Store,
  log: Logger = silentLogger,
  traceExporter?: SpanExporter,
): Promise<TestPlatform> {
  const dataDir = mkdtempSync(join(tmpdir(), 'switchboard-test-'))
  const store = given ?? (await freshStore())
  // Suites fire requests far faster than people do; the throttle suite sets its own, tight rate.
  const rate = { SWITCHBOARD_API_RATE_BURST: '100000', SWITCHBOARD_API_RATE_PER_SECOND: '100000' }
  const sandbox = HAS_BWRAP ? {} : { SWITCHBOARD_MCP_SANDBOX: 'none' }
  const config = loadConfig({ SWITCHBOARD_DATA_DIR: dataDir, SWITCHBOARD_ADMIN_PASSWORD: ADMIN_PASSWORD, ...rate, ...sandbox, ...env })
  const platform = await createPlatform(config, store, log, { clock, traceExporter })
  const db = store.db

  async function issueToken(userId: string): Promise<string> {
    const token = newSecret(TOKEN_PREFIX)
    await db.insertInto('api_tokens').values({ id: Bun.randomUUIDv7(), user_id: userId, name: 'tests', token_hash: hashSecret(token), prefix: token.slice(0, 10), expires_at: null, last_used_at: null }).execute()
    return token
  }

  const admin = await db
    .selectFrom('users')
    .innerJoin('company_users', 'company_users.user_id', 'users.id')
    .select(['users.id', 'users.username', 'company_users.company_id'])
    .where('users.is_superadmin', '=', true)
    .executeTakeFirstOrThrow()
  const root: Principal = { userId: admin.id, companyId: admin.company_id, username: admin.username, token: await issueToken(admin.id) }

  return {
    ...platform,
    store,
    root,
    client(as = root, { address = '192.0.2.1' } = {}) {
      return createClient<paths>({
        baseUrl: 'http://localhost',
        headers: as ? { authorization: `Bearer ${as.token}` } : {},
        fetch: (request) => Promise.resolve(platform.api.request(request, undefined, { requestIP: () => ({ address }) })),
      })
    },
    async call(method, path, options = {}) {
      const headers: Record<string, string> = { ...options.headers }
      const principal = options.as === undefined ? root : options.as
      if (principal && !('authorization' in headers) && !('cookie' in headers)) headers.authorization = `Bearer ${principal.token}`
      let body = options.body
      if (options.json !== undefined) {
        body = JSON.stringify(options.json)
        headers['content-type'] ??= 'application/json'
      }
      const env = { requestIP: () => ({ address: options.address ?? '192.0.2.1' }) }
      const response = await platform.api.request(path, { method, headers, body }, env)
      const text = await response.text()
      const type = response.headers.get('content-type') ?? ''
      return { status: response.status, headers: response.headers, body: /application\/(?:[\w.-]+\+)?json/.test(type) && text ? JSON.parse(text) : text }
    },
    async createUser({ companyId = root.companyId, role = 'member', superadmin = false, password } = {}) {
      const id = Bun.randomUUIDv7()
      const username = `user-${unique()}`
      await db
        .insertInto('users')
        .values({ id, email: `${username}@example.com`, username, is_superadmin: superadmin, avatar: null, password_hash: password ? await Bun.password.hash(password) : null })
        .execute()
      if (companyId) await db.insertInto('company_users').values({ id: Bun.randomUUIDv7(), company_id: companyId, user_id: id, role }).execute()
      return { userId: id, companyId, username, token: await issueToken(id) }
    },
    async createCompany(slug = `co-${unique()}`) {
      const id = Bun.randomUUIDv7()
      await db.insertInto('companies').values({ id, name: slug, slug }).execute()
      return id
    },
    async close() {
      try {
        await platform.close()
        await store.close()
      } finally {
        rmSync(dataDir, { recursive: true, force: true })
      }
    },
  }
}

/**
 * Starts something with `start` before the tests of the enclosing describe block (or file) and closes it after
 * them; the tests reach it through the returned accessor. Teardown never hides a test's own failure: the tests'
 * results are reported before afterAll runs, a close that throws is reported as its own failure (naming `what`,
 * with the error as its cause), and a start that failed leaves nothing to close, so its error is the only one.
 */
export function useStarted<T extends { close(): Promise<void> }>(start: () => Promise<T>, what = 'the test platform'): () => T {
  let started: T | undefined
  beforeAll(async () => {
    started = await start()
  })
  afterAll(async () => {
    const running = started
    started = undefined
    if (!running) return
    try {
      await running.close()
    } catch (error) {
      throw new Error(`Closing ${what} failed after the tests had run; their results above stand as reported.`, { cause: error })
    }
  })
  return () => {
    if (!started) throw new Error(`${what} is not running: it starts in beforeAll, so reach it inside a test or a later hook.`)
    return started
  }
}

/** A test platform for the enclosing describe block (or file): `const p = usePlatform()`, then `p().call(...)` in tests. */
export function usePlatform(env: Record<string, string> = {}, clock?: Clock): () => TestPlatform {
  return useStarted(() => startTestPlatform(env, clock))
}
