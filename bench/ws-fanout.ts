/**
 * Web chat fan-out benchmark: how fast a message said in a shared conversation reaches every open socket on it, and
 * what an idle socket costs the server in memory. A hand-run benchmark, not a test. Targets: every socket hears the
 * `user_message` within 50 ms at p99 with 500 sockets open on the conversation; at most 20 KB of RSS per idle socket.
 *
 * The platform is `bun src/main.ts` in a child process, as `npm start` runs it, with one addition: a preload
 * (written to a temporary directory) that on SIGUSR2 runs a full GC and writes process.memoryUsage() to a file, so
 * that RSS is read after a collection and the JavaScript heap can be told apart from the rest. Each figure is the
 * median of 5 such readings (RSS from /proc/<pid>/status VmRSS, the heap from heapUsed).
 *
 * Set-up, through the api as a person would: the first superadmin makes an agent, a conversation with it,
 * BENCH_USERS users (POST /api/v1/User), and adds each of them to the conversation (POST /api/v1/WebchatParticipant),
 * so that it is shared and the agent answers only when mentioned; every user signs in (POST /auth/login on the admin
 * port). Each user then opens BENCH_SOCKETS_PER_USER sockets on the conversation (50 × 10 = 500 by default: people
 * with several tabs or devices), BENCH_OPEN_CONCURRENCY handshakes at a time.
 *
 * 1. Memory per idle socket, one server at a time: a warm-up (500 sockets opened and closed, so that the handshake's
 *    code, caches and allocator are warm), then RSS before, after opening 500 sockets and after opening 500 more;
 *    per socket = ΔRSS / sockets opened. The second 500 are closed again; the first 500 stay, for part 2.
 * 2. Fan-out latency: the superadmin (the conversation's creator, not one of the 500) sends `{type:'message'}` frames
 *    on a socket of its own, as the page does when someone presses Enter; no mention, so no agent turn runs and the
 *    message is stored and fanned out as `user_message` only. That is the web chat's own path end to end (socket →
 *    POST /api/chat in process → store → bus → every socket), which is why it is used rather than POST /api/chat on
 *    the api port: that adds an HTTP request and its NDJSON stream to the same kernel path, and is not how a person
 *    chats. A message's time is from the sender's ws.send() to each of the 500 receiving sockets' onmessage, on this
 *    process's clock. One message at a time, the cases taking turns (their order rotating each round, so that drift
 *    on a shared machine falls on all of them alike): 20 rounds of warm-up, then BENCH_MESSAGES. The next message is
 *    sent BENCH_INTERVAL_MS after the previous one reached every socket (or after 5 s, its missing deliveries then
 *    counted lost). Reported: p50/p99/max over every delivery; per message, the first socket's time (the server's
 *    work before the fan-out) and the spread from the first socket to the last (the fan-out itself).
 *
 * Cases: the embedded store (PGlite, in the platform's process), and PostgreSQL (a fresh database sb_bench_<random>,
 * dropped at the end: bench/harness.ts withDatabase). On PostgreSQL an event published by a process reaches that
 * process's own sockets at once, before its NOTIFY is sent (src/events/postgres.ts); only other processes hear it
 * through LISTEN/NOTIFY. So on PostgreSQL the latency is measured twice: with the sender on the same process as the
 * 500 sockets, and with the sender on a second platform process on the same database, where every delivery to the
 * 500 travels through NOTIFY.
 *
 * Baseline, in the same run: this file run with --bare, a Bun.serve WebSocket server with no platform that keeps its
 * sockets in a Set and, on a `message` frame, sends the same `user_message` JSON to each (the loop of
 * src/admin/chat/sockets.ts: readyState and buffered-amount checks, one JSON.stringify per event). Same client, same
 * sockets, same procedure, same preload, for latency and memory: the floor.
 *
 * All the client sockets live in this process, so the 500 onmessage calls of a message run one after the other: part
 * of every figure, the baseline's too. Whatever the platform does periodically (heartbeats to every socket every
 * 25 s, and what rides on them) is left on and may fall on a message: each case's slowest message is printed with
 * when it was sent, to tell. The machine's load and, for the latency phase, its CPU time stolen by the hypervisor are
 * printed too: on a shared virtual machine they set the tails. Takes about 3 minutes with the defaults.
 *
 * Run:  node_modules/.bin/bun bench/ws-fanout.ts
 * Environment (defaults in brackets):
 *   BENCH_STORE              embedded, postgres or both [both]
 *   BENCH_DATABASE_URL       PostgreSQL admin connection, for the fresh database [postgres://postgres@127.0.0.1:5432/postgres]
 *   BENCH_USERS              users taking part in the conversation [50]
 *   BENCH_SOCKETS_PER_USER   sockets per user, on the conversation [10]; part 1 opens twice as many, which the
 *                            platform's cap per user (MAX_SOCKETS_PER_USER, src/admin/chat/sockets.ts) must allow
 *   BENCH_MESSAGES           measured messages per case [200]
 *   BENCH_INTERVAL_MS        pause after a message reached every socket [50]
 *   BENCH_OPEN_CONCURRENCY   handshakes in flight while opening sockets [8]
 */
