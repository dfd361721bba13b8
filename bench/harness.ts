/**
 * What bench/crud.ts and bench/auth.ts share: the BENCH_* settings, a throwaway database, seeding through the api,
 * server processes (bench/crud-server.ts), wrk, and the report table. Not a benchmark by itself.
 */
import { recordFigure } from './results.ts'
import postgres from 'postgres'
import type { OpenAPIHono } from '@hono/zod-openapi'
import type { ApiEnv } from '../src/http/env.ts'
import { loadConfig, type Config } from '../src/config.ts'
import { openPostgres } from '../src/db/connect.ts'
import { silentLogger } from '../src/logger.ts'
import { createPlatform } from '../src/platform.ts'

export type Env = Record<string, string | undefined>

export function fail(message: string): never {
  console.error(message)
  process.exit(1)
}

/** The setting `name` of the environment, or `fallback`; a value not matching `pattern` stops the benchmark, saying so. */
export function setting(name: string, fallback: string, pattern: RegExp): string {
  const value = process.env[name] || fallback
  if (!pattern.test(value)) fail(`${name}=${value} is not valid (e.g. ${fallback})`)
  return value
}

export const ADMIN_URL = setting('BENCH_DATABASE_URL', 'postgres://postgres@127.0.0.1:5432/postgres', /^postgres(ql)?:\/\//)
export const THREADS = setting('BENCH_THREADS', '2', /^[1-9]\d*$/)
export const CONNECTIONS = setting('BENCH_CONNECTIONS', '32', /^[1-9]\d*$/)
export const DURATION = setting('BENCH_DURATION', '10s', /^[1-9]\d*[smh]?$/)
export const WARMUP = setting('BENCH_WARMUP', '3s', /^[1-9]\d*[smh]?$/)
export const POOL = setting('BENCH_POOL', '10', /^[1-9]\d*$/)
export const ROUNDS = Number(setting('BENCH_ROUNDS', '3', /^[1-9]\d*$/))

export interface Workload {
  name: string
  path: string
  /** The body the api answered during seeding; every server must answer it byte for byte. */
  expected: string
}

export interface Result {
  requestsPerSecond: number
  p50: number
  p99: number
  socketErrors?: string
}

/** One server process to measure: its row label, its bench/crud-server.ts mode and arguments, the header wrk sends. */
export interface Server {
  label: string
  mode: string
  args?: string[]
  /** One `Name: value` request header, sent by the check and by wrk. */
  header: string
}

// Every child is killed on Ctrl-C, since process.exit() would leave a server running.
const children = new Set<Bun.Subprocess>()

function spawn(cmd: string[], env?: Env) {
  const proc = Bun.spawn(cmd, { stdout: 'pipe', stderr: 'inherit', env })
  children.add(proc)
  void proc.exited.then(() => children.delete(proc))
  return proc
}

export async function expectStatus(response: Response, status: number, what: string): Promise<Response> {
  if (response.status !== status) throw new Error(`${what} failed: ${response.status} ${await response.text()}`)
  return response
}

/**
 * Runs `body` against a fresh database sb_bench_<random>, with the environment a server needs to use it (the api
 * throttle configured out of the way, since it would otherwise answer 429; its middleware still runs). The
 * database is dropped at the end, on failure and on Ctrl-C.
 */
export async function withDatabase(description: string, body: (env: Env) => Promise<void>): Promise<void> {
  const admin = postgres(ADMIN_URL, { max: 1, onnotice: () => {} })
  const name = `sb_bench_${crypto.randomUUID().replaceAll('-', '').slice(0, 12)}`
  const url = new URL(ADMIN_URL)
  url.pathname = `/${name}`
  const env: Env = {
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
        `database ${name}, ${description}`,
    )
    await body(env)
  } finally {
    await dropDatabase()
  }
}

export interface SeedingApi {
  api: OpenAPIHono<ApiEnv>
  config: Config
  /** Signs in as the first superadmin; the session cookie's `name=value`. */
  signIn(): Promise<string>
}

export const JSON_HEADERS = { 'content-type': 'application/json', accept: 'application/json' }

