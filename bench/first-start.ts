/**
 * First start benchmark: how long `npm start` takes to answer on a fresh embedded database, against a restart on
 * the data directory the first start made, measured in the same run. A hand-run benchmark, not a test.
 * Target: the first start answers within 1 s. Also reported: the resident memory (RSS) of the started platform once
 * it has sat idle for IDLE_MS after its first answer.
 *
 *   first start  `bun src/main.ts` on a new, empty data directory, as after `npm ci && npm start`: the database
 *                comes from the migrated template (src/db/pgdata-template.ts), the superadmin is created with a
 *                generated password (one argon2id hash), the master key file is written
 *   restart      the same command on the directory the first start left: the baseline, with nothing to create
 *   bare bun     a `bun -e` that serves one port: what spawning Bun and listening cost by themselves
 *   bare PGlite  bench/bare-pglite.ts on a new, empty data directory: Bun, the template unpacked and PGlite opened
 *                on it as the platform does, one statement, a port; PGlite alone, none of the platform. The floor of
 *                any first start on the embedded database on this machine: the target is only reachable where this
 *                is well under it. It runs first in odd rounds and last in even ones
 *
 * Each figure is the time from spawning the process to the first 200 answer of GET /api/docs, the API's documentation
 * page (the port is 0, so the address is read from what the process prints, then polled). The OpenAPI document
 * itself is generated on its first request, after the start. Processes are stopped with SIGTERM. The
 * template is built first if the cache lacks it (`npm ci` builds it), so that its one-off cost is not counted.
 *
 * Run:  node_modules/.bin/bun bench/first-start.ts
 * Environment (defaults in brackets): BENCH_ROUNDS  rounds; each figure is its median [3]
 */
import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { migratedTemplate, templatePath } from '../src/db/pgdata-template.ts'
import { ROUNDS, fail } from './harness.ts'
import { recordFigure } from './results.ts'

const TARGET_MS = 1_000
const IDLE_MS = 2_000
const MAIN = join(import.meta.dir, '..', 'src', 'main.ts')
const BARE_PGLITE = join(import.meta.dir, 'bare-pglite.ts')
const POLL_MS = 5
const GIVE_UP_MS = 60_000

// The platform's own variables are the run's, not the caller's: no DATABASE_URL, a generated admin password.
const baseEnv: Record<string, string | undefined> = { ...process.env, DATABASE_URL: '', SWITCHBOARD_ADMIN_PASSWORD: '' }
const BARE = [
  "const s = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: () => new Response('{}') })",
  "console.log('API and docs   http://127.0.0.1:' + s.port + '/api/docs')",
].join('\n')

const children = new Set<Bun.Subprocess>()
process.once('SIGINT', () => {
  for (const child of children) child.kill()
  process.exit(130)
})

const ms = (value: number) => `${value.toFixed(0)} ms`
const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)]!

/** The resident memory of a process, in MiB, from /proc (Linux). */
async function rssMib(pid: number): Promise<number> {
  const status = await Bun.file(`/proc/${pid}/status`).text()
  return Number(/^VmRSS:\s+(\d+) kB/m.exec(status)?.[1]) / 1024
}

/**
 * Spawns `cmd`, reads the api address it prints, polls until it answers; answers the milliseconds since spawning.
 * With `idle`, also what the process holds in memory after sitting that long without a request.
 */
async function timeToAnswer(cmd: string[], env: Record<string, string | undefined>, idle?: (pid: number) => Promise<void>): Promise<number> {
  const started = performance.now()
  const proc = Bun.spawn(cmd, { env, stdin: 'ignore', stdout: 'pipe', stderr: 'pipe' })
  children.add(proc)
  try {
    const reader = proc.stdout.pipeThrough(new TextDecoderStream()).getReader()
    let output = ''
    let address: RegExpExecArray | null
    while (!(address = /API and docs\s+(http:\/\/\S+?)\/api\/docs/.exec(output))) {
      const { value, done } = await reader.read()
      if (done) fail(`${cmd.join(' ')} stopped before printing its address:\n${output}${await new Response(proc.stderr).text()}`)
      output += value
    }
    // Keep reading, so a process that prints more never blocks on a full pipe.
    void (async () => {
      for (let r = await reader.read(); !r.done; r = await reader.read());
    })()
    const url = `${address[1]}/api/docs`
    for (;;) {
      const response = await fetch(url).catch(() => undefined)
      await response?.arrayBuffer()
      if (response?.status === 200) {
        const answered = performance.now() - started
        await idle?.(proc.pid)
        return answered
      }
      if (performance.now() - started > GIVE_UP_MS) fail(`${url} did not answer 200 within ${GIVE_UP_MS / 1000} s`)
      await Bun.sleep(POLL_MS)
    }
  } finally {
    proc.kill('SIGTERM')
    await proc.exited
    children.delete(proc)
  }
}

