/** Time as the kernel sees it; tests pass a clock they can move instead of sleeping. */
export interface Clock {
  now(): number
}

export const systemClock: Clock = { now: () => Date.now() }

export function manualClock(start = Date.parse('2026-11-21T09:00:00Z')) {
  let time = start
  return {
    now: () => time,
    advance(ms: number) {
      time += ms
    },
  }
}