import { recordFigure } from './results.ts'
import { existsSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join } from 'node:path'
import { MAX_SOCKETS_PER_USER } from '../src/admin/chat/sockets.ts'
import type { Env } from './harness.ts'

const TARGET_P99_MS = 50
const TARGET_KB_PER_SOCKET = 20
const WARMUP_ROUNDS = 20
const MESSAGE_TIMEOUT_MS = 5_000
const MAIN = join(import.meta.dir, '..', 'src', 'main.ts')

/** The preload of every server measured: on SIGUSR2, a full GC, then its memory use written beside the preload. */
const GC_HOOK = `import { writeFileSync } from 'node:fs'
process.on('SIGUSR2', () => {
  Bun.gc(true)
  writeFileSync(\`\${import.meta.dir}/memory-\${process.pid}.json\`, JSON.stringify(process.memoryUsage()))
})
`

// ---------------------------------------------------------------------------------------------------------------
// The baseline server (this file run with --bare).

/** The floor: a WebSocket server that only fans out the `user_message` the platform would send, to every socket in its Set. */
function bareServer(): void {
  const sockets = new Set<Bun.ServerWebSocket<{ userId: string }>>()
  const server = Bun.serve<{ userId: string }, never>({
    hostname: '127.0.0.1',
    port: 0,
    fetch(request, server) {
      const userId = new URL(request.url).searchParams.get('user') ?? crypto.randomUUID()
      if (server.upgrade(request, { data: { userId } })) return undefined
      return new Response('WebSocket only', { status: 426 })
    },
    websocket: {
      // As the platform's handler (src/admin/chat/socket.ts).
      maxPayloadLength: 512 * 1024,
      idleTimeout: 120,
      sendPings: true,
      open: (ws) => void sockets.add(ws),
      close: (ws) => void sockets.delete(ws),
      message(ws, raw) {
        const message = JSON.parse(String(raw)) as { type: string; conversation_id: string; text: string }
        if (message.type !== 'message') return
        const event = {
          type: 'user_message',
          message_id: Bun.randomUUIDv7(),
          sender: ws.data.userId,
          display_name: 'someone',
          text: message.text,
          time: new Date().toISOString(),
          attachments: [],
        }
        const wire = JSON.stringify({ ...event, conversation_id: message.conversation_id })
        for (const socket of sockets) {
          if (socket.readyState !== 1) continue
          if (socket.getBufferedAmount() > 4 * 1024 * 1024) socket.close(4008, 'behind')
          else socket.send(wire)
        }
      },
    },
  })
  console.log(`port ${server.port}`)
}

// ---------------------------------------------------------------------------------------------------------------
// Settings and small helpers.

interface Settings {
  users: number
  perUser: number
  messages: number
  interval: number
  concurrency: number
}

function count(name: string, fallback: number): number {
  const value = process.env[name] ?? String(fallback)
  if (!/^[1-9]\d*$/.test(value)) {
    console.error(`${name}=${value} is not a positive whole number`)
    process.exit(1)
  }
  return Number(value)
}

function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN
}

const median = (values: readonly number[]) => percentile(values, 50)
const ms = (value: number) => (Number.isFinite(value) ? `${value.toFixed(2)}ms` : '-')
const loadavg = () => readFileSync('/proc/loadavg', 'utf8').split(' ').slice(0, 3).join(' ')

/** The machine's CPU time so far (/proc/stat, all CPUs, in ticks): busy, and stolen by the hypervisor. */
function cpuTicks(): { total: number; idle: number; steal: number } {
  // user nice system idle iowait irq softirq steal
  const fields = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0]!.trim().split(/\s+/).slice(1, 9).map(Number)
  const [, , , idle = 0, iowait = 0, , , steal = 0] = fields
  return { total: fields.reduce((sum, ticks) => sum + ticks, 0), idle: idle + iowait, steal }
}

/** What the CPUs did since `before`: on a shared virtual machine, stolen time shows up in every tail. */
function cpuSince(before: ReturnType<typeof cpuTicks>): string {
  const now = cpuTicks()
  const total = now.total - before.total
  const pct = (ticks: number) => `${((100 * ticks) / total).toFixed(0)}%`
  return `${pct(total - (now.idle - before.idle) - (now.steal - before.steal))} busy, ${pct(now.steal - before.steal)} stolen by the hypervisor`
}

