/** Who work is done for: each person and each company gets a bounded share of the slots. */
export interface Holder {
  companyId: string | null
  userId: string
}

/** The line is full, or the holder's share of it is: the work was not queued. */
export class SlotsBusy extends Error {
  constructor(readonly whose: 'person' | 'company' | 'everyone' = 'everyone') {
    super(whose === 'everyone' ? 'every slot is taken' : `the ${whose}'s share of the slots is taken`)
    this.name = 'SlotsBusy'
  }
}

/** How much of the slots one holder may take, queued and running together. */
export interface Shares {
  person: number
  company: number
}

const UNBOUNDED: Shares = { person: Number.POSITIVE_INFINITY, company: Number.POSITIVE_INFINITY }

/**
 * At most `size` holders at a time; up to `queue` others wait, and any more are refused at once. A person and a
 * company may each hold only their share, so one of them flooding is refused (told so) while others still get in;
 * and a freed slot goes to the waiting company that runs least just now (of those, the one served longest ago), so
 * a company's long line does not stand in front of another's single piece of work. Work without a holder counts against no share.
 */
export class Slots {
  #running = 0
  readonly #waiting: Array<{ holder?: Holder; go: () => void }> = []
  /** Queued and running, per `person:<id>` and `company:<id>`. */
  readonly #held = new Map<string, number>()
  /** Running, per company. */
  readonly #runningFor = new Map<string, number>()
  /** When each company was last given a slot (a count of slots given), for taking turns. */
  readonly #servedAt = new Map<string, number>()
  #served = 0

  constructor(
    private readonly size: number,
    private readonly queue = Number.POSITIVE_INFINITY,
    private readonly shares: Shares = UNBOUNDED,
  ) {}

  async run<T>(work: () => Promise<T>, holder?: Holder): Promise<T> {
    const keys = holder ? [`person:${holder.userId}`, `company:${holder.companyId}`] : []
    if (holder && (this.#held.get(keys[0]!) ?? 0) >= this.shares.person) throw new SlotsBusy('person')
    if (holder && (this.#held.get(keys[1]!) ?? 0) >= this.shares.company) throw new SlotsBusy('company')
    if (this.#running >= this.size && this.#waiting.length >= this.queue) throw new SlotsBusy('everyone')
    for (const key of keys) this.#held.set(key, (this.#held.get(key) ?? 0) + 1)
    try {
      if (this.#running < this.size) this.#start(holder)
      else await new Promise<void>((go) => this.#waiting.push({ holder, go }))
      try {
        return await work()
      } finally {
        this.#finish(holder)
      }
    } finally {
      for (const key of keys) {
        const left = (this.#held.get(key) ?? 1) - 1
        if (left === 0) this.#held.delete(key)
        else this.#held.set(key, left)
      }
    }
  }

  #start(holder?: Holder): void {
    this.#running++
    const company = companyKey(holder)
    this.#runningFor.set(company, (this.#runningFor.get(company) ?? 0) + 1)
    this.#servedAt.set(company, ++this.#served)
    // Forgotten once long past, so the map holds only companies seen lately.
    if (this.#servedAt.size > 1000) for (const [key, at] of this.#servedAt) if (at < this.#served - 1000) this.#servedAt.delete(key)
  }

  #finish(holder?: Holder): void {
    this.#running--
    const company = companyKey(holder)
    const left = (this.#runningFor.get(company) ?? 1) - 1
    if (left === 0) this.#runningFor.delete(company)
    else this.#runningFor.set(company, left)
    // The slot passes straight to the next in line: the earliest waiter of the company running least, and of
    // those the one served longest ago, so companies take turns.
    let best = -1
    let rank: [number, number] = [Number.POSITIVE_INFINITY, Number.POSITIVE_INFINITY]
    for (const [i, waiter] of this.#waiting.entries()) {
      const key = companyKey(waiter.holder)
      const mine: [number, number] = [this.#runningFor.get(key) ?? 0, this.#servedAt.get(key) ?? 0]
      if (mine[0] < rank[0] || (mine[0] === rank[0] && mine[1] < rank[1])) [best, rank] = [i, mine]
    }
    if (best < 0) return
    const [next] = this.#waiting.splice(best, 1)
    this.#start(next!.holder)
    next!.go()
  }
}

function companyKey(holder?: Holder): string {
  return holder ? `company:${holder.companyId}` : 'nobody'
}
