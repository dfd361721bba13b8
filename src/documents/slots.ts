/** The line is full: the work was not queued. */
export class SlotsBusy extends Error {}

/**
 * At most `size` holders at a time; up to `queue` others wait their turn, first come first served, and any more
 * are refused at once: each waiter holds its upload in memory, and a line nobody can get through helps no one.
 */
export class Slots {
  #free: number
  readonly #waiting: Array<() => void> = []

  constructor(
    size: number,
    private readonly queue = Number.POSITIVE_INFINITY,
  ) {
    this.#free = size
  }

  async run<T>(work: () => Promise<T>): Promise<T> {
    if (this.#free > 0) this.#free--
    else if (this.#waiting.length >= this.queue) throw new SlotsBusy()
    else await new Promise<void>((resolve) => this.#waiting.push(resolve))
    try {
      return await work()
    } finally {
      // The slot passes straight to the next in line, or is freed.
      const next = this.#waiting.shift()
      if (next) next()
      else this.#free++
    }
  }
}
