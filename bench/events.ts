/**
 * Shared-state benchmark: what several processes on one PostgreSQL pay for sharing state through it. A hand-run
 * benchmark, not a test. Two parts, each against a baseline measured in the same run:
 *
 * 1. Event latency (src/events/). A second OS process (this file, run with --receiver) opens its own store and
 *    PostgresBus and answers every ping event (`turn.abort`, whose conversation_id carries the peer's name, a
 *    sequence number and the sender's wall clock) with a pong that carries the time it heard the ping. The sender
 *    records the one-way time (the receiver's wall clock minus its own: both processes read
 *    performance.timeOrigin + performance.now() on one host) and the round trip, RTT/2 being the one-way figure
 *    that needs no clock agreement. Three scenarios: paced (BENCH_EVENTS pings, one every BENCH_EVENT_INTERVAL_MS,
 *    sent on schedule whether or not the pongs are back), a burst (BENCH_BURST pings published at once), and a
 *    large payload (over NOTIFY's 8000 bytes, so it travels as a row of event_payloads and the notification
 *    carries its id; the pong is as large). Baselines: the same scenarios against a second PostgresBus in this
 *    process (same path through PostgreSQL, no process boundary), the MemoryBus (publish → subscriber, in
 *    process), and a PostgresBus's own local subscriber (called before publish() sends the NOTIFY).
 *    Target (issue): across processes, an event is heard within 100 ms at p99.
 *
 * 2. Throttle buckets (src/throttle/). PostgresBucketStore.take (one upsert per take, on a pool of BENCH_POOL
 *    connections) against MemoryBucketStore.take: latency per take one at a time, and throughput with 16 takes in
 *    flight, over 1000 keys in turn and over one hot key, in BENCH_ROUNDS rounds with the stores' order flipped
 *    each round (latencies pooled over the rounds, throughput the median round). Then the same through the api:
 *    GET /api/v1/AgentConfigRecord with a bearer token on two platforms built in this process on the same
 *    database, SWITCHBOARD_THROTTLE_STORE=shared and =memory, requests alternating between them
 *    (api.request, no socket), to give the microseconds the shared bucket adds to a request at p50.
 *
 * It creates a fresh database sb_bench_<random>, migrates it, and drops it at the end (bench/harness.ts
 * withDatabase). Takes about a minute with the defaults.
 *
 * Run:  node_modules/.bin/bun bench/events.ts
 * Environment (defaults in brackets):
 *   BENCH_DATABASE_URL       admin connection, or else TEST_DATABASE_URL [postgres://postgres@127.0.0.1:5432/postgres]
 *   BENCH_POOL               pool size of each store [10]
 *   BENCH_ROUNDS             throttle rounds, stores alternating [3]
 *   BENCH_EVENTS             paced pings per peer [2000]
 *   BENCH_EVENT_INTERVAL_MS  time between paced pings [5]
 *   BENCH_BURST              pings published at once [500]
 *   BENCH_LARGE              large-payload pings per peer, paced like the others [200]
 *   BENCH_TAKES              takes per throttle case and round; 4× that with 16 in flight [5000]
 *   BENCH_REQUESTS           api requests per throttle store [2000]
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { loadConfig } from '../src/config.ts'
import { openPostgres, type Store } from '../src/db/connect.ts'
import { migrate } from '../src/db/migrate.ts'
import type { EventBus } from '../src/events/bus.ts'
import { MemoryBus } from '../src/events/memory.ts'
import { PostgresBus } from '../src/events/postgres.ts'
import { silentLogger } from '../src/logger.ts'
import { createPlatform, type Platform } from '../src/platform.ts'
import { MemoryBucketStore, type BucketStore } from '../src/throttle/buckets.ts'
import { PostgresBucketStore } from '../src/throttle/postgres.ts'

const TARGET_P99_MS = 100

/** Milliseconds on the wall clock, comparable between processes on one host. */
const wallClock = () => performance.timeOrigin + performance.now()