/** Runs `task(i)` for i in 0..n-1, `concurrency` at a time. */
async function inParallel<T>(n: number, concurrency: number, task: (i: number) => Promise<T>): Promise<T[]> {
  const results: T[] = new Array(n)
  let next = 0
  await Promise.all(
    Array.from({ length: Math.min(n, concurrency) }, async () => {
      while (next < n) {
        const i = next++
        results[i] = await task(i)
      }
    }),
  )
  return results
}

async function freePort(): Promise<number> {
  const probe = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: () => new Response(null) })
  const port = probe.port!
  await probe.stop(true)
  return port
}

// ---------------------------------------------------------------------------------------------------------------
// Child processes: the platform and the bare server.

interface Child {
  pid: number
  /** When it was spawned (performance.now()). */
  startedAt: number
  /** The last lines it wrote to stderr (the platform logs there), for a failure's report. */
  stderrTail: string[]
  stop(): Promise<void>
}

// Every child is killed on Ctrl-C; temporary directories go too.
const children = new Set<Bun.Subprocess>()
const temporary = new Set<string>()
let databaseInUse = false
process.on('SIGINT', () => {
  for (const child of children) child.kill()
  for (const dir of temporary) rmSync(dir, { recursive: true, force: true })
  // withDatabase has its own handler, which drops the database and then exits.
  if (!databaseInUse) process.exit(130)
})

function tempDir(prefix: string): string {
  const dir = mkdtempSync(join(tmpdir(), prefix))
  temporary.add(dir)
  return dir
}

/** Keeps the last 30 lines of a stream. */
async function tail(stream: ReadableStream<Uint8Array<ArrayBuffer>>, lines: string[]): Promise<void> {
  let partial = ''
  for await (const chunk of stream.pipeThrough(new TextDecoderStream())) {
    const parts = (partial + chunk).split('\n')
    partial = parts.pop()!
    lines.push(...parts.filter(Boolean))
    lines.splice(0, Math.max(0, lines.length - 30))
  }
}

/** Spawns `cmd` and waits until its stdout matches `ready`; keeps draining both pipes so that it never blocks. */
async function spawnUntil(cmd: string[], env: Env, ready: RegExp): Promise<{ child: Child; match: RegExpExecArray }> {
  const startedAt = performance.now()
  const proc = Bun.spawn(cmd, { env, stdin: 'ignore', stdout: 'pipe', stderr: 'pipe' })
  children.add(proc)
  const stderrTail: string[] = []
  void tail(proc.stderr, stderrTail)
  const reader = proc.stdout.pipeThrough(new TextDecoderStream()).getReader()
  let output = ''
  let match: RegExpExecArray | null
  while (!(match = ready.exec(output))) {
    const { value, done } = await reader.read()
    if (done) {
      await proc.exited
      throw new Error(`${cmd.join(' ')} exited before it was ready:\n${output}${stderrTail.join('\n')}`)
    }
    output += value
  }
  void (async () => {
    for (let r = await reader.read(); !r.done; r = await reader.read());
  })()
  const stop = async () => {
    proc.kill('SIGTERM')
    const exited = await Promise.race([proc.exited, Bun.sleep(10_000).then(() => undefined)])
    if (exited === undefined) proc.kill('SIGKILL')
    await proc.exited
    children.delete(proc)
  }
  return { child: { pid: proc.pid, startedAt, stderrTail, stop }, match }
}

interface Platform extends Child {
  adminUrl: string
  apiUrl: string
}

/** `bun src/main.ts` on ports of its own, with the GC hook preloaded. */
async function startPlatform(env: Env, gcHook: string): Promise<Platform> {
  const [apiPort, adminPort] = [await freePort(), await freePort()]
  // Explicit ports: the admin base URL (the Origin the handshake must carry) is derived from the port set.
  const portEnv = { SWITCHBOARD_API_PORT: String(apiPort), SWITCHBOARD_ADMIN_PORT: String(adminPort), SWITCHBOARD_DATA_DIR: tempDir('switchboard-bench-ws-') }
  const { child } = await spawnUntil([process.execPath, '--preload', gcHook, MAIN], { ...env, ...portEnv }, /API and docs\s+http:\/\/\S+\/api\/docs/)
  return { ...child, adminUrl: `http://127.0.0.1:${adminPort}`, apiUrl: `http://127.0.0.1:${apiPort}` }
}

async function startBare(gcHook: string): Promise<Child & { url: string }> {
  const { child, match } = await spawnUntil([process.execPath, '--preload', gcHook, import.meta.path, '--bare'], process.env, /port (\d+)\n/)
  return { ...child, url: `ws://127.0.0.1:${match[1]}/ws` }
}

// ---------------------------------------------------------------------------------------------------------------
// Client sockets.

/** Where sockets connect and as whom. */
interface Target {
  name: string
  pid: number
  conversationId: string
  /** The i-th receiving socket's address and headers. */
  socket(i: number): { url: string; headers: Record<string, string> }
  /** The sender's socket, which is not one of the receivers. */
  sender: { url: string; headers: Record<string, string> }
}

