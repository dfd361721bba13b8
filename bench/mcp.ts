/**
 * MCP gateway benchmark: tools/call of server-everything's `echo` tool through three paths, in the same run, at
 * concurrency 1 and 16. A hand-run benchmark, not a test.
 *
 *   direct     the MCP SDK client straight to server-everything over stdio: the baseline
 *   gateway    Switchboard's /mcp/everything over Streamable HTTP, with a bearer token
 *   mcp-proxy  the npm peer: `mcp-proxy -- mcp-server-everything` over Streamable HTTP at /mcp
 *   floor      bench/mcp-floor.ts: a bare Streamable HTTP front on the SDK's stdio client, with nothing of a gateway
 *              but the forwarding; what no gateway on the SDK can add less than on this machine, so the p50 target
 *              is only reachable where this is well under it
 *
 * Targets: the gateway adds at most 0.3 ms at p50 over direct at c=1, and answers at least twice the calls/s of
 * mcp-proxy at c=1 and at c=16.
 *
 * Also reported: the CPU time the process in front of server-everything spends per call (gateway, floor,
 * mcp-proxy; all its threads, its upstream apart), read from /proc over each measured run: the work a path does
 * for a call, which its p50 mixes with waiting for the upstream and for the CPU (2 cores shared by every process).
 *
 * Concurrency c is c clients (c sessions) on a path, each calling in a closed loop. The gateway (one upstream per
 * user and server, and all sessions are the same user) and mcp-proxy (one upstream for all sessions) each
 * multiplex them onto a single server-everything process; direct has a process per client, so at c=16 it is a
 * ceiling rather than a like-for-like baseline.
 *
 * The platform runs in a process of its own (bench/mcp-server.ts) on PGlite, as the test suites start it
 * (TEST_DATABASE_URL runs it on PostgreSQL instead), with the MCP throttle configured out of the way; mcp-proxy
 * has a process of its own too, and the clients of every path are in this one. BENCH_CPU_PROF_DIR has the
 * gateway write a CPU profile.
 *
 * Run:  node_modules/.bin/bun bench/mcp.ts
 * Environment (defaults in brackets): BENCH_DURATION  seconds measured per path and round [5];
 *   BENCH_ROUNDS  rounds, the paths' order flipped each round; each figure is its median across rounds [3]
 */
import { recordFigure } from './results.ts'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { ROUNDS, fail, profileFlags } from './harness.ts'

const DURATION_SECONDS = Number(process.env.BENCH_DURATION?.replace(/s$/, '') || 5)
if (!(DURATION_SECONDS > 0)) fail(`BENCH_DURATION=${process.env.BENCH_DURATION} is not a number of seconds (e.g. 5)`)
const CONCURRENCIES = [1, 16]
const WARMUP_CALLS = 200
const TARGET_ADDED_P50_MS = 0.3
const TARGET_RATIO = 2

const MODULES = join(import.meta.dir, '..', 'node_modules')
const EVERYTHING = join(MODULES, '.bin', 'mcp-server-everything')
const MCP_PROXY = join(MODULES, '.bin', 'mcp-proxy')
const PATHS = ['direct', 'floor', 'gateway', 'mcp-proxy'] as const
type PathName = (typeof PATHS)[number]

interface Figures {
  callsPerSecond: number
  p50: number
  p99: number
  /** CPU time of the path's server process per call, in µs; undefined where there is none, or no /proc to read. */
  cpuPerCall?: number
}

/** The process serving each path but direct (whose clients reach server-everything themselves). */
const servers = new Map<PathName, number>()

/** How many clock ticks a second /proc counts in (USER_HZ, 100 on Linux's usual builds). */
const TICKS_PER_SECOND = Number(Bun.spawnSync(['getconf', 'CLK_TCK'], { stderr: 'ignore' }).stdout.toString().trim()) || 100

/** The CPU time (user and system, all threads) a process has used so far, in seconds; undefined without /proc. */
function cpuSeconds(pid: number | undefined): number | undefined {
  if (pid === undefined) return undefined
  try {
    // The name in parentheses may hold spaces: the fields are counted from after it (utime is the 14th field).
    const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]!.split(' ')
    return (Number(fields[11]) + Number(fields[12])) / TICKS_PER_SECOND
  } catch {
    return undefined
  }
}

