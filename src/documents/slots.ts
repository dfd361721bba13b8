/** At most `size` holders at a time; the others wait their turn, first come first served. */
export class Slots {
  #free: number
  readonly #waiting: Array<() => void> = []

  constructor(size: number) {
    this.#free = size
  }

  async run<T>(work: () => Promise<T>): Promise<T> {
    if (this.#free > 0) this.#free--
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