type FrameHandler = (receivedAt: number, data: string) => void

/** Opens one socket; resolves once open, rejects if it fails or closes first. */
function openSocket(url: string, headers: Record<string, string>, onFrame: FrameHandler): Promise<WebSocket> {
  const ws = new WebSocket(url, { headers } as never)
  // The time first: what the handler does after must not count against the server.
  ws.onmessage = (message) => onFrame(performance.now(), message.data as string)
  return new Promise((resolve, reject) => {
    ws.onopen = () => resolve(ws)
    ws.onerror = () => reject(new Error(`the socket to ${url} failed to open`))
    ws.onclose = (e) => reject(new Error(`the socket to ${url} closed at once: ${e.code} ${e.reason}`))
  })
}

/**
 * Opens the target's sockets `from`..`to`-1. The platform accepts a refused handshake and closes the socket at
 * once (4001, 4003), so after a short wait every socket must still be open.
 */
async function openSockets(target: Target, from: number, to: number, concurrency: number, onFrame: FrameHandler): Promise<WebSocket[]> {
  const sockets = await inParallel(to - from, concurrency, (i) => {
    const { url, headers } = target.socket(from + i)
    return openSocket(url, headers, onFrame)
  })
  await Bun.sleep(300)
  const closed = sockets.filter((ws) => ws.readyState !== WebSocket.OPEN).length
  if (closed > 0) throw new Error(`${closed} of ${sockets.length} sockets to ${target.name} closed after opening`)
  return sockets
}

async function closeSockets(sockets: WebSocket[]): Promise<void> {
  await Promise.all(
    sockets.map((ws) => {
      if (ws.readyState === WebSocket.CLOSED) return undefined
      const closed = new Promise<void>((resolve) => (ws.onclose = () => resolve()))
      ws.close()
      return closed
    }),
  )
}

// ---------------------------------------------------------------------------------------------------------------
// Memory.

/** Kilobytes (KiB, as VmRSS counts) with 0, n and 2n idle sockets open. */
interface Memory {
  rss: [number, number, number]
  heap: [number, number, number]
  opened: number
}

/**
 * The child's memory once settled: the median of 5 readings, each after a full GC. The preload answers SIGUSR2 by
 * writing process.memoryUsage() to memory-<pid>.json beside itself.
 */
async function settledMemory(pid: number, gcHook: string): Promise<{ rss: number; heap: number }> {
  const file = join(dirname(gcHook), `memory-${pid}.json`)
  await Bun.sleep(1_000)
  const rss: number[] = []
  const heap: number[] = []
  for (let i = 0; i < 5; i++) {
    rmSync(file, { force: true })
    process.kill(pid, 'SIGUSR2')
    for (let waited = 0; !existsSync(file); waited += 20) {
      if (waited > 5_000) throw new Error(`process ${pid} did not answer SIGUSR2 with ${file}`)
      await Bun.sleep(20)
    }
    await Bun.sleep(200)
    const usage = JSON.parse(readFileSync(file, 'utf8')) as { heapUsed: number }
    heap.push(usage.heapUsed / 1024)
    rss.push(vmRssKb(pid))
  }
  return { rss: median(rss), heap: median(heap) }
}

function vmRssKb(pid: number): number {
  const line = /^VmRSS:\s+(\d+) kB/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))
  if (!line) throw new Error(`no VmRSS in /proc/${pid}/status`)
  return Number(line[1])
}

/** KiB per socket of one measure: over all sockets opened, and over the first and second half alone. */
function perSocket([base, half, full]: [number, number, number], opened: number) {
  return { all: (full - base) / (2 * opened), first: (half - base) / opened, second: (full - half) / opened }
}

/**
 * Part 1 on one server: warm-up, RSS with 0, n and 2n idle sockets. Answers the memory figures and the first n
 * sockets, left open as part 2's receivers.
 */
async function measureMemory(target: Target, settings: Settings, gcHook: string, onFrame: FrameHandler): Promise<{ memory: Memory; receivers: WebSocket[] }> {
  const n = settings.users * settings.perUser
  const say = (line: string) => console.log(`${target.name}: ${line}, load ${loadavg()}`)
  say(`warming up (${n} sockets opened and closed)`)
  await closeSockets(await openSockets(target, 0, n, settings.concurrency, onFrame))
  const base = await settledMemory(target.pid, gcHook)
  say(`opening ${n} idle sockets, then ${n} more`)
  const receivers = await openSockets(target, 0, n, settings.concurrency, onFrame)
  const half = await settledMemory(target.pid, gcHook)
  const extra = await openSockets(target, n, 2 * n, settings.concurrency, onFrame)
  const full = await settledMemory(target.pid, gcHook)
  await closeSockets(extra)
  return { memory: { rss: [base.rss, half.rss, full.rss], heap: [base.heap, half.heap, full.heap], opened: n }, receivers }
}

