/**
 * A turn ends when it is stopped, whatever its runner or tools do: they are told through the signal, and not waited
 * for. A runner that ignores its signal (a stuck provider, a plugin's bug) must not hold the conversation's lock.
 */

/** The items of `source` until `signal` aborts; then it ends at once, without waiting for the source to notice. */
export async function* untilAborted<T>(source: AsyncIterable<T>, signal: AbortSignal): AsyncGenerator<T> {
  if (signal.aborted) return
  const iterator = source[Symbol.asyncIterator]()
  const aborted = whenAborted(signal)
  try {
    for (;;) {
      const next = await Promise.race([iterator.next(), aborted])
      if (next === ABORTED || next.done) return
      yield next.value
    }
  } finally {
    // Told to finish, not waited for.
    void Promise.resolve()
      .then(() => iterator.return?.())
      .catch(() => {})
  }
}

/** What `work` settles to, unless `signal` aborts first: then it rejects at once with the signal's reason. */
export async function unlessAborted<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  const outcome = await Promise.race([work, whenAborted(signal)])
  if (outcome === ABORTED) {
    work.catch(() => {}) // settles later, unheard
    throw signal.reason instanceof Error ? signal.reason : new Error('stopped')
  }
  return outcome as T
}

const ABORTED: unique symbol = Symbol('aborted')

function whenAborted(signal: AbortSignal): Promise<typeof ABORTED> {
  if (signal.aborted) return Promise.resolve(ABORTED)
  return new Promise((resolve) => signal.addEventListener('abort', () => resolve(ABORTED), { once: true }))
}