/**
 * Answers pings addressed to `name` (`ping:<name>:<seq>:<sent>:<padding>`) with `pong:<name>:<seq>:<heard>:<padding>`,
 * the padding sent back so that a large ping gets a large pong. `quit:<name>` calls onQuit.
 */
function echo(bus: EventBus, name: string, onQuit: () => void = () => {}): () => void {
  return bus.subscribe('turn.abort', ({ conversation_id: id }, origin) => {
    if (origin !== 'elsewhere') return
    if (id === `quit:${name}`) return onQuit()
    if (!id.startsWith(`ping:${name}:`)) return
    const heard = wallClock()
    const [, , seq, , padding = ''] = id.split(':')
    bus.publish('turn.abort', { conversation_id: `pong:${name}:${seq}:${heard}:${padding}` }).catch((error) => {
      console.error(`the ${name} peer could not answer: ${(error as Error).message}`)
    })
  })
}

/** The second process: its own store and bus, echoing until told to quit or until its parent goes (stdin closes). */
async function receiver(url: string): Promise<void> {
  const store = openPostgres(url, 2)
  const bus = await PostgresBus.connect(url, store.db, silentLogger)
  const { promise: quit, resolve } = Promise.withResolvers<void>()
  echo(bus, 'process', resolve)
  void (async () => {
    for await (const _ of Bun.stdin.stream());
    resolve()
  })()
  console.log('ready')
  await quit
  await bus.close()
  await store.close()
  process.exit(0)
}

// ---------------------------------------------------------------------------------------------------------------

function percentile(values: readonly number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? NaN
}

/** A duration in milliseconds, in µs below one. */
function time(ms: number): string {
  if (!Number.isFinite(ms)) return '-'
  return ms < 1 ? `${(ms * 1000).toFixed(ms < 0.01 ? 2 : 1)}µs` : `${ms.toFixed(2)}ms`
}

function table(widths: number[]) {
  return (cells: string[]) => console.log(cells.map((cell, i) => (i === 0 ? cell.padEnd(widths[0]!) : cell.padStart(widths[i] ?? 10))).join(' ').trimEnd())
}

interface Echoes {
  oneWay: number[]
  rtt: number[]
  lost: number
  /** From the first ping sent to the last pong heard. */
  elapsed: number
}

/** Pings a peer over `bus`, collecting the pongs: `interval` 0 publishes them all at once. */
class Pinger {
  #seq = 0
  readonly #pending = new Map<number, { sentAt: number; heard: (oneWay: number, rtt: number) => void }>()

  constructor(private readonly bus: EventBus) {
    bus.subscribe('turn.abort', ({ conversation_id: id }, origin) => {
      if (origin !== 'elsewhere' || !id.startsWith('pong:')) return
      const [, , seq, heard] = id.split(':')
      const ping = this.#pending.get(Number(seq))
      if (!ping) return
      this.#pending.delete(Number(seq))
      ping.heard(Number(heard) - ping.sentAt, performance.now() - (ping.sentAt - performance.timeOrigin))
    })
  }

  async run(peer: string, count: number, interval: number, padding = ''): Promise<Echoes> {
    const echoes: Echoes = { oneWay: [], rtt: [], lost: 0, elapsed: 0 }
    const { promise: all, resolve } = Promise.withResolvers<void>()
    const seqs: number[] = []
    let outstanding = count
    const start = performance.now()
    const sends: Promise<void>[] = []
    for (let i = 0; i < count; i++) {
      if (interval > 0) {
        const wait = start + i * interval - performance.now()
        if (wait > 0) await Bun.sleep(wait)
      }
      const seq = ++this.#seq
      seqs.push(seq)
      const sentAt = wallClock()
      this.#pending.set(seq, {
        sentAt,
        heard: (oneWay, rtt) => {
          echoes.oneWay.push(oneWay)
          echoes.rtt.push(rtt)
          if (--outstanding === 0) resolve()
        },
      })
      sends.push(this.bus.publish('turn.abort', { conversation_id: `ping:${peer}:${seq}:${sentAt}:${padding}` }))
    }
    await Promise.all(sends)
    const timeout = setTimeout(resolve, 5_000)
    await all
    clearTimeout(timeout)
    echoes.elapsed = performance.now() - start
    for (const seq of seqs) if (this.#pending.delete(seq)) echoes.lost++
    return echoes
  }
}