// ---------------------------------------------------------------------------------------------------------------
// Fan-out latency.

interface Latency {
  /** Send → receive, every delivery of every measured message. */
  deliveries: number[]
  /** Per message: the first socket's time, and the last socket's minus the first's. */
  firsts: number[]
  spreads: number[]
  lost: number
  /** The slowest message (its last socket), and when it was sent in seconds since the receivers' server started. */
  worst: { ms: number; at: number }
  serverStartedAt: number
}

/**
 * The one message in flight, whichever case sent it: every receiving socket's frame handler reports to it. Each
 * message's text is unique, so a frame of an earlier message that was given up is told apart (and counted late).
 */
class FanOut {
  #current: { marker: string; sentAt: number; left: number; times: number[]; done: () => void } | undefined
  late = 0

  readonly onFrame: FrameHandler = (receivedAt, data) => {
    const current = this.#current
    // A substring test, not JSON.parse: 500 parses per message would be the client's work counted as latency.
    if (current && data.includes(current.marker)) {
      current.times.push(receivedAt - current.sentAt)
      if (--current.left === 0) current.done()
    } else if (data.includes('"type":"user_message"')) {
      this.late++
    }
  }

  /** Sends one message on `sender`; answers the delivery times that came within the timeout. */
  async send(sender: WebSocket, conversationId: string, text: string, receivers: number): Promise<number[]> {
    const { promise, resolve } = Promise.withResolvers<void>()
    const current = { marker: JSON.stringify({ text }).slice(1, -1), sentAt: 0, left: receivers, times: [] as number[], done: resolve }
    this.#current = current
    const timeout = setTimeout(resolve, MESSAGE_TIMEOUT_MS)
    current.sentAt = performance.now()
    sender.send(JSON.stringify({ type: 'message', conversation_id: conversationId, text }))
    await promise
    clearTimeout(timeout)
    this.#current = undefined
    return current.times
  }
}

/** One line of the latency table: a sender and the receivers it is measured on. */
interface LatencyCase {
  name: string
  sender: WebSocket
  conversationId: string
  receivers: number
  latency: Latency
}

/** Every case sends a message in turn, the order rotating each round; WARMUP_ROUNDS rounds are not counted. */
async function measureLatency(cases: LatencyCase[], fanOut: FanOut, settings: Settings): Promise<void> {
  const tag = crypto.randomUUID().slice(0, 8)
  console.log(`fan-out: ${cases.length} cases in turn, ${WARMUP_ROUNDS} + ${settings.messages} rounds, load ${loadavg()}`)
  const cpu = cpuTicks()
  for (let round = 0; round < WARMUP_ROUNDS + settings.messages; round++) {
    for (let k = 0; k < cases.length; k++) {
      const c = cases[(k + round) % cases.length]!
      const sentAt = performance.now()
      const times = await fanOut.send(c.sender, c.conversationId, `fan-out ${tag} ${round} ${c.name}`, c.receivers)
      if (round >= WARMUP_ROUNDS) record(c.latency, times, c.receivers, sentAt)
      await Bun.sleep(settings.interval)
    }
    if (round === WARMUP_ROUNDS + Math.floor(settings.messages / 2)) console.log(`fan-out: half way, load ${loadavg()}`)
  }
  console.log(`fan-out: done, load ${loadavg()}; CPUs over the phase: ${cpuSince(cpu)}`)
}

function record(latency: Latency, times: number[], receivers: number, sentAt: number): void {
  latency.deliveries.push(...times)
  latency.lost += receivers - times.length
  if (times.length === 0) return
  let [first, last] = [Infinity, -Infinity]
  for (const t of times) [first, last] = [Math.min(first, t), Math.max(last, t)]
  latency.firsts.push(first)
  latency.spreads.push(last - first)
  if (last > latency.worst.ms) latency.worst = { ms: last, at: (sentAt - latency.serverStartedAt) / 1000 }
}

// ---------------------------------------------------------------------------------------------------------------
// Seeding the platform through its api, as people would.

async function signIn(adminUrl: string, username: string, password: string): Promise<string> {
  const response = await fetch(`${adminUrl}/auth/login`, {
    method: 'POST',
    headers: { accept: 'application/json', 'content-type': 'application/x-www-form-urlencoded', origin: adminUrl },
    body: new URLSearchParams({ username, password }),
    redirect: 'manual',
  })
  const cookie = response.headers.getSetCookie().map((c) => c.split(';')[0]!).find((c) => c.startsWith('switchboard_session_token='))
  if (!cookie) throw new Error(`signing in ${username} answered ${response.status}: ${await response.text()}`)
  return cookie
}

