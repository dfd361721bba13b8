/**
 * CRUD API benchmark: the generic CRUD API (Hono + Kysely, built exactly as src/main.ts builds it) against a
 * no-framework baseline (Bun.serve + postgres.js running the same SQL and returning the same JSON), both on
 * PostgreSQL. A hand-run benchmark, not a test. Target: the API serves at least 0.8x the baseline's requests per
 * second, both measured in the same run.
 *
 * Workloads, each driven by wrk at fixed concurrency with a personal API token (Authorization: Bearer):
 *   get-by-id   GET /api/v1/AgentConfigRecord/{id}                     (one record, with its ETag)
 *   list-50     GET /api/v1/AgentConfigRecord?enabled=eq.true&limit=50 (50 of the 150 enabled agents)
 *
 * It creates a fresh database sb_bench_<random>, seeds 200 agents through the API, then runs each server in its
 * own process (bench/crud-server.ts), one after the other, warming each workload up before measuring it. The
 * API's per-user throttle is configured out of the way (SWITCHBOARD_API_RATE_*), since it would otherwise answer
 * 429; its middleware still runs. The database is dropped at the end, on failure and on Ctrl-C. Takes about a
 * minute with the defaults.
 *
 * Run:  node_modules/.bin/bun bench/crud.ts
 * Needs wrk (apt-get install -y wrk) and a PostgreSQL server whose admin connection may create databases.
 *
 * Environment (defaults in brackets):
 *   BENCH_DATABASE_URL  admin connection [postgres://postgres@127.0.0.1:5432/postgres]
 *   BENCH_THREADS       wrk threads [2]
 *   BENCH_CONNECTIONS   wrk connections, i.e. requests in flight [32]
 *   BENCH_DURATION      measured run per workload and server, in wrk's syntax [10s]
 *   BENCH_WARMUP        unmeasured run before it [3s]
 *   BENCH_POOL          PostgreSQL pool size of both servers [10]
 */
import postgres from 'postgres'
import { loadConfig } from '../src/config.ts'
import { openPostgres } from '../src/db/connect.ts'
import { silentLogger } from '../src/logger.ts'
import { createPlatform } from '../src/platform.ts'

const TARGET = 0.8
const AGENTS = 200
const MODES = ['baseline', 'switchboard'] as const
type Mode = (typeof MODES)[number]

function setting(name: string, fallback: string, pattern: RegExp): string {
  const value = process.env[name] || fallback
  if (!pattern.test(value)) fail(`${name}=${value} is not valid (e.g. ${fallback})`)
  return value
}