/** Runs this file as the receiver process and waits until it listens. */
async function startReceiver(url: string) {
  const proc = Bun.spawn([process.execPath, import.meta.path, '--receiver', url], { stdin: 'pipe', stdout: 'pipe', stderr: 'inherit' })
  const reader = proc.stdout.getReader()
  let text = ''
  while (!text.includes('ready\n')) {
    const { done, value } = await reader.read()
    if (done) throw new Error('the receiver process exited before it listened')
    text += new TextDecoder().decode(value)
  }
  reader.releaseLock()
  return proc
}

async function eventLatency(url: string, store: Store): Promise<void> {
  const events = Number(process.env.BENCH_EVENTS ?? 2000)
  const interval = Number(process.env.BENCH_EVENT_INTERVAL_MS ?? 5)
  const burst = Number(process.env.BENCH_BURST ?? 500)
  const large = Number(process.env.BENCH_LARGE ?? 200)
  const padding = 'x'.repeat(10_000)

  // In-process baselines: the MemoryBus, and a PostgresBus's own subscriber (called inside publish()).
  const inProcess = async (bus: EventBus, count: number) => {
    let heardAt = 0
    const delivered: number[] = []
    const published: number[] = []
    const unsubscribe = bus.subscribe('turn.abort', ({ conversation_id }) => {
      if (conversation_id === 'local') heardAt = performance.now()
    })
    for (let i = 0; i < count; i++) {
      const start = performance.now()
      await bus.publish('turn.abort', { conversation_id: 'local' })
      published.push(performance.now() - start)
      delivered.push(heardAt - start)
    }
    unsubscribe()
    return { delivered, published }
  }
  const memoryBus = new MemoryBus(silentLogger)
  await inProcess(memoryBus, 10_000)
  const memory = await inProcess(memoryBus, 100_000)

  const bus = await PostgresBus.connect(url, store.db, silentLogger)
  const pinger = new Pinger(bus)
  await inProcess(bus, 200)
  const local = await inProcess(bus, events)

  const scenarios = async (peer: string) => {
    await pinger.run(peer, 100, 2) // warm-up
    const paced = await pinger.run(peer, events, interval)
    const burstEchoes = await pinger.run(peer, burst, 0)
    await Bun.sleep(200)
    const largeEchoes = await pinger.run(peer, large, interval, padding)
    return { paced, burst: burstEchoes, large: largeEchoes }
  }

  console.log(`events: same process (a second PostgresBus with its own pool) ...`)
  const peerStore = openPostgres(url, 2)
  const peerBus = await PostgresBus.connect(url, peerStore.db, silentLogger)
  echo(peerBus, 'same')
  const same = await scenarios('same')
  await peerBus.close()
  await peerStore.close()

  console.log(`events: across processes (bun ${import.meta.file} --receiver) ...`)
  const proc = await startReceiver(url)
  let cross: Awaited<ReturnType<typeof scenarios>>
  try {
    cross = await scenarios('process')
    await bus.publish('turn.abort', { conversation_id: 'quit:process' })
    const exited = await Promise.race([proc.exited, Bun.sleep(3_000).then(() => undefined)])
    if (exited === undefined) proc.kill()
  } finally {
    proc.kill()
    await proc.exited
  }
  await bus.close()

  const row = table([44, 6, 10, 10, 10, 6, 16])
  console.log()
  console.log(`event latency, publish → subscriber (paced: one every ${interval} ms; burst: ${burst} at once; large: ${padding.length + 30} bytes, by row)`)
  row(['case', 'n', 'p50', 'p99', 'max', 'lost', 'ratio p50 / p99'])
  const line = (name: string, values: number[], lost = 0, base?: number[]) => {
    const ratio = base ? `${(percentile(values, 50) / percentile(base, 50)).toFixed(1)}× / ${(percentile(values, 99) / percentile(base, 99)).toFixed(1)}×` : ''
    row([name, String(values.length), time(percentile(values, 50)), time(percentile(values, 99)), time(Math.max(...values)), String(lost), ratio])
  }
  line('memory bus, in process', memory.delivered)
  line('postgres bus, own local subscriber', local.delivered)
  line('postgres bus, publish() resolved (NOTIFY)', local.published)
  const half = (values: number[]) => values.map((v) => v / 2)
  for (const scenario of ['paced', 'burst', 'large'] as const) {
    const s = same[scenario]
    const c = cross[scenario]
    line(`${scenario}: same process, one-way`, s.oneWay, s.lost)
    line(`${scenario}: same process, RTT`, s.rtt, s.lost)
    line(`${scenario}: across processes, one-way (clock)`, c.oneWay, c.lost, s.oneWay)
    line(`${scenario}: across processes, RTT/2`, half(c.rtt), c.lost, half(s.rtt))
    line(`${scenario}: across processes, RTT`, c.rtt, c.lost, s.rtt)
  }
  console.log('(ratio: across processes ÷ the same process, same scenario)')
  console.log()
  const drained = (e: Echoes) => `${e.oneWay.length} events heard ${time(Math.max(...e.oneWay))} after the first was sent`
  console.log(`burst: across processes ${drained(cross.burst)}; in one process ${drained(same.burst)}`)
  const p50 = (values: number[]) => percentile(values, 50)
  console.log(
    `paced one-way p50: across processes ${time(p50(cross.paced.oneWay))} = ${(p50(cross.paced.oneWay) / p50(memory.delivered)).toFixed(0)}× the memory bus ` +
      `(${time(p50(memory.delivered))}), ${(p50(cross.paced.oneWay) / p50(same.paced.oneWay)).toFixed(2)}× the same process through PostgreSQL (${time(p50(same.paced.oneWay))})`,
  )
  for (const scenario of ['paced', 'burst', 'large'] as const) {
    const c = cross[scenario]
    const p99 = Math.max(percentile(c.oneWay, 99), percentile(half(c.rtt), 99))
    const ok = c.lost === 0 && p99 <= TARGET_P99_MS
    console.log(
      `${scenario}: across processes one-way p99 ${time(percentile(c.oneWay, 99))} (clock), ${time(percentile(half(c.rtt), 99))} (RTT/2), ` +
        `${c.lost} lost; target ≤ ${TARGET_P99_MS} ms at p99: ${ok ? 'PASS' : 'FAIL'}`,
    )
  }
}