/** A cookie-authenticated api call, with the admin console's Origin (which a write needs). */
async function call(p: Platform, cookie: string, method: string, path: string, json: unknown, status: number): Promise<any> {
  const response = await fetch(p.apiUrl + path, {
    method,
    headers: { 'content-type': 'application/json', accept: 'application/json', cookie, origin: p.adminUrl },
    body: JSON.stringify(json),
  })
  if (response.status !== status) throw new Error(`${method} ${path} answered ${response.status}: ${await response.text()}`)
  return response.json()
}

interface Seeded {
  conversationId: string
  adminCookie: string
  /** One per user, in order. */
  cookies: string[]
}

async function seed(p: Platform, adminPassword: string, users: number): Promise<Seeded> {
  const adminCookie = await signIn(p.adminUrl, 'admin', adminPassword)
  const agent = await call(p, adminCookie, 'POST', '/api/v1/AgentConfigRecord', { name: 'fanout', runner: 'echo', model: 'echo-1' }, 201)
  const conversation = await call(p, adminCookie, 'POST', '/api/v1/WebchatConversation', { agent_id: agent.id }, 201)
  const password = crypto.randomUUID()
  // A few at a time: each is an argon2id hash on the server (the user) and a verification (the sign-in).
  const cookies = await inParallel(users, 4, async (i) => {
    const username = `fanout-${i}`
    const user = await call(p, adminCookie, 'POST', '/api/v1/User', { email: `${username}@example.com`, username, password }, 201)
    await call(p, adminCookie, 'POST', '/api/v1/WebchatParticipant', { conversation_id: conversation.id, user_id: user.id }, 201)
    return signIn(p.adminUrl, username, password)
  })
  return { conversationId: conversation.id, adminCookie, cookies }
}

function platformTarget(name: string, p: Platform, seeded: Seeded, users: number): Target {
  const url = `${p.adminUrl.replace(/^http/, 'ws')}/ws/chat?conversation_id=${seeded.conversationId}`
  return {
    name,
    pid: p.pid,
    conversationId: seeded.conversationId,
    // Socket i is user (i mod users)'s: each user's sockets are spread through the order of opening.
    socket: (i) => ({ url, headers: { cookie: seeded.cookies[i % users]!, origin: p.adminUrl } }),
    sender: { url, headers: { cookie: seeded.adminCookie, origin: p.adminUrl } },
  }
}

// ---------------------------------------------------------------------------------------------------------------
// The servers, started and prepared (seeded, memory measured, receivers and sender open) one after the other.

interface Prepared {
  name: string
  memory: Memory
  latencies: LatencyCase[]
  /** The platform's warnings and errors, which a clean run has none of. */
  complaints(): string[]
}

/** What is stopped at the end, last started first. */
type Stops = (() => Promise<void>)[]

function newLatency(serverStartedAt: number): Latency {
  return { deliveries: [], firsts: [], spreads: [], lost: 0, worst: { ms: 0, at: 0 }, serverStartedAt }
}

async function prepareBare(settings: Settings, gcHook: string, fanOut: FanOut, stops: Stops): Promise<Prepared> {
  const bare = await startBare(gcHook)
  stops.push(bare.stop)
  const target: Target = {
    name: 'bare Bun.serve (floor)',
    pid: bare.pid,
    conversationId: crypto.randomUUID(),
    socket: (i) => ({ url: `${bare.url}?user=user-${i % settings.users}`, headers: {} }),
    sender: { url: `${bare.url}?user=sender`, headers: {} },
  }
  const { memory, receivers } = await measureMemory(target, settings, gcHook, fanOut.onFrame)
  stops.push(() => closeSockets(receivers))
  const sender = await openSocket(target.sender.url, target.sender.headers, () => {})
  const latency: LatencyCase = { name: target.name, sender, conversationId: target.conversationId, receivers: receivers.length, latency: newLatency(bare.startedAt) }
  return { name: target.name, memory, latencies: [latency], complaints: () => [] }
}

