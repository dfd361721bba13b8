import type { ChannelEndpoint, ChannelKernel, Job, Logger } from '../../src/plugin-host/sdk.ts'
import { pollMailbox } from './mailbox.ts'

export const DEFAULT_POLL_SECONDS = 30
/** Below this the mail servers would be asked more often than is reasonable, whatever the setting says. */
const SHORTEST_POLL_MS = 50

/** The poll_seconds setting in milliseconds (decimals allowed); a value that is not a positive number gets the default. */
export function pollInterval(setting: string | undefined, log: Logger): number {
  const seconds = Number(setting)
  if (setting === undefined || !Number.isFinite(seconds) || seconds <= 0) {
    log.warn('poll_seconds is not a positive number of seconds; polling at the default', { poll_seconds: setting, default: DEFAULT_POLL_SECONDS })
    return DEFAULT_POLL_SECONDS * 1000
  }
  return Math.max(SHORTEST_POLL_MS, seconds * 1000)
}

/**
 * Looks into the mailbox of every agent reachable by email, every interval. The agents are listed afresh on each
 * round, so one whose email channel was switched on, changed or removed is followed without a restart; a mailbox
 * still being read (a slow server) is skipped until that look ends.
 */
export class MailboxPoller {
  #rounds: Job | undefined
  #intervalMs: number | undefined
  readonly #reading = new Set<string>()

  constructor(
    private readonly kernel: ChannelKernel,
    private readonly log: Logger,
  ) {
    kernel.signal.addEventListener('abort', () => this.stop(), { once: true })
  }

  /** No more rounds (the platform stops); a look under way finishes. */
  stop(): void {
    void this.#rounds?.stop()
    this.#rounds = undefined
    this.#intervalMs = undefined
  }

  /**
   * Starts the rounds, the first one interval from now; with a new interval, starts them over. Start-up hooks run
   * again on every agent reload: an unchanged interval keeps its rounds, so reloads never put a look off.
   */
  start(intervalMs: number): void {
    if (intervalMs === this.#intervalMs || this.kernel.signal.aborted) return
    this.stop()
    this.#intervalMs = intervalMs
    this.#rounds = this.kernel.every('mailboxes', intervalMs, () => this.#round())
  }

  /** Looks into each mailbox not still being read; a slow server holds up only its own. */
  async #round(): Promise<void> {
    try {
      for (const endpoint of await this.kernel.endpoints('email')) {
        if (this.#reading.has(endpoint.agentId)) continue
        this.#reading.add(endpoint.agentId)
        void this.#look(endpoint).finally(() => this.#reading.delete(endpoint.agentId))
      }
    } catch (error) {
      this.log.error('the agents reachable by email could not be listed', { error: (error as Error).message })
    }
  }

  async #look(endpoint: ChannelEndpoint<'email'>): Promise<void> {
    try {
      await pollMailbox(this.kernel, this.log, endpoint)
    } catch (error) {
      // The kernel logs it too, and shows it on the console.
      await this.kernel.failed(endpoint, `Reading the mailbox failed: ${(error as Error).message}`).catch((failure: Error) => this.log.error('a mailbox failure could not be recorded', { agent: endpoint.agentId, error: failure.message }))
    }
  }
}
