import { appendFileSync } from 'node:fs'

/**
 * One figure a benchmark measured against its target: what `npm run bench` (bench/all.ts) gathers into its table.
 * `figure` and `baseline` are in `unit`; `ratio` is how the target reads them (figure ÷ baseline, or figure −
 * baseline for an added latency); `met` is null where the benchmark only reports.
 */
export interface Figure {
  bench: string
  path: string
  figure: number
  baseline: number | null
  unit: string
  ratio: string
  target: string
  met: boolean | null
}

/** Hands a figure to bench/all.ts when it runs this benchmark (BENCH_RESULTS_FILE); a benchmark run alone just prints. */
export function recordFigure(figure: Figure): void {
  const file = process.env.BENCH_RESULTS_FILE
  if (file) appendFileSync(file, `${JSON.stringify(figure)}\n`)
}
