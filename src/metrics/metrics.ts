/** A label value from something a tenant or an upstream names: kept when it is a short plain name, else `other`. */
export function bounded(value: string | undefined): string {
  return value !== undefined && /^[\w.:/-]{1,64}$/.test(value) ? value : 'other'
}

/** How a chat turn ended, and what it took. */
export interface TurnFigures {
  agent: string
  runner: string
  model: string
  outcome: 'complete' | 'aborted' | 'error'
  seconds: number
  /** From the turn's admission to its first word; none when it said nothing. */
  firstWordSeconds?: number
  inputTokens: number
  outputTokens: number
  costUsd: number
}

/**
 * What the kernel tells operators, whatever collects it: Prometheus where /metrics is served, nothing otherwise.
 * Label values are bounded by the implementation (route templates, short plain names), never raw input.
 */
export interface Metrics {
  /** Whether anything is collected: where nothing is, the request path need not even time its requests. */
  readonly enabled: boolean
  request(route: string, method: string, status: number, seconds: number): void
  turn(figures: TurnFigures): void
  toolCall(server: string, tool: string, outcome: 'ok' | 'error'): void
  /** A request a rate limit refused, by the limit's name. */
  refused(limit: string): void
  /** A try at a channel delivery or reply, by how it ended: done, to be tried again, or failed for good. */
  channelWork(queue: 'inbox' | 'outbox', outcome: 'done' | 'retry' | 'failed'): void
  /** Channel deliveries in a queue and state, as read from the store at a scrape. */
  queueDepth(queue: 'inbox' | 'outbox', state: 'pending' | 'failed', count: number): void
  /** This process's MCP upstream breakers by state, at a scrape. */
  breakers(counts: Record<'closed' | 'open' | 'half-open', number>): void
  /** Background tasks this process is running, at a scrape. */
  tasksRunning(count: number): void
  /** How long an event of another process took to arrive here (their clocks' difference included). */
  eventLag(seconds: number): void
  /** The store's connections, at a scrape: the pool's size, those held, work waiting for one, direct statements running. */
  pool(use: { size: number; reserved: number; waiting: number; direct: number }): void
  /** The exposition text, after `refresh` has brought the figures read from the store up to date. */
  scrape(refresh: () => Promise<void>): Promise<{ contentType: string; text: string }>
}

/** No /metrics to serve (SWITCHBOARD_METRICS_TOKEN unset): nothing is counted, so nothing is paid for. */
export class NoMetrics implements Metrics {
  readonly enabled = false
  request(): void {}
  turn(): void {}
  toolCall(): void {}
  refused(): void {}
  channelWork(): void {}
  queueDepth(): void {}
  breakers(): void {}
  tasksRunning(): void {}
  eventLag(): void {}
  pool(): void {}
  async scrape(): Promise<{ contentType: string; text: string }> {
    return { contentType: 'text/plain', text: '' }
  }
}