const ADMIN_URL = setting('BENCH_DATABASE_URL', 'postgres://postgres@127.0.0.1:5432/postgres', /^postgres(ql)?:\/\//)
const THREADS = setting('BENCH_THREADS', '2', /^[1-9]\d*$/)
const CONNECTIONS = setting('BENCH_CONNECTIONS', '32', /^[1-9]\d*$/)
const DURATION = setting('BENCH_DURATION', '10s', /^[1-9]\d*[smh]?$/)
const WARMUP = setting('BENCH_WARMUP', '3s', /^[1-9]\d*[smh]?$/)
const POOL = setting('BENCH_POOL', '10', /^[1-9]\d*$/)

interface Workload {
  name: string
  path: string
  /** The body the api answered during seeding; both servers must answer it byte for byte. */
  expected: string
}

interface Seeded {
  companyId: string
  token: string
  workloads: Workload[]
}

interface Result {
  requestsPerSecond: number
  p50: number
  p99: number
  socketErrors?: string
}

function fail(message: string): never {
  console.error(message)
  process.exit(1)
}

// Every child is killed on Ctrl-C, since process.exit() would leave a server running.
const children = new Set<Bun.Subprocess>()

function spawn(cmd: string[], env?: Record<string, string | undefined>) {
  const proc = Bun.spawn(cmd, { stdout: 'pipe', stderr: 'inherit', env })
  children.add(proc)
  void proc.exited.then(() => children.delete(proc))
  return proc
}

async function expectStatus(response: Response, status: number, what: string): Promise<Response> {
  if (response.status !== status) throw new Error(`${what} failed: ${response.status} ${await response.text()}`)
  return response
}

/**
 * Signs in as the first superadmin, makes an API token, and seeds the agents through the api itself, so the
 * rows are exactly what the api writes.
 */
async function seed(env: Record<string, string | undefined>): Promise<Seeded> {
  const config = loadConfig(env)
  const store = openPostgres(config.databaseUrl!, Number(POOL))
  try {
    const { api } = await createPlatform(config, store, silentLogger)
    const json = { 'content-type': 'application/json', accept: 'application/json' }
    const login = await api.request('/auth/login', {
      method: 'POST',
      headers: json,
      body: JSON.stringify({ username: 'admin', password: config.initialAdmin.password }),
    })
    const cookie = (await expectStatus(login, 200, 'signing in')).headers.get('set-cookie')!.split(';')[0]!
    const made = await api.request('/api/v1/ApiToken', { method: 'POST', headers: { ...json, cookie }, body: '{"name":"bench"}' })
    const { token } = (await (await expectStatus(made, 201, 'making an API token')).json()) as { token: string }
    const headers = { ...json, authorization: `Bearer ${token}` }

    let first: { id: string; company_id: string } | undefined
    for (let i = 1; i <= AGENTS; i++) {
      const body = {
        name: `agent-${i}`,
        description: `Benchmark agent number ${i}.`,
        // Every fourth is off, so the filter has rows to skip and still matches more than 50.
        enabled: i % 4 !== 0,
        personality: 'You answer questions about our product, briefly and kindly. '.repeat(4),
        model: 'echo-1',
        channels: { webchat: { enabled: true } },
        plugins: { enabled: ['planning'] },
      }
      const response = await api.request('/api/v1/AgentConfigRecord', { method: 'POST', headers, body: JSON.stringify(body) })
      const created = (await (await expectStatus(response, 201, 'seeding')).json()) as { id: string; company_id: string }
      first ??= created
    }
    const paths = {
      'get-by-id': `/api/v1/AgentConfigRecord/${first!.id}`,
      'list-50': '/api/v1/AgentConfigRecord?enabled=eq.true&limit=50',
    }
    const workloads = await Promise.all(
      Object.entries(paths).map(async ([name, path]) => {
        const response = await expectStatus(await api.request(path, { headers }), 200, `reading ${path}`)
        return { name, path, expected: await response.text() }
      }),
    )
    return { companyId: first!.company_id, token, workloads }
  } finally {
    await store.close()
  }
}

/** Starts a server process and waits for the port it prints. */
async function startServer(mode: Mode, env: Record<string, string | undefined>, seeded: Seeded) {
  const script = new URL('./crud-server.ts', import.meta.url).pathname
  const tokenHash = new Bun.CryptoHasher('sha256').update(seeded.token).digest('hex')
  const proc = spawn([process.execPath, script, mode, ...(mode === 'baseline' ? [seeded.companyId, tokenHash] : [])], env)
  const reader = proc.stdout.getReader()
  const decoder = new TextDecoder()
  let text = ''
  while (!text.includes('\n')) {
    const { done, value } = await reader.read()
    if (done) throw new Error(`the ${mode} server exited before printing its port`)
    text += decoder.decode(value, { stream: true })
  }
  reader.releaseLock()
  const stop = async () => {
    proc.kill()
    await proc.exited
  }
  return { base: `http://127.0.0.1:${Number.parseInt(text, 10)}`, stop }
}

/** A server answering differently from the api during seeding would make the comparison meaningless. */
async function check(mode: Mode, url: string, token: string, expected: string): Promise<void> {
  const response = await fetch(url, { headers: { authorization: `Bearer ${token}` } })
  const body = await response.text()
  if (response.status !== 200 || body !== expected) {
    throw new Error(`the ${mode} server answers ${url} with ${response.status}, not the api's body:\n${body.slice(0, 500)}`)
  }
}

function milliseconds(text: string): number {
  const match = /^([\d.]+)(us|ms|s|m)$/.exec(text)
  if (!match) throw new Error(`unreadable wrk latency "${text}"`)
  return Number(match[1]) * { us: 0.001, ms: 1, s: 1000, m: 60_000 }[match[2] as 'us' | 'ms' | 's' | 'm']
}

function parseWrk(output: string): Result {
  const requestsPerSecond = /^Requests\/sec:\s+([\d.]+)/m.exec(output)?.[1]
  const p50 = /^\s+50%\s+(\S+)/m.exec(output)?.[1]
  const p99 = /^\s+99%\s+(\S+)/m.exec(output)?.[1]
  if (!requestsPerSecond || !p50 || !p99) throw new Error(`unreadable wrk output:\n${output}`)
  // Errors answer fast: counted as requests they would flatter the server.
  const non2xx = /Non-2xx or 3xx responses: (\d+)/.exec(output)?.[1]
  if (non2xx) throw new Error(`${non2xx} responses were not 2xx:\n${output}`)
  return {
    requestsPerSecond: Number(requestsPerSecond),
    p50: milliseconds(p50),
    p99: milliseconds(p99),
    socketErrors: /Socket errors: (.*)/.exec(output)?.[1],
  }
}

function wrkCommand(url: string, token: string, duration: string): string[] {
  return ['wrk', `-t${THREADS}`, `-c${CONNECTIONS}`, `-d${duration}`, '--latency', '-H', `Authorization: Bearer ${token}`, url]
}

/** The command as one pastes it into a shell. */
function shellLine(cmd: string[]): string {
  return cmd.map((arg) => (/^[\w./:=-]+$/.test(arg) ? arg : `'${arg}'`)).join(' ')
}

async function wrk(cmd: string[]): Promise<Result> {
  const proc = spawn(cmd)
  const output = await new Response(proc.stdout).text()
  if ((await proc.exited) !== 0) throw new Error(`wrk failed:\n${output}`)
  return parseWrk(output)
}

function row(cells: string[]): string {
  const widths = [12, 12, 9, 9, 9]
  return cells.map((cell, i) => cell.padEnd(widths[i] ?? 0)).join(' ').trimEnd()
}

function report(workloads: Workload[], results: Map<string, Result>): void {
  console.log()
  console.log(row(['workload', 'server', 'req/s', 'p50', 'p99']))
  const verdicts: string[] = []
  for (const workload of workloads) {
    const baseline = results.get(`${workload.name} baseline`)!
    for (const mode of MODES) {
      const r = results.get(`${workload.name} ${mode}`)!
      const ratio = r.requestsPerSecond / baseline.requestsPerSecond
      const cells = [workload.name, mode, r.requestsPerSecond.toFixed(0), `${r.p50.toFixed(2)}ms`, `${r.p99.toFixed(2)}ms`]
      if (mode === 'switchboard') {
        cells.push(`ratio ${ratio.toFixed(2)}x`)
        verdicts.push(`${workload.name}: switchboard ÷ baseline = ${ratio.toFixed(2)}x, target ${TARGET}x ${ratio >= TARGET ? 'met' : 'NOT met'}`)
      }
      if (r.socketErrors) cells.push(`socket errors: ${r.socketErrors}`)
      console.log(row(cells))
    }
  }
  console.log()
  for (const verdict of verdicts) console.log(verdict)
}

async function main(): Promise<void> {
  if (!Bun.which('wrk')) fail('wrk is not installed. Install it with: apt-get install -y wrk')
  const admin = postgres(ADMIN_URL, { max: 1, onnotice: () => {} })
  const name = `sb_bench_${crypto.randomUUID().replaceAll('-', '').slice(0, 12)}`
  const url = new URL(ADMIN_URL)
  url.pathname = `/${name}`
  const env = {
    ...process.env,
    DATABASE_URL: url.toString(),
    SWITCHBOARD_ADMIN_PASSWORD: crypto.randomUUID(),
    SWITCHBOARD_API_RATE_BURST: '1000000000',
    SWITCHBOARD_API_RATE_PER_SECOND: '1000000000',
    BENCH_POOL: POOL,
  }

  let dropping: Promise<void> | undefined
  const dropDatabase = () => (dropping ??= admin.unsafe(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`).then(() => admin.end()))
  process.once('SIGINT', async () => {
    for (const child of children) child.kill()
    await dropDatabase()
    process.exit(130)
  })

  await admin.unsafe(`CREATE DATABASE ${name}`)
  try {
    const [version] = await admin`SHOW server_version`
    console.log(
      `Bun ${Bun.version}, PostgreSQL ${version?.server_version}, ${navigator.hardwareConcurrency} CPUs, pool ${POOL}, ` +
        `database ${name}, ${AGENTS} agents`,
    )
    const seeded = await seed(env)
    const results = new Map<string, Result>()
    for (const mode of MODES) {
      console.log(`${mode}:`)
      const server = await startServer(mode, env, seeded)
      try {
        for (const workload of seeded.workloads) {
          const target = server.base + workload.path
          await check(mode, target, seeded.token, workload.expected)
          await wrk(wrkCommand(target, seeded.token, WARMUP))
          const measured = wrkCommand(target, seeded.token, DURATION)
          console.log(`  ${workload.name}: ${shellLine(measured)}`)
          results.set(`${workload.name} ${mode}`, await wrk(measured))
        }
      } finally {
        await server.stop()
      }
    }
    report(seeded.workloads, results)
  } finally {
    await dropDatabase()
  }
}

await main()
