import type { BucketStore, Rate, Take } from './buckets.ts'

/** One token wanted from the bucket `key`. */
export interface Claim {
  key: string
  rate: Rate
}

export type Reservation = { allowed: true; release(now: number): Promise<void> } | { allowed: false; refused: Take }

/**
 * Takes a token from every bucket or from none: a refusal gives back what was already taken. For limits that only
 * some outcomes consume, reserve before acting and release on the outcomes that cost nothing; checking first and
 * taking afterwards would let any number of concurrent attempts through a check that each one passes alone.
 */
export async function reserve(store: BucketStore, claims: Claim[], now: number): Promise<Reservation> {
  const taken: Claim[] = []
  const giveBack = async (at: number) => {
    await Promise.all(taken.map((claim) => store.give(claim.key, claim.rate, at)))
  }
  for (const claim of claims) {
    const take = await store.take(claim.key, claim.rate, now)
    if (!take.allowed) {
      await giveBack(now)
      return { allowed: false, refused: take }
    }
    taken.push(claim)
  }
  return { allowed: true, release: giveBack }
}
