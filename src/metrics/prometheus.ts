import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client'
import { bounded, type Metrics, type TurnFigures } from './metrics.ts'

/** Seconds, from a quarter of a millisecond (a cached read) to a minute. */
const LATENCY_BUCKETS = [0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60]
/** A turn runs from a fraction of a second to the agent's timeout (15 minutes by default). */
const TURN_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 900]

/**
 * This process's Prometheus metrics, on a registry of its own (never the library's global one, so two platforms in
 * one process, as the tests run them, keep their figures apart), with Bun's process figures beside them.
 */
export class PrometheusMetrics implements Metrics {
  readonly enabled = true
  readonly #registry = new Registry()
  readonly #registers = [this.#registry]

  readonly #requests = new Counter({
    name: 'switchboard_http_requests_total',
    help: 'HTTP requests answered by the API, by route template, method and status.',
    labelNames: ['route', 'method', 'status'] as const,
    registers: this.#registers,
  })
  readonly #requestSeconds = new Histogram({
    name: 'switchboard_http_request_duration_seconds',
    help: 'Time from a request reaching the API to its answer being ready (for a stream: to its start).',
    labelNames: ['route', 'method', 'status'] as const,
    buckets: LATENCY_BUCKETS,
    registers: this.#registers,
  })
  readonly #turns = new Counter({
    name: 'switchboard_chat_turns_total',
    help: 'Chat turns ended, by agent, runner, model and outcome (complete, aborted, error).',
    labelNames: ['agent', 'runner', 'model', 'outcome'] as const,
    registers: this.#registers,
  })
  readonly #firstWordSeconds = new Histogram({
    name: 'switchboard_chat_turn_first_token_seconds',
    help: 'Time from a turn being admitted to the first word of its answer.',
    labelNames: ['runner', 'model'] as const,
    buckets: LATENCY_BUCKETS,
    registers: this.#registers,
  })
  readonly #turnSeconds = new Histogram({
    name: 'switchboard_chat_turn_duration_seconds',
    help: 'Time from a turn being admitted to its end, by outcome.',
    labelNames: ['runner', 'model', 'outcome'] as const,
    buckets: TURN_BUCKETS,
    registers: this.#registers,
  })
  readonly #tokens = new Counter({
    name: 'switchboard_chat_turn_tokens_total',
    help: 'Tokens the providers reported for chat turns, by runner, model and direction (input, output).',
    labelNames: ['runner', 'model', 'direction'] as const,
    registers: this.#registers,
  })
  readonly #cost = new Counter({
    name: 'switchboard_chat_turn_cost_usd_total',
    help: 'What chat turns cost, in US dollars, as priced by the runner settings.',
    labelNames: ['runner', 'model'] as const,
    registers: this.#registers,
  })
  readonly #toolCalls = new Counter({
    name: 'switchboard_mcp_tool_calls_total',
    help: 'MCP tool calls, from agents, tasks and through the gateway, by server, tool and outcome (ok, error).',
    labelNames: ['server', 'tool', 'outcome'] as const,
    registers: this.#registers,
  })
  readonly #refusals = new Counter({
    name: 'switchboard_throttle_refusals_total',
    help: 'Requests a rate limit refused (429), by limit.',
    labelNames: ['limit'] as const,
    registers: this.#registers,
  })
  readonly #channelWork = new Counter({
    name: 'switchboard_channel_work_total',
    help: 'Tries at channel deliveries (inbox) and replies (outbox), by how each ended: done, retry or failed.',
    labelNames: ['queue', 'outcome'] as const,
    registers: this.#registers,
  })
  readonly #queues = new Gauge({
    name: 'switchboard_channel_queue_depth',
    help: 'Channel deliveries not yet done, by queue (inbox, outbox) and state (pending, failed).',
    labelNames: ['queue', 'state'] as const,
    registers: this.#registers,
  })

  readonly #breakers = new Gauge({
    name: 'switchboard_mcp_breakers',
    help: 'This process\'s circuit breakers on MCP upstreams (one per user and server), by state.',
    labelNames: ['state'] as const,
    registers: this.#registers,
  })
  readonly #tasks = new Gauge({
    name: 'switchboard_background_tasks_running',
    help: 'Background tasks (async_run_tool) this process is running.',
    registers: this.#registers,
  })
  readonly #eventLag = new Histogram({
    name: 'switchboard_event_bus_lag_seconds',
    help: 'Time from another process publishing an event to this one hearing it (the hosts\' clock difference included).',
    buckets: LATENCY_BUCKETS,
    registers: this.#registers,
  })

  readonly #pool = new Gauge({
    name: 'switchboard_db_connections',
    help: 'The store\'s connection pool: its size, connections held (reserved), work waiting for one, and single statements running on it (direct).',
    labelNames: ['state'] as const,
    registers: this.#registers,
  })

  constructor() {
    // Bun's process figures: CPU, memory, open descriptors, event-loop delay.
    collectDefaultMetrics({ register: this.#registry, prefix: 'switchboard_' })
  }

  request(route: string, method: string, status: number, seconds: number): void {
    const labels = { route, method, status: String(status) }
    this.#requests.inc(labels)
    this.#requestSeconds.observe(labels, seconds)
  }

  turn(f: TurnFigures): void {
    const [runner, model] = [bounded(f.runner), bounded(f.model)]
    this.#turns.inc({ agent: bounded(f.agent), runner, model, outcome: f.outcome })
    this.#turnSeconds.observe({ runner, model, outcome: f.outcome }, f.seconds)
    if (f.firstWordSeconds !== undefined) this.#firstWordSeconds.observe({ runner, model }, f.firstWordSeconds)
    this.#tokens.inc({ runner, model, direction: 'input' }, f.inputTokens)
    this.#tokens.inc({ runner, model, direction: 'output' }, f.outputTokens)
    this.#cost.inc({ runner, model }, f.costUsd)
  }

  toolCall(server: string, tool: string, outcome: 'ok' | 'error'): void {
    this.#toolCalls.inc({ server: bounded(server), tool: bounded(tool), outcome })
  }

  refused(limit: string): void {
    this.#refusals.inc({ limit })
  }

  channelWork(queue: 'inbox' | 'outbox', outcome: 'done' | 'retry' | 'failed'): void {
    this.#channelWork.inc({ queue, outcome })
  }

  queueDepth(queue: 'inbox' | 'outbox', state: 'pending' | 'failed', count: number): void {
    this.#queues.set({ queue, state }, count)
  }

  breakers(counts: Record<'closed' | 'open' | 'half-open', number>): void {
    for (const [state, count] of Object.entries(counts)) this.#breakers.set({ state }, count)
  }

  tasksRunning(count: number): void {
    this.#tasks.set(count)
  }

  eventLag(seconds: number): void {
    this.#eventLag.observe(Math.max(0, seconds))
  }

  pool(use: { size: number; reserved: number; waiting: number; direct: number }): void {
    this.#pool.set({ state: 'size' }, use.size)
    this.#pool.set({ state: 'reserved' }, use.reserved)
    this.#pool.set({ state: 'waiting' }, use.waiting)
    this.#pool.set({ state: 'direct' }, use.direct)
  }

  async scrape(refresh: () => Promise<void>): Promise<{ contentType: string; text: string }> {
    await refresh()
    return { contentType: this.#registry.contentType, text: await this.#registry.metrics() }
  }
}