// ---------------------------------------------------------------------------------------------------------------

interface Takes {
  latencies: number[]
  perSecond: number
}

// Never empty: every take is allowed, so both stores do the same work on every call.
const RATE = { burst: 1e9, perSecond: 1e9 }

async function takes(store: BucketStore, keys: readonly string[], concurrency: number, total: number): Promise<Takes> {
  const latencies: number[] = []
  let next = 0
  const start = performance.now()
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < total) {
        const key = keys[next++ % keys.length]!
        const t = performance.now()
        const take = await store.take(key, RATE, Date.now())
        latencies.push(performance.now() - t)
        if (!take.allowed) throw new Error(`a take from ${key} was refused`)
      }
    }),
  )
  return { latencies, perSecond: total / ((performance.now() - start) / 1000) }
}

async function throttleCost(url: string, pool: number, rounds: number): Promise<void> {
  const total = Number(process.env.BENCH_TAKES ?? 5000)
  const shared = openPostgres(url, pool)
  const stores: Record<string, BucketStore> = { memory: new MemoryBucketStore(), shared: new PostgresBucketStore(shared.db) }
  const keySets: Record<string, string[]> = {
    '1000 keys': Array.from({ length: 1000 }, (_, i) => `api:user:${crypto.randomUUID()}-${i}`),
    '1 hot key': [`api:user:${crypto.randomUUID()}`],
  }
  const cases = Object.keys(keySets).flatMap((keys) => [1, 16].map((concurrency) => ({ keys, concurrency })))
  const results = new Map<string, Takes[]>()
  console.log(`throttle: ${rounds} round(s) of ${cases.length} cases per store ...`)
  try {
    for (const store of Object.values(stores)) for (const keys of Object.values(keySets)) await takes(store, keys, 4, Math.max(1000, keys.length)) // warm-up
    for (let round = 1; round <= rounds; round++) {
      const order = round % 2 === 1 ? ['memory', 'shared'] : ['shared', 'memory']
      for (const name of order) {
        for (const { keys, concurrency } of cases) {
          const result = await takes(stores[name]!, keySets[keys]!, concurrency, concurrency === 1 ? total : total * 4)
          const key = `${name} ${keys} ${concurrency}`
          results.set(key, [...(results.get(key) ?? []), result])
        }
      }
    }
  } finally {
    await shared.close()
  }

  const row = table([10, 10, 5, 8, 10, 10, 11, 30])
  console.log()
  console.log(`token bucket take(), ${rounds} round(s) (latencies pooled, takes/s the median round); shared = PostgreSQL, pool ${pool}`)
  row(['store', 'keys', 'conc', 'n', 'p50', 'p99', 'takes/s', 'shared ÷ memory: p50, takes/s'])
  for (const { keys, concurrency } of cases) {
    const summary = (name: string) => {
      const all = results.get(`${name} ${keys} ${concurrency}`)!
      const perSecond = all.map((r) => r.perSecond).sort((a, b) => a - b)[Math.floor(all.length / 2)]!
      const latencies = all.flatMap((r) => r.latencies)
      return { latencies, perSecond, p50: percentile(latencies, 50), p99: percentile(latencies, 99) }
    }
    const memory = summary('memory')
    const db = summary('shared')
    for (const [name, s] of [['memory', memory], ['shared', db]] as const) {
      const ratio = name === 'shared' ? `${(db.p50 / memory.p50).toFixed(0)}×, ${(db.perSecond / memory.perSecond).toFixed(4)}×` : ''
      row([name, keys, String(concurrency), String(s.latencies.length), time(s.p50), time(s.p99), s.perSecond.toFixed(0), ratio])
    }
  }
}

