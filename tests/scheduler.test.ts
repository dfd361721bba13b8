import { expect, test } from 'bun:test'
import { silentLogger } from '../src/logger.ts'
import { Scheduler } from '../src/scheduler.ts'
import { until } from './helpers/until.ts'

// Barriers, not sleeps: "it did not run again" is judged after a witness job on the same timers has run several
// times, long after the stopped one would have.

/** A gate a run waits at until the test opens it. */
function gate() {
  let open!: () => void
  const opened = new Promise<void>((resolve) => (open = resolve))
  return { opened, open }
}

/** Resolves once a fresh job with the same interval has run `times` times: the stopped one would have run by now. */
async function timersMoveOn(intervalMs: number, times = 4): Promise<void> {
  const witness = new Scheduler(silentLogger)
  let runs = 0
  witness.every('witness', intervalMs, () => void runs++)
  await until(() => runs >= times, { what: `the witness job to run ${times} times` })
  await witness.stop()
}

test('a job runs at start when asked, then every interval, never two runs at once', async () => {
  const scheduler = new Scheduler(silentLogger)
  let runs = 0
  let running = false
  let overlapped = false
  scheduler.every(
    'sweep',
    5,
    async () => {
      if (running) overlapped = true
      running = true
      runs++
      await new Promise((resolve) => setTimeout(resolve, 15))
      running = false
    },
    { now: true },
  )
  expect(runs).toBe(1)
  await until(() => runs >= 3, { what: 'three runs' })
  await scheduler.stop()
  expect(running).toBe(false)
  expect(overlapped).toBe(false)
})

test('stop waits for the run under way, and no run follows', async () => {
  const scheduler = new Scheduler(silentLogger)
  const held = gate()
  let runs = 0
  let finished = false
  scheduler.every(
    'held',
    5,
    async () => {
      runs++
      await held.opened
      finished = true
    },
    { now: true },
  )
  const stopped = scheduler.stop()
  let stoppedYet = false
  void stopped.then(() => (stoppedYet = true))
  await Promise.resolve()
  expect(stoppedYet).toBe(false)
  held.open()
  await stopped
  expect(finished).toBe(true)
  await timersMoveOn(5)
  expect(runs).toBe(1)
})

test('a job asked for after stop never runs', async () => {
  const scheduler = new Scheduler(silentLogger)
  await scheduler.stop()
  let runs = 0
  scheduler.every('late', 5, () => void runs++, { now: true })
  await timersMoveOn(5)
  expect(runs).toBe(0)
})

test('a failing run is logged by the job’s name and the job goes on', async () => {
  const warnings: string[] = []
  const scheduler = new Scheduler({ ...silentLogger, warn: (message: string) => void warnings.push(message) })
  let runs = 0
  scheduler.every('sweeping expired artifacts', 5, () => {
    runs++
    throw new Error('store away')
  })
  await until(() => runs >= 2, { what: 'a second run after a failure' })
  await scheduler.stop()
  expect(warnings[0]).toBe('sweeping expired artifacts failed')
})

test('woken during a run, a job runs once more right after it, however often it was woken', async () => {
  const scheduler = new Scheduler(silentLogger)
  const held = gate()
  let runs = 0
  const job = scheduler.every(
    'queue',
    60_000,
    async () => {
      runs++
      if (runs === 1) await held.opened
    },
    { now: true },
  )
  job.wake()
  job.wake()
  job.wake()
  held.open()
  await until(() => runs >= 2, { what: 'the run asked for during the first' })
  await timersMoveOn(5)
  expect(runs).toBe(2)
  await scheduler.stop()
})

test('wakeIn brings the next run forward, and never puts it off past the interval', async () => {
  const scheduler = new Scheduler(silentLogger)
  let runs = 0
  const job = scheduler.every('retries', 60_000, () => void runs++)
  job.wakeIn(5)
  await until(() => runs === 1, { what: 'the run brought forward' })
  // Asked for later than the interval: the interval stands (a run within the minute, not in an hour); asked during
  // a quiet spell for sooner, it comes sooner.
  job.wakeIn(3_600_000)
  job.wakeIn(5)
  await until(() => runs === 2, { what: 'the second run brought forward' })
  await scheduler.stop()
})

test('an interval that is not a positive number is refused', () => {
  const scheduler = new Scheduler(silentLogger)
  for (const bad of [0, -1, Number.NaN]) expect(() => scheduler.every('bad', bad, () => {})).toThrow('the interval must be a positive number')
})
