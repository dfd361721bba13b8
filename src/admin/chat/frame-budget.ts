/**
 * What one web chat socket may send: frames at a steady rate with a burst (a person types and clicks; a script
 * floods), and only so many being handled at once (each is a call to the API, and a message's lasts its whole turn).
 * A refused frame is answered where the person must know (their message was not sent) and otherwise told once a
 * second at most; a socket that keeps being refused is closed. Per socket and in memory: a socket lives in one
 * process, and a person's sockets are capped per process.
 */
export const FRAME_RATE = { burst: 30, perSecond: 10 }
export const MAX_FRAMES_IN_FLIGHT = 8
/** Refusals in a row after which the socket is closed (1008): nobody typing gets there. */
export const MAX_REFUSALS = 100
const TELL_EVERY_MS = 1_000

export type Admission = 'accepted' | 'refused' | 'refused-quietly' | 'close'

export class FrameBudget {
  #tokens = FRAME_RATE.burst
  #at: number
  #inFlight = 0
  #refusals = 0
  #toldAt = -Infinity

  constructor(now = Date.now()) {
    this.#at = now
  }

  /** Whether a frame may be handled now; `mustAnswer` for frames whose refusal the person has to hear of. */
  admit(mustAnswer: boolean, now = Date.now()): Admission {
    this.#tokens = Math.min(FRAME_RATE.burst, this.#tokens + ((now - this.#at) / 1000) * FRAME_RATE.perSecond)
    this.#at = now
    if (this.#tokens >= 1 && this.#inFlight < MAX_FRAMES_IN_FLIGHT) {
      this.#tokens -= 1
      this.#inFlight++
      this.#refusals = 0
      return 'accepted'
    }
    if (++this.#refusals > MAX_REFUSALS) return 'close'
    if (!mustAnswer && now - this.#toldAt < TELL_EVERY_MS) return 'refused-quietly'
    this.#toldAt = now
    return 'refused'
  }

  /** An accepted frame has been handled. */
  done(): void {
    this.#inFlight--
  }
}