/** The platform on `env`'s store; with `secondProcess`, a second one on the same database holds a second sender. */
async function preparePlatform(name: string, env: Env, gcHook: string, settings: Settings, fanOut: FanOut, stops: Stops, secondProcess: boolean): Promise<Prepared> {
  const p = await startPlatform(env, gcHook)
  stops.push(p.stop)
  try {
    console.log(`${name}: seeding ${settings.users} users, load ${loadavg()}`)
    const seeded = await seed(p, env.SWITCHBOARD_ADMIN_PASSWORD!, settings.users)
    const target = platformTarget(name, p, seeded, settings.users)
    const { memory, receivers } = await measureMemory(target, settings, gcHook, fanOut.onFrame)
    stops.push(() => closeSockets(receivers))
    const sender = await openSocket(target.sender.url, target.sender.headers, () => {})
    const latencies: LatencyCase[] = [{ name, sender, conversationId: seeded.conversationId, receivers: receivers.length, latency: newLatency(p.startedAt) }]
    if (secondProcess) {
      // Its sessions are the same rows, so the admin's cookie is good there too.
      const q = await startPlatform(env, gcHook)
      stops.push(q.stop)
      const remote = platformTarget(`${name} (2nd process)`, q, seeded, settings.users).sender
      const sender = await openSocket(remote.url, remote.headers, () => {})
      latencies.push({ name: `${name}, sender on a 2nd process`, sender, conversationId: seeded.conversationId, receivers: receivers.length, latency: newLatency(p.startedAt) })
    }
    return { name, memory, latencies, complaints: () => p.stderrTail.filter((line) => /"level":"(warn|error)"/.test(line)) }
  } catch (error) {
    console.error(`${name}: the platform's last lines:\n${p.stderrTail.join('\n')}`)
    throw error
  }
}

// ---------------------------------------------------------------------------------------------------------------
// The report.

function table(widths: number[]) {
  return (cells: string[]) => console.log(cells.map((cell, i) => (i === 0 ? cell.padEnd(widths[0]!) : cell.padStart(widths[i] ?? 10))).join(' ').trimEnd())
}

function reportLatency(cases: LatencyCase[], floor: Latency, settings: Settings): void {
  const row = table([34, 9, 9, 9, 9, 9, 10, 10, 5, 16])
  const receivers = settings.users * settings.perUser
  console.log()
  console.log(`fan-out latency: ws.send() → user_message at each of ${receivers} sockets, ${settings.messages} messages per case (${receivers * settings.messages} deliveries)`)
  row(['case', 'p50', 'p99', 'max', '1st p50', '1st p99', 'sprd p50', 'sprd p99', 'lost', 'ratio p50 / p99'])
  for (const { name, latency: l } of cases) {
    const d = l.deliveries
    const ratio = l === floor ? '' : `${(median(d) / median(floor.deliveries)).toFixed(1)}× / ${(percentile(d, 99) / percentile(floor.deliveries, 99)).toFixed(1)}×`
    row([name, ms(median(d)), ms(percentile(d, 99)), ms(Math.max(...d)), ms(median(l.firsts)), ms(percentile(l.firsts, 99)), ms(median(l.spreads)), ms(percentile(l.spreads, 99)), String(l.lost), ratio])
  }
  console.log('(1st: the first socket to hear a message; sprd: the last socket minus the first; ratio: ÷ the bare server, same run)')
  // A stall on the server's side (a periodic sweep, a GC) shows as one slow message; when it came tells which.
  for (const { name, latency: l } of cases) console.log(`slowest message, ${name}: ${ms(l.worst.ms)} to its last socket, sent ${l.worst.at.toFixed(1)} s after the server started`)
}

function reportMemory(prepared: Prepared[], floor: Memory): void {
  const row = table([34, 10, 10, 10, 11, 11, 12, 12, 14])
  const n = floor.opened
  const mb = (kb: number) => `${(kb / 1024).toFixed(1)}MB`
  console.log()
  console.log('Server process memory with 0, n and 2n idle sockets (median of 5 readings, each after a full GC); KB per socket = Δ / sockets opened')
  row(['case', 'RSS 0', `RSS ${n}`, `RSS ${2 * n}`, `KB 0→${n}`, `KB ${n}→${2 * n}`, `KB 0→${2 * n}`, 'ratio 0→max', 'heap KB 0→max'])
  const floorKb = perSocket(floor.rss, n).all
  for (const { name, memory: m } of prepared) {
    const s = perSocket(m.rss, m.opened)
    const [base, half, full] = m.rss
    const ratio = m === floor ? '' : `${(s.all / floorKb).toFixed(1)}×`
    row([name, mb(base), mb(half), mb(full), s.first.toFixed(1), s.second.toFixed(1), s.all.toFixed(1), ratio, perSocket(m.heap, m.opened).all.toFixed(1)])
  }
  console.log('(KB = KiB, as VmRSS counts; heap: the JavaScript heap in use, process.memoryUsage().heapUsed, part of the RSS)')
}

