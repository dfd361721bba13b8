/**
 * Every benchmark with a target, one after the other (`npm run bench`), then one table of their figures (path,
 * figure, baseline, ratio, target, met) and the same as JSON in bench-results.json (BENCH_RESULTS to put it
 * elsewhere). Each benchmark prints its own report as it goes; see each file for what it measures and how.
 * Ctrl-C stops the one running (it cleans up after itself: its servers, processes and database) and the rest.
 *
 * Run:  npm run bench          BENCH_ONLY=crud,chat  to run some of them
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import type { Figure } from './results.ts'

const BENCHES = ['crud', 'mcp', 'chat', 'ws-fanout', 'first-start']
const only = process.env.BENCH_ONLY?.split(',').map((name) => name.trim())
const chosen = only ? BENCHES.filter((name) => only.includes(name)) : BENCHES
const output = process.env.BENCH_RESULTS ?? 'bench-results.json'

const scratch = mkdtempSync(join(tmpdir(), 'switchboard-bench-'))
const resultsFile = join(scratch, 'figures.jsonl')
writeFileSync(resultsFile, '')

let running: Bun.Subprocess | undefined
let interrupted = false
process.on('SIGINT', () => {
  // The benchmark got the same Ctrl-C from the terminal; a signal sent to this process alone is passed on.
  interrupted = true
  running?.kill('SIGINT')
})

const failed: string[] = []
for (const name of chosen) {
  if (interrupted) break
  console.log(`\n=== bench/${name}.ts ===`)
  running = Bun.spawn([process.execPath, join(import.meta.dir, `${name}.ts`)], {
    stdio: ['inherit', 'inherit', 'inherit'],
    env: { ...process.env, BENCH_RESULTS_FILE: resultsFile },
  })
  const code = await running.exited
  running = undefined
  if (code !== 0) failed.push(`${name} (exit ${code})`)
}

const figures = readFileSync(resultsFile, 'utf8').split('\n').filter(Boolean).map((line) => JSON.parse(line) as Figure)
rmSync(scratch, { recursive: true, force: true })

const number = (value: number | null, unit: string) => (value === null ? '' : `${value >= 100 ? value.toFixed(0) : value.toFixed(2)} ${unit}`)
const rows = [
  ['path', 'figure', 'baseline', 'ratio', 'target', 'met'],
  ...figures.map((f) => [`${f.bench}: ${f.path}`, number(f.figure, f.unit), number(f.baseline, f.unit), f.ratio, f.target, f.met === null ? '' : f.met ? 'yes' : 'NO']),
]
const widths = rows[0]!.map((_, column) => Math.max(...rows.map((row) => row[column]!.length)))
console.log(`\n=== ${figures.length} figures, ${new Date().toISOString()} ===`)
for (const row of rows) console.log(row.map((cell, column) => cell.padEnd(widths[column]!)).join('  ').trimEnd())
const judged = figures.filter((f) => f.met !== null)
console.log(`${judged.filter((f) => f.met).length} of ${judged.length} targets met${failed.length ? `; failed: ${failed.join(', ')}` : ''}${interrupted ? '; interrupted' : ''}`)
writeFileSync(output, `${JSON.stringify({ at: new Date().toISOString(), bun: Bun.version, cpus: navigator.hardwareConcurrency, figures, failed }, null, 2)}\n`)
console.log(`written to ${output}`)
process.exit(interrupted ? 130 : failed.length ? 1 : 0)