// Everything started is stopped once, in reverse order: at the end, on failure and on Ctrl-C (process.exit
// alone would leave mcp-proxy and the stdio servers running).
const stops: (() => unknown)[] = []
let stopping: Promise<void> | undefined
const stopAll = () =>
  (stopping ??= (async () => {
    for (const stop of stops.reverse()) await Promise.resolve().then(stop).catch(() => {})
  })())
process.once('SIGINT', async () => {
  await stopAll()
  process.exit(130)
})

const version = async (name: string) => ((await Bun.file(join(MODULES, name, 'package.json')).json()) as { version: string }).version

function percentile(sorted: Float64Array, p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!
}

function median(values: number[]): number {
  return [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!
}

/** A script of bench/ in a process of its own, stopped at the end; answers the JSON line it prints once ready. */
async function startScript<Ready>(name: string, label: string, path: PathName): Promise<Ready> {
  const proc = Bun.spawn([process.execPath, ...profileFlags(label), join(import.meta.dir, name)], { stdout: 'pipe', stderr: 'inherit' })
  servers.set(path, proc.pid)
  stops.push(async () => {
    proc.kill('SIGTERM')
    await proc.exited
  })
  const reader = proc.stdout.pipeThrough(new TextDecoderStream()).getReader()
  let text = ''
  while (!text.includes('\n')) {
    const { value, done } = await reader.read()
    if (done) throw new Error(`bench/${name} exited before it was ready`)
    text += value
  }
  reader.releaseLock()
  return JSON.parse(text.slice(0, text.indexOf('\n'))) as Ready
}

/** The gateway in a process of its own (bench/mcp-server.ts); answers its URL, a token, and its store. */
async function startGateway() {
  const ready = await startScript<{ port: number; token: string; database: string }>('mcp-server.ts', 'gateway', 'gateway')
  return { url: new URL(`http://127.0.0.1:${ready.port}/mcp/everything`), token: ready.token, database: ready.database }
}

/** The floor (bench/mcp-floor.ts), in a process of its own as the gateway is. */
async function startFloor(): Promise<URL> {
  const { port } = await startScript<{ port: number }>('mcp-floor.ts', 'floor', 'floor')
  return new URL(`http://127.0.0.1:${port}/mcp`)
}

/** Starts mcp-proxy on a free port and waits until it answers HTTP (it listens once its upstream is up). */
async function startMcpProxy(): Promise<URL> {
  const probe = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: () => new Response() })
  const port = probe.port
  probe.stop(true)
  // Without its replay store (the gateway keeps none either), which is mcp-proxy's faster setting.
  const command = [MCP_PROXY, '--port', String(port), '--host', '127.0.0.1', '--no-eventStore', '--', EVERYTHING]
  // Its output is not read, so it must not go to a pipe that could fill up and stall it.
  const proc = Bun.spawn(command, { stdout: 'ignore', stderr: 'ignore' })
  servers.set('mcp-proxy', proc.pid)
  // SIGTERM lets it shut down gracefully, which also ends its server-everything.
  stops.push(async () => {
    proc.kill('SIGTERM')
    await proc.exited
  })
  const url = new URL(`http://127.0.0.1:${port}/mcp`)
  const deadline = Date.now() + 30_000
  while (Date.now() < deadline) {
    if (proc.exitCode !== null) throw new Error(`mcp-proxy exited with ${proc.exitCode}; run it by hand to see why: ${command.join(' ')}`)
    if (await fetch(url).then(() => true, () => false)) return url
    await Bun.sleep(100)
  }
  throw new Error(`mcp-proxy did not answer at ${url} within 30 s`)
}

async function connect(path: PathName, gateway: { url: URL; token: string }, proxy: URL, floor: URL): Promise<Client> {
  const client = new Client({ name: 'bench', version: '1.0.0' })
  const transport =
    path === 'direct'
      ? new StdioClientTransport({ command: EVERYTHING, stderr: 'ignore' })
      : path === 'gateway'
        ? new StreamableHTTPClientTransport(gateway.url, { requestInit: { headers: { authorization: `Bearer ${gateway.token}` } } })
        : new StreamableHTTPClientTransport(path === 'floor' ? floor : proxy)
  await client.connect(transport)
  return client
}