function verdicts(prepared: Prepared[], floor: Prepared): void {
  const floorP99 = percentile(floor.latencies[0]!.latency.deliveries, 99)
  const floorKb = perSocket(floor.memory.rss, floor.memory.opened).all
  console.log()
  if (floorP99 > TARGET_P99_MS) console.log(`${floor.name}: p99 ${ms(floorP99)}, over the target with no platform at all: this machine's own tail`)
  for (const p of prepared) {
    for (const { name, latency: l } of p.latencies) {
      const p99 = percentile(l.deliveries, 99)
      const met = p99 <= TARGET_P99_MS && l.lost === 0
      console.log(`${name}: p99 ${ms(p99)} (bare ${ms(floorP99)}, ${(p99 / floorP99).toFixed(1)}×), ${l.lost} lost; target ≤ ${TARGET_P99_MS} ms: ${met ? 'met' : 'NOT met'}`)
      recordFigure({ bench: 'ws-fanout', path: `${name}, answer to every socket (p99)`, figure: p99, baseline: floorP99, unit: 'ms', ratio: `${(p99 / floorP99).toFixed(1)}×`, target: `≤ ${TARGET_P99_MS} ms, none lost`, met })
    }
    const kb = perSocket(p.memory.rss, p.memory.opened).all
    console.log(`${p.name}: ${kb.toFixed(1)} KB per idle socket (bare ${floorKb.toFixed(1)} KB, ${(kb / floorKb).toFixed(1)}×); target ≤ ${TARGET_KB_PER_SOCKET} KB: ${kb <= TARGET_KB_PER_SOCKET ? 'met' : 'NOT met'}`)
    for (const line of p.complaints()) console.log(`  ${p.name} logged: ${line}`)
  }
}

// ---------------------------------------------------------------------------------------------------------------

async function main(): Promise<void> {
  const store = process.env.BENCH_STORE ?? 'both'
  if (!['embedded', 'postgres', 'both'].includes(store)) {
    console.error(`BENCH_STORE=${store} is not embedded, postgres or both`)
    process.exit(1)
  }
  const settings: Settings = {
    users: count('BENCH_USERS', 50),
    perUser: count('BENCH_SOCKETS_PER_USER', 10),
    messages: count('BENCH_MESSAGES', 200),
    interval: count('BENCH_INTERVAL_MS', 50),
    concurrency: count('BENCH_OPEN_CONCURRENCY', 8),
  }
  if (2 * settings.perUser > MAX_SOCKETS_PER_USER) {
    console.error(`BENCH_SOCKETS_PER_USER=${settings.perUser}: part 1 opens twice as many per user, over the platform's cap of ${MAX_SOCKETS_PER_USER}`)
    process.exit(1)
  }
  const { withDatabase } = await import('./harness.ts')
  console.log(
    `Bun ${Bun.version}, ${navigator.hardwareConcurrency} CPUs, load ${loadavg()}; ${settings.users} users × ${settings.perUser} sockets, ` +
      `${settings.messages} messages per case ${settings.interval} ms apart; stores: ${store}`,
  )

  const gcHook = join(tempDir('switchboard-bench-gc-'), 'gc-hook.ts')
  writeFileSync(gcHook, GC_HOOK)
  // The api throttle out of the way: 500 handshakes are 1000 api calls within seconds. The login throttle counts
  // only failed sign-ins, so it needs no change.
  const rates = { SWITCHBOARD_API_RATE_BURST: '1000000000', SWITCHBOARD_API_RATE_PER_SECOND: '1000000000' }
  const fanOut = new FanOut()
  const stops: Stops = []
  const prepared: Prepared[] = []

  const stopAll = async () => {
    for (const stop of stops.splice(0).reverse()) await stop().catch(() => {})
  }
  const allCases = () => prepared.flatMap((p) => p.latencies)

  const run = async () => {
    prepared.push(await prepareBare(settings, gcHook, fanOut, stops))
    if (store !== 'postgres') {
      const env: Env = { ...process.env, ...rates, DATABASE_URL: '', SWITCHBOARD_ADMIN_PASSWORD: crypto.randomUUID() }
      prepared.push(await preparePlatform('embedded', env, gcHook, settings, fanOut, stops, false))
    }
    if (store === 'embedded') return measureLatency(allCases(), fanOut, settings)
    databaseInUse = true
    // The latency of every case is measured in here, while the database exists; all is stopped before it is dropped.
    await withDatabase('web chat fan-out', async (env) => {
      try {
        // Both processes must read the same secrets.
        const shared = { ...env, ...rates, SWITCHBOARD_MASTER_KEY: crypto.randomUUID() + crypto.randomUUID() }
        prepared.push(await preparePlatform('postgres', shared, gcHook, settings, fanOut, stops, true))
        await measureLatency(allCases(), fanOut, settings)
      } finally {
        await stopAll()
      }
    })
  }

  try {
    await run()
  } finally {
    await stopAll()
    for (const dir of temporary) rmSync(dir, { recursive: true, force: true })
  }
  console.log(`load at the end ${loadavg()}`)
  if (fanOut.late > 0) console.log(`${fanOut.late} user_message frames came after their message was given up`)
  const floor = prepared[0]!
  reportLatency(allCases(), floor.latencies[0]!.latency, settings)
  reportMemory(prepared, floor.memory)
  verdicts(prepared.slice(1), floor)
}

// Last, so that every constant above is initialised whichever runs.
if (process.argv[2] === '--bare') bareServer()
else await main()