// ---------------------------------------------------------------------------------------------------------------

async function throttleThroughApi(env: Record<string, string | undefined>, pool: number): Promise<void> {
  const requests = Number(process.env.BENCH_REQUESTS ?? 2000)
  const dataDir = mkdtempSync(join(tmpdir(), 'switchboard-bench-'))
  const masterKey = crypto.randomUUID() + crypto.randomUUID()
  const opened: { store: Store; platform: Platform }[] = []
  try {
    const start = async (throttleStore: 'shared' | 'memory') => {
      const config = loadConfig({ ...env, SWITCHBOARD_DATA_DIR: dataDir, SWITCHBOARD_MASTER_KEY: masterKey, SWITCHBOARD_THROTTLE_STORE: throttleStore })
      const store = openPostgres(config.databaseUrl!, pool)
      const platform = await createPlatform(config, store, silentLogger)
      opened.push({ store, platform })
      return { api: platform.api, config }
    }
    const memory = await start('memory')
    const shared = await start('shared')

    const json = { 'content-type': 'application/json', accept: 'application/json' }
    const login = await memory.api.request('/auth/login', {
      method: 'POST',
      headers: json,
      body: JSON.stringify({ username: 'admin', password: memory.config.initialAdmin.password }),
    })
    if (login.status !== 200) throw new Error(`signing in failed: ${login.status} ${await login.text()}`)
    const cookie = login.headers.get('set-cookie')!.split(';')[0]!
    const made = await memory.api.request('/api/v1/ApiToken', { method: 'POST', headers: { ...json, cookie }, body: '{"name":"bench"}' })
    if (made.status !== 201) throw new Error(`making an API token failed: ${made.status} ${await made.text()}`)
    const { token } = (await made.json()) as { token: string }
    const headers = { accept: 'application/json', authorization: `Bearer ${token}` }

    const request = async (api: typeof memory.api): Promise<number> => {
      const t = performance.now()
      const response = await api.request('/api/v1/AgentConfigRecord', { headers })
      await response.arrayBuffer()
      const elapsed = performance.now() - t
      if (response.status !== 200) throw new Error(`GET /api/v1/AgentConfigRecord answered ${response.status}`)
      if (!response.headers.get('ratelimit')) throw new Error('the answer has no RateLimit header: the throttle did not run')
      return elapsed
    }
    console.log(`throttle through the api: ${requests} requests per store, alternating ...`)
    const times = { memory: [] as number[], shared: [] as number[] }
    // Alternating, and which goes first flips each time, so neither gains from the other's warm caches.
    for (let i = 0; i < 200 + requests; i++) {
      let m: number
      let s: number
      if (i % 2 === 0) {
        m = await request(memory.api)
        s = await request(shared.api)
      } else {
        s = await request(shared.api)
        m = await request(memory.api)
      }
      if (i >= 200) {
        times.memory.push(m)
        times.shared.push(s)
      }
    }

    const row = table([36, 6, 10, 10, 10])
    console.log()
    console.log('GET /api/v1/AgentConfigRecord through the api app (in process, no socket), by throttle store')
    row(['SWITCHBOARD_THROTTLE_STORE', 'n', 'p50', 'p90', 'p99'])
    for (const [name, values] of Object.entries(times)) {
      row([name, String(values.length), ...[50, 90, 99].map((p) => time(percentile(values, p)))])
    }
    const [s50, m50] = [percentile(times.shared, 50), percentile(times.memory, 50)]
    console.log()
    console.log(
      `api request p50: shared ${time(s50)} − memory ${time(m50)} = ${((s50 - m50) * 1000).toFixed(0)} µs added by the shared bucket ` +
        `(ratio ${(s50 / m50).toFixed(2)}×, same run)`,
    )
  } finally {
    for (const { store, platform } of opened.reverse()) {
      await platform.close()
      await store.close()
    }
    rmSync(dataDir, { recursive: true, force: true })
  }
}

