import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client'

/** Seconds, from a quarter of a millisecond (a cached read) to a minute (a long turn). */
const LATENCY_BUCKETS = [0.00025, 0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60]
/** A turn runs from a fraction of a second to the agent's timeout (15 minutes by default). */
const TURN_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 900]

/** A label value from something a tenant or an upstream names: kept when it is a short plain name, else `other`. */
export function bounded(value: string | undefined): string {
  return value !== undefined && /^[\w.:/-]{1,64}$/.test(value) ? value : 'other'
}

/**
 * This process's Prometheus metrics, made once at boot on a registry of their own (never the library's global one,
 * so two platforms in one process, as the tests run them, keep their figures apart). Every label is bounded:
 * route templates, not paths; agent, server and tool names only when they are short plain names; no user ids.
 */
export class Metrics {
  readonly registry = new Registry()

  readonly httpRequests = new Counter({
    name: 'switchboard_http_requests_total',
    help: 'HTTP requests answered by the API, by route template, method and status.',
    labelNames: ['route', 'method', 'status'] as const,
    registers: [this.registry],
  })
  readonly httpDuration = new Histogram({
    name: 'switchboard_http_request_duration_seconds',
    help: 'Time from a request reaching the API to its answer being ready (a stream: until it starts).',
    labelNames: ['route', 'method', 'status'] as const,
    buckets: LATENCY_BUCKETS,
    registers: [this.registry],
  })
  readonly turns = new Counter({
    name: 'switchboard_chat_turns_total',
    help: 'Chat turns ended, by agent, runner, model and outcome (complete, aborted, error).',
    labelNames: ['agent', 'runner', 'model', 'outcome'] as const,
    registers: [this.registry],
  })
  readonly turnFirstToken = new Histogram({
    name: 'switchboard_chat_turn_first_token_seconds',
    help: 'Time from a turn being admitted to the first word of its answer.',
    labelNames: ['runner', 'model'] as const,
    buckets: LATENCY_BUCKETS,
    registers: [this.registry],
  })
  readonly turnDuration = new Histogram({
    name: 'switchboard_chat_turn_duration_seconds',
    help: 'Time from a turn being admitted to its end, by outcome.',
    labelNames: ['runner', 'model', 'outcome'] as const,
    buckets: TURN_BUCKETS,
    registers: [this.registry],
  })
  readonly turnTokens = new Counter({
    name: 'switchboard_chat_turn_tokens_total',
    help: 'Tokens the providers reported for chat turns, by runner, model and direction (input, output).',
    labelNames: ['runner', 'model', 'direction'] as const,
    registers: [this.registry],
  })
  readonly turnCost = new Counter({
    name: 'switchboard_chat_turn_cost_usd_total',
    help: 'What chat turns cost, in US dollars, as priced by the runner settings.',
    labelNames: ['runner', 'model'] as const,
    registers: [this.registry],
  })
  readonly toolCalls = new Counter({
    name: 'switchboard_mcp_tool_calls_total',
    help: 'MCP tool calls, from agents and through the gateway, by server, tool and outcome (ok, error, refused).',
    labelNames: ['server', 'tool', 'outcome'] as const,
    registers: [this.registry],
  })
  readonly throttleRefusals = new Counter({
    name: 'switchboard_throttle_refusals_total',
    help: 'Requests a rate limit refused (429), by limit.',
    labelNames: ['limit'] as const,
    registers: [this.registry],
  })
  readonly queueDepth = new Gauge({
    name: 'switchboard_channel_queue_depth',
    help: 'Channel deliveries not yet done, by queue (inbox, outbox) and state (waiting, failed).',
    labelNames: ['queue', 'state'] as const,
    registers: [this.registry],
  })

  constructor() {
    // Bun's process figures: CPU, memory, open descriptors, event-loop delay.
    collectDefaultMetrics({ register: this.registry, prefix: 'switchboard_' })
  }

  /** The exposition text, after `refresh` has brought the gauges read from the store up to date. */
  async scrape(refresh: () => Promise<void>): Promise<string> {
    await refresh()
    return this.registry.metrics()
  }
}
