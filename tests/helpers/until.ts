export interface UntilOptions {
  /** What is awaited, as the failure message should name it: "the killed upstream's connection to be dropped". */
  what: string
  /** How long to keep asking before failing (default 5 s): generous, since a loaded CI machine is slow. */
  timeoutMs?: number
  /** Pause between two asks (default 20 ms). */
  intervalMs?: number
}

/**
 * Asks `condition` until it answers something truthy, and returns that; fails naming `what` once `timeoutMs` has
 * passed. Use it instead of sleeping "long enough" for something to happen: it returns as soon as the thing has
 * happened, and when it never does the failure says what was missing rather than some later assertion failing
 * for no visible reason. A condition that throws counts as "not yet"; its last error is quoted on failure.
 */
export async function until<T>(condition: () => T | Promise<T>, { what, timeoutMs = 5_000, intervalMs = 20 }: UntilOptions): Promise<NonNullable<T>> {
  const deadline = Date.now() + timeoutMs
  let lastError: unknown
  for (;;) {
    try {
      const value = await condition()
      if (value) return value as NonNullable<T>
      lastError = undefined
    } catch (error) {
      lastError = error
    }
    if (Date.now() >= deadline) {
      const reason = lastError === undefined ? '' : ` (last attempt threw: ${lastError instanceof Error ? lastError.message : String(lastError)})`
      throw new Error(`Gave up after ${timeoutMs} ms waiting for ${what}${reason}.`, { cause: lastError })
    }
    await Bun.sleep(Math.min(intervalMs, Math.max(0, deadline - Date.now())))
  }
}

/**
 * Whether `promise` has settled once everything already queued has run: for checking that something has *not*
 * happened yet (a stop still waiting for a turn), where polling would only wait out the timeout.
 */
export async function hasSettled(promise: Promise<unknown>): Promise<boolean> {
  let settled = false
  promise.then(
    () => (settled = true),
    () => (settled = true),
  )
  // One macrotask turn: every microtask queued before it (a chain of resolutions included) has run by then.
  await new Promise((resolve) => setImmediate(resolve))
  return settled
}