// ---------------------------------------------------------------------------------------------------------------

async function main(): Promise<void> {
  // bench/harness.ts reads BENCH_DATABASE_URL when it loads; TEST_DATABASE_URL is this bench's second choice.
  if (!process.env.BENCH_DATABASE_URL && process.env.TEST_DATABASE_URL) process.env.BENCH_DATABASE_URL = process.env.TEST_DATABASE_URL
  const { POOL, ROUNDS, fail, withDatabase } = await import('./harness.ts')
  for (const name of ['BENCH_EVENTS', 'BENCH_EVENT_INTERVAL_MS', 'BENCH_BURST', 'BENCH_LARGE', 'BENCH_TAKES', 'BENCH_REQUESTS']) {
    const value = process.env[name]
    if (value !== undefined && !/^[1-9]\d*$/.test(value)) fail(`${name}=${value} is not a positive whole number`)
  }
  await withDatabase('event bus and throttle buckets', async (env) => {
    const url = env.DATABASE_URL!
    const store = openPostgres(url, Number(POOL))
    try {
      await migrate(store.db)
      await eventLatency(url, store)
      console.log()
      await throttleCost(url, Number(POOL), ROUNDS)
      console.log()
      await throttleThroughApi(env, Number(POOL))
    } finally {
      await store.close()
    }
  })
}

// Last, so that every constant above is initialised whichever runs.
if (process.argv[2] === '--receiver') await receiver(process.argv[3]!)
else await main()