function platformEnv(dataDir: string) {
  return { ...baseEnv, SWITCHBOARD_DATA_DIR: dataDir, SWITCHBOARD_API_PORT: '0', SWITCHBOARD_ADMIN_PORT: '0' }
}

await migratedTemplate()
const TEMPLATE = templatePath()
console.log(`Bun ${Bun.version}, ${navigator.hardwareConcurrency} CPUs, ${ROUNDS} round(s)`)
const figures = { 'first start': [] as number[], restart: [] as number[], 'bare PGlite': [] as number[], 'bare bun': [] as number[] }
const memory = { platform: [] as number[], 'bare bun': [] as number[] }
const settle = (into: number[]) => async (pid: number) => {
  await Bun.sleep(IDLE_MS)
  into.push(await rssMib(pid))
}
for (let round = 1; round <= ROUNDS; round++) {
  const dataDir = mkdtempSync(join(tmpdir(), 'switchboard-bench-first-start-'))
  const floorDir = mkdtempSync(join(tmpdir(), 'switchboard-bench-bare-pglite-'))
  try {
    const bareFirstStart = () => timeToAnswer([process.execPath, BARE_PGLITE, TEMPLATE, floorDir], baseEnv)
    const early = round % 2 === 1 ? await bareFirstStart() : undefined
    const first = await timeToAnswer([process.execPath, MAIN], platformEnv(dataDir))
    const again = await timeToAnswer([process.execPath, MAIN], platformEnv(dataDir), settle(memory.platform))
    const bare = await timeToAnswer([process.execPath, '-e', BARE], baseEnv, settle(memory['bare bun']))
    const floor = early ?? (await bareFirstStart())
    console.log(`round ${round}: first start ${ms(first)}, restart ${ms(again)}, bare PGlite ${ms(floor)}, bare bun ${ms(bare)}`)
    figures['first start'].push(first)
    figures.restart.push(again)
    figures['bare PGlite'].push(floor)
    figures['bare bun'].push(bare)
  } finally {
    rmSync(dataDir, { recursive: true, force: true })
    rmSync(floorDir, { recursive: true, force: true })
  }
}

const first = median(figures['first start'])
const restart = median(figures.restart)
console.log()
console.log(`median of ${ROUNDS} round(s):`)
for (const [name, values] of Object.entries(figures)) console.log(`  ${name.padEnd(12)} ${ms(median(values)).padStart(9)}`)
console.log()
console.log(`first start ÷ restart = ${(first / restart).toFixed(2)}x`)
const verdict = first <= TARGET_MS ? 'met' : 'NOT met'
const floor = median(figures['bare PGlite'])
console.log(`first start ${(first / 1000).toFixed(2)} s, target ${TARGET_MS / 1000} s ${verdict}; bare PGlite ${(floor / 1000).toFixed(2)} s, the least any start on it takes here`)
const [rss, bareRss] = [median(memory.platform), median(memory['bare bun'])]
console.log(`idle RSS ${IDLE_MS / 1000} s after the first answer: platform ${rss.toFixed(0)} MiB, bare bun ${bareRss.toFixed(0)} MiB`)
recordFigure({ bench: 'first-start', path: 'first start on a fresh data directory', figure: first, baseline: restart, unit: 'ms', ratio: `${(first / restart).toFixed(2)}× a restart`, target: `≤ ${TARGET_MS} ms`, met: first <= TARGET_MS })
recordFigure({ bench: 'first-start', path: 'floor: bare PGlite, first start (no platform)', figure: floor, baseline: first, unit: 'ms', ratio: `${(floor / first).toFixed(2)}× the platform's`, target: '', met: null })
recordFigure({ bench: 'first-start', path: 'idle RSS of a started platform', figure: rss, baseline: bareRss, unit: 'MiB', ratio: `${(rss / bareRss).toFixed(1)}× bare bun`, target: 'reported', met: null })