/** Builds the api in this process, as src/main.ts does, for the duration of `body`, to seed through it. */
export async function withApi<T>(env: Env, body: (seeding: SeedingApi) => Promise<T>): Promise<T> {
  const config = loadConfig(env)
  const store = openPostgres(config.databaseUrl!, Number(POOL))
  // Closed as well as the store: its bus, locks, vault socket and timers would keep the benchmark from exiting.
  let platform: Awaited<ReturnType<typeof createPlatform>> | undefined
  try {
    platform = await createPlatform(config, store, silentLogger)
    const { api } = platform
    const signIn = async () => {
      const login = await api.request('/auth/login', {
        method: 'POST',
        headers: JSON_HEADERS,
        body: JSON.stringify({ username: 'admin', password: config.initialAdmin.password }),
      })
      return (await expectStatus(login, 200, 'signing in')).headers.get('set-cookie')!.split(';')[0]!
    }
    return await body({ api, config, signIn })
  } finally {
    await platform?.close()
    await store.close()
  }
}

/**
 * Seeds `count` agents through the api itself, so the rows are exactly what the api writes. Answers the first.
 * `headers` carry the credential.
 */
export async function seedAgents(
  api: OpenAPIHono<ApiEnv>,
  headers: Record<string, string>,
  count: number,
): Promise<{ id: string; company_id: string }> {
  let first: { id: string; company_id: string } | undefined
  for (let i = 1; i <= count; i++) {
    const body = {
      name: `agent-${i}`,
      description: `Benchmark agent number ${i}.`,
      // Every fourth is off, so a filter has rows to skip and still matches more than 50.
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
  return first!
}

/** The workloads, each with the body the api answers for its path. */
export async function workloadsOf(
  api: OpenAPIHono<ApiEnv>,
  headers: Record<string, string>,
  paths: Record<string, string>,
): Promise<Workload[]> {
  return Promise.all(
    Object.entries(paths).map(async ([name, path]) => {
      const response = await expectStatus(await api.request(path, { headers }), 200, `reading ${path}`)
      return { name, path, expected: await response.text() }
    }),
  )
}

/**
 * Bun's flags that make a server write a CPU profile of its life (as markdown, grep-friendly) into
 * BENCH_CPU_PROF_DIR when it exits; none when that is unset.
 */
export function profileFlags(label: string): string[] {
  const dir = process.env.BENCH_CPU_PROF_DIR
  if (!dir) return []
  return ['--cpu-prof', '--cpu-prof-md', `--cpu-prof-dir=${dir}`, `--cpu-prof-name=${label}-${Date.now()}`]
}

/** Starts a bench/crud-server.ts process and waits for the port it prints. */
export async function startServer(server: Server, env: Env) {
  const script = new URL('./crud-server.ts', import.meta.url).pathname
  const proc = spawn([process.execPath, ...profileFlags(server.label), script, server.mode, ...(server.args ?? [])], env)
  const reader = proc.stdout.getReader()
  const decoder = new TextDecoder()
  let text = ''
  while (!text.includes('\n')) {
    const { done, value } = await reader.read()
    if (done) throw new Error(`the ${server.label} server exited before printing its port`)
    text += decoder.decode(value, { stream: true })
  }
  reader.releaseLock()
  const stop = async () => {
    proc.kill()
    await proc.exited
  }
  return { base: `http://127.0.0.1:${Number.parseInt(text, 10)}`, stop }
}

function headerPair(header: string): [string, string] {
  const colon = header.indexOf(':')
  return [header.slice(0, colon).trim(), header.slice(colon + 1).trim()]
}

/** A server answering differently from the api during seeding would make the comparison meaningless. */
async function check(server: Server, url: string, expected: string): Promise<void> {
  const response = await fetch(url, { headers: [headerPair(server.header)] })
  const body = await response.text()
  if (response.status !== 200 || body !== expected) {
    throw new Error(`the ${server.label} server answers ${url} with ${response.status}, not the api's body:\n${body.slice(0, 500)}`)
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

function wrkCommand(url: string, header: string, duration: string): string[] {
  return ['wrk', `-t${THREADS}`, `-c${CONNECTIONS}`, `-d${duration}`, '--latency', '-H', header, url]
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

/**
 * Runs each server in its own process, one after the other; for each workload checks the body, warms up, then
 * measures. This is done ROUNDS times, the servers' order flipped each round, so that drift on a shared machine
 * (caches, clock speed, neighbours) does not favour one of them; each server's result is its median round.
 * Results are keyed `<workload> <server label>`.
 */
export async function measure(servers: readonly Server[], workloads: readonly Workload[], env: Env): Promise<Map<string, Result>> {
  if (!Bun.which('wrk')) fail('wrk is not installed. Install it with: apt-get install -y wrk')
  const rounds = new Map<string, Result[]>()
  for (let round = 1; round <= ROUNDS; round++) {
    for (const server of round % 2 === 1 ? servers : [...servers].reverse()) {
      console.log(`round ${round}, ${server.label}:`)
      const running = await startServer(server, env)
      try {
        for (const workload of workloads) {
          const target = running.base + workload.path
          await check(server, target, workload.expected)
          await wrk(wrkCommand(target, server.header, WARMUP))
          const measured = wrkCommand(target, server.header, DURATION)
          const result = await wrk(measured)
          console.log(`  ${workload.name}: ${result.requestsPerSecond.toFixed(0)} req/s  ${shellLine(measured)}`)
          const key = `${workload.name} ${server.label}`
          rounds.set(key, [...(rounds.get(key) ?? []), result])
        }
      } finally {
        await running.stop()
      }
    }
  }
  const median = (results: Result[]) => [...results].sort((a, b) => a.requestsPerSecond - b.requestsPerSecond)[Math.floor(results.length / 2)]!
  return new Map([...rounds].map(([key, results]) => [key, median(results)]))
}

function row(cells: string[]): string {
  const widths = [12, 12, 9, 9, 9]
  return cells.map((cell, i) => cell.padEnd(widths[i] ?? 0)).join(' ').trimEnd()
}

/** The comparison a benchmark makes: `subject` req/s ÷ `reference` req/s, at least `target`. */
export interface Comparison {
  reference: string
  subject: string
  target: number
}

/**
 * The table (a row per workload and server, the subject's with its ratio to the reference) and a verdict per
 * workload; with a single workload the verdict does not name it.
 */
export function report(workloads: readonly Workload[], servers: readonly Server[], results: Map<string, Result>, comparison: Comparison, bench = 'crud'): void {
  const { reference, subject, target } = comparison
  console.log()
  console.log(`median of ${ROUNDS} round(s):`)
  console.log(row(['workload', 'server', 'req/s', 'p50', 'p99']))
  const verdicts: string[] = []
  for (const workload of workloads) {
    const base = results.get(`${workload.name} ${reference}`)!
    for (const { label } of servers) {
      const r = results.get(`${workload.name} ${label}`)!
      const ratio = r.requestsPerSecond / base.requestsPerSecond
      const cells = [workload.name, label, r.requestsPerSecond.toFixed(0), `${r.p50.toFixed(2)}ms`, `${r.p99.toFixed(2)}ms`]
      if (label === subject) {
        cells.push(`ratio ${ratio.toFixed(2)}x`)
        const prefix = workloads.length > 1 ? `${workload.name}: ` : ''
        verdicts.push(
          `${prefix}${subject} ${r.requestsPerSecond.toFixed(0)} req/s ÷ ${reference} ${base.requestsPerSecond.toFixed(0)} req/s = ` +
            `${ratio.toFixed(2)}× (same run); target ≥ ${target}×: ${ratio >= target ? 'met' : 'not met'}`,
        )
        recordFigure({
          bench,
          path: workload.name,
          figure: r.requestsPerSecond,
          baseline: base.requestsPerSecond,
          unit: 'req/s',
          ratio: `${ratio.toFixed(2)}×`,
          target: `≥ ${target}×`,
          met: ratio >= target,
        })
      }
      if (r.socketErrors) cells.push(`socket errors: ${r.socketErrors}`)
      console.log(row(cells))
    }
  }
  console.log()
  for (const verdict of verdicts) console.log(verdict)
}