let serial = 0

/**
 * Each client calls echo in a closed loop (its next call when the last is answered) until `done`; answers every
 * call's latency in ms and the wall time taken. Each message is new, so an answer can be neither another call's
 * nor a cached one.
 */
async function drive(path: PathName, clients: Client[], done: (calls: number) => boolean) {
  const latencies: number[] = []
  const start = performance.now()
  await Promise.all(
    clients.map(async (client) => {
      for (let calls = 0; !done(calls); calls++) {
        const message = `bench call ${++serial}`
        const sent = performance.now()
        const result = await client.callTool({ name: 'echo', arguments: { message } })
        latencies.push(performance.now() - sent)
        const text = (result.content as { text?: string }[] | undefined)?.[0]?.text
        if (text !== `Echo: ${message}`) throw new Error(`${path}: echo answered ${JSON.stringify(result).slice(0, 300)}, not "Echo: ${message}"`)
      }
    }),
  )
  return { latencies, seconds: (performance.now() - start) / 1000 }
}

async function measure(path: PathName, clients: Client[]): Promise<Figures> {
  const perClient = Math.ceil(WARMUP_CALLS / clients.length)
  await drive(path, clients, (calls) => calls >= perClient)
  const end = performance.now() + DURATION_SECONDS * 1000
  const cpuBefore = cpuSeconds(servers.get(path))
  const { latencies, seconds } = await drive(path, clients, () => performance.now() >= end)
  const cpuAfter = cpuSeconds(servers.get(path))
  const sorted = Float64Array.from(latencies).sort()
  const cpuPerCall = cpuBefore === undefined || cpuAfter === undefined ? undefined : ((cpuAfter - cpuBefore) * 1e6) / latencies.length
  return { callsPerSecond: latencies.length / seconds, p50: percentile(sorted, 50), p99: percentile(sorted, 99), cpuPerCall }
}

const row = (cells: string[]) => cells.map((c, i) => c.padEnd([12, 10, 10, 10][i] ?? 0)).join(' ').trimEnd()
const cpu = (figures: Figures) => (figures.cpuPerCall === undefined ? '' : `${figures.cpuPerCall.toFixed(0)}µs`)

async function main() {
  const gateway = await startGateway()
  const proxy = await startMcpProxy()
  const floor = await startFloor()
  console.log(
    `Bun ${Bun.version}, ${navigator.hardwareConcurrency} CPUs, gateway on ${gateway.database}, ` +
      `server-everything ${await version('@modelcontextprotocol/server-everything')}, mcp-proxy ${await version('mcp-proxy')}, ` +
      `${DURATION_SECONDS} s per path and round, ${ROUNDS} round(s)`,
  )

  const results = new Map<string, Figures>()
  const result = (path: PathName, c: number) => results.get(`${path} ${c}`)!
  for (const c of CONCURRENCIES) {
    // Clients are connected once per concurrency and kept across rounds, so that no round pays for a spawn.
    const clients = new Map<PathName, Client[]>()
    for (const path of PATHS) {
      const connected = await Promise.all(Array.from({ length: c }, () => connect(path, gateway, proxy, floor)))
      stops.push(() => Promise.all(connected.map((client) => client.close())))
      clients.set(path, connected)
    }
    const rounds = new Map<PathName, Figures[]>(PATHS.map((path) => [path, []]))
    for (let round = 1; round <= ROUNDS; round++) {
      // Flipping the order each round keeps drift on a shared machine from favouring one path.
      for (const path of round % 2 === 1 ? PATHS : [...PATHS].reverse()) {
        const figures = await measure(path, clients.get(path)!)
        rounds.get(path)!.push(figures)
        const spent = cpu(figures) && `, server CPU ${cpu(figures)} a call`
        console.log(`round ${round}, c=${c}, ${path}: ${figures.callsPerSecond.toFixed(0)} calls/s, p50 ${figures.p50.toFixed(3)} ms, p99 ${figures.p99.toFixed(3)} ms${spent}`)
      }
    }
    console.log()
    console.log(`c=${c}, median of ${ROUNDS} round(s):`)
    console.log(row(['path', 'calls/s', 'p50', 'p99', 'server CPU a call']))
    for (const [path, figures] of rounds) {
      const cpuTimes = figures.flatMap((f) => (f.cpuPerCall === undefined ? [] : [f.cpuPerCall]))
      const m: Figures = {
        callsPerSecond: median(figures.map((f) => f.callsPerSecond)),
        p50: median(figures.map((f) => f.p50)),
        p99: median(figures.map((f) => f.p99)),
        ...(cpuTimes.length ? { cpuPerCall: median(cpuTimes) } : {}),
      }
      results.set(`${path} ${c}`, m)
      console.log(row([path, m.callsPerSecond.toFixed(0), `${m.p50.toFixed(3)}ms`, `${m.p99.toFixed(3)}ms`, cpu(m)]))
    }
    console.log()
  }

  const added = result('gateway', 1).p50 - result('direct', 1).p50
  const verdict = (met: boolean) => (met ? 'met' : 'NOT met')
  console.log(`gateway added p50 at c=1: ${added.toFixed(3)} ms (target ≤ ${TARGET_ADDED_P50_MS} ms, ${verdict(added <= TARGET_ADDED_P50_MS)})`)
  const floorAdded = result('floor', 1).p50 - result('direct', 1).p50
  console.log(`floor added p50 at c=1: ${floorAdded.toFixed(3)} ms (the least a gateway on the SDK adds here)`)
  recordFigure({ bench: 'mcp', path: 'floor: tools/call p50 at c=1 of a bare forwarder', figure: result('floor', 1).p50, baseline: result('direct', 1).p50, unit: 'ms', ratio: `+${floorAdded.toFixed(3)} ms`, target: '', met: null })
  recordFigure({ bench: 'mcp', path: 'tools/call p50 at c=1, over direct stdio', figure: result('gateway', 1).p50, baseline: result('direct', 1).p50, unit: 'ms', ratio: `+${added.toFixed(3)} ms`, target: `≤ +${TARGET_ADDED_P50_MS} ms`, met: added <= TARGET_ADDED_P50_MS })
  const [gatewayCpu, floorCpu] = [result('gateway', 1).cpuPerCall, result('floor', 1).cpuPerCall]
  if (gatewayCpu !== undefined && floorCpu !== undefined) {
    console.log(`server CPU a call at c=1: gateway ${gatewayCpu.toFixed(0)} µs, floor ${floorCpu.toFixed(0)} µs (${(gatewayCpu / floorCpu).toFixed(1)}x)`)
    recordFigure({ bench: 'mcp', path: 'server CPU a tools/call at c=1, over the floor', figure: gatewayCpu, baseline: floorCpu, unit: 'µs', ratio: `${(gatewayCpu / floorCpu).toFixed(1)}×`, target: '', met: null })
  }
  const ratios = CONCURRENCIES.map((c) => result('gateway', c).callsPerSecond / result('mcp-proxy', c).callsPerSecond)
  CONCURRENCIES.forEach((c, i) => {
    const [gateway, proxy] = [result('gateway', c).callsPerSecond, result('mcp-proxy', c).callsPerSecond]
    recordFigure({ bench: 'mcp', path: `tools/call at c=${c}, over mcp-proxy`, figure: gateway, baseline: proxy, unit: 'calls/s', ratio: `${ratios[i]!.toFixed(2)}×`, target: `≥ ${TARGET_RATIO}×`, met: ratios[i]! >= TARGET_RATIO })
  })
  console.log(
    `gateway / mcp-proxy calls/s at ${CONCURRENCIES.map((c) => `c=${c}`).join(' and ')}: ${ratios.map((r) => `${r.toFixed(2)}x`).join(' and ')} ` +
      `(target ≥ ${TARGET_RATIO}x, ${verdict(ratios.every((r) => r >= TARGET_RATIO))})`,
  )
}

try {
  await main()
} catch (error) {
  // After Ctrl-C, the failure is only the clients being closed under the calls.
  if (!stopping) console.error(error instanceof Error ? error.message : error)
  process.exitCode = 1
} finally {
  await stopAll()
}
// The platform's store and timers would keep the process alive.
process.exit(process.exitCode ?? 0)
