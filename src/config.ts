import { existsSync, readFileSync } from 'node:fs'
import type { TracingConfig } from './tracing/tracing.ts'
import { resolve } from 'node:path'
import { z } from 'zod'
import { parseAllowList } from './net/address-ranges.ts'
import type { Rate } from './throttle/buckets.ts'

/** The one reader of process.env. Everything else receives a Config. */
export interface Config {
  host: string
  apiPort: number
  adminPort: number
  /** Public address of the api app, used in the OpenAPI `servers` entry and in links. */
  baseUrl: string
  /** Public address of the admin app; with baseUrl, the origins allowed to send cookie-authenticated writes. */
  adminBaseUrl: string
  dataDir: string
  pluginPaths: string[]
  databaseUrl: string | undefined
  /** The server itself when DATABASE_URL is a transaction pooler (PgBouncer): LISTEN, session locks, migrations. */
  databaseDirectUrl: string | undefined
  internalApiSecret: string | undefined
  sessionInactivityHours: number
  sessionMaxDays: number
  /** Audit events older than this many days are deleted. */
  auditRetentionDays: number
  /** Largest request body the api app reads, in bytes. */
  bodyLimitBytes: number
  /** Largest document an upload may carry (POST /api/chat/documents), in bytes; that route's own body limit. */
  documentMaxBytes: number
  /** Identity providers may have an http issuer (a development IdP on loopback); production ones are https. */
  oidcAllowHttp: boolean
  /** What a voice note may be at most: bytes, and milliseconds of sound. */
  voice: { maxBytes: number; maxMs: number }
  /** The first superadmin, created on the first start when there is none. */
  initialAdmin: { email: string; password: string | undefined }
  /** Throttle of /api/v1/* per user (per address when anonymous). */
  apiRate: Rate
  /** Failed sign-ins allowed per account and per address. */
  loginRate: Rate
  /** Throttle of /mcp/{server} per user and server. */
  mcpRate: Rate
  /** Upstream MCP connections: when the breaker opens and for how long, when an unused one is closed. */
  mcpUpstream: { breakerFailures: number; breakerCooldownMs: number; idleMs: number }
  /** Every SWITCHBOARD_PLUGIN_<NAME>_<KEY> variable; the plugin host hands each plugin its own. */
  pluginEnv: Record<string, string>
  /** SWITCHBOARD_MASTER_KEY, if set; removed from the environment once read. Unset: a key file is used. */
  masterKey: string | undefined
  /**
   * How stdio MCP servers are isolated: `bwrap` (bubblewrap, required unless the operator opts out) or `none`
   * (they run as the platform's own user and see what it sees).
   */
  mcpSandbox: 'bwrap' | 'none'
  /** Address ranges (CIDR) that tenant-set outbound URLs may reach although they are loopback, private or local. */
  outboundAllow: string[]
  /** Failed sign-ins allowed per account per hour from all addresses that never signed in to it. */
  loginAccountPerHour: number
  /**
   * Where the throttles keep their token buckets: `shared` (in the database, one limit for all processes) or
   * `memory` (each process its own). Unset: shared on PostgreSQL, memory on the embedded store.
   */
  throttleStore: 'shared' | 'memory' | undefined
  /** PEM certificates trusted for outbound https besides the public roots (an internal CA); read from a file. */
  outboundCa: string | undefined
  /** Lifetimes of what the OAuth authorization server issues to MCP hosts, in seconds. */
  oauth: { accessTokenSeconds: number; refreshTokenSeconds: number }
  /** Background tasks (async_run_tool) one person may have running at once, across all processes. */
  tasksPerUser: number
  /** Chat turns one person may have running at once, across all processes. */
  turnsPerUser: number
  /**
   * How long an active plan waits after a turn before its next continuation message: a breath in which people can
   * read, pause or speak first.
   */
  planContinuationDelayMs: number
  /** The first retry of a channel reply that failed, in ms; each next one waits twice as long (at most 15 minutes). */
  channelRetryMs: number
  /** How the platform mails people (reset links, address checks): unset smtpUrl, it cannot. */
  mail: { smtpUrl: string | undefined; from: string }
  /** The bearer token /metrics answers to; without it, /metrics is not served (404). */
  metricsToken: string | undefined
  /** The least important log lines written; `silent` writes none. */
  logLevel: 'debug' | 'info' | 'warn' | 'error' | 'silent'
  /** Where traces go: off without an OTLP endpoint. */
  tracing: TracingConfig
}

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`Invalid configuration:\n${problems.map((p) => `  - ${p}`).join('\n')}`)
    this.name = 'ConfigError'
  }
}

const port = z.coerce.number().int().min(0).max(65535)
const positive = z.coerce.number().positive()

const env = z.object({
  SWITCHBOARD_HOST: z.string().min(1).default('127.0.0.1'),
  SWITCHBOARD_API_PORT: port.default(8000),
  SWITCHBOARD_ADMIN_PORT: port.default(8080),
  SWITCHBOARD_BASE_URL: z.url({ protocol: /^https?$/ }).optional(),
  SWITCHBOARD_ADMIN_BASE_URL: z.url({ protocol: /^https?$/ }).optional(),
  SWITCHBOARD_DATA_DIR: z.string().min(1).default('./data'),
  SWITCHBOARD_PLUGIN_PATHS: z.string().default(''),
  DATABASE_URL: z.url({ protocol: /^postgres(ql)?$/ }).optional(),
  DATABASE_DIRECT_URL: z.url({ protocol: /^postgres(ql)?$/ }).optional(),
  INTERNAL_API_SECRET: z.string().min(16, 'must be at least 16 characters').optional(),
  SWITCHBOARD_SESSION_INACTIVITY_HOURS: positive.default(72),
  SWITCHBOARD_SESSION_MAX_DAYS: positive.default(30),
  SWITCHBOARD_AUDIT_RETENTION_DAYS: z.coerce.number().int().min(1).max(36_500).default(365),
  SWITCHBOARD_BODY_LIMIT_BYTES: z.coerce.number().int().min(1024).default(1024 * 1024),
  SWITCHBOARD_DOCUMENT_MAX_BYTES: z.coerce.number().int().min(1024).default(20 * 1024 * 1024),
  SWITCHBOARD_OIDC_ALLOW_HTTP: z.enum(['true', 'false']).default('false'),
  SWITCHBOARD_VOICE_MAX_BYTES: z.coerce.number().int().min(1024).default(10 * 1024 * 1024),
  SWITCHBOARD_VOICE_MAX_SECONDS: z.coerce.number().int().min(1).max(3600).default(300),
  SWITCHBOARD_ADMIN_EMAIL: z.email().default('admin@switchboard.local'),
  SWITCHBOARD_ADMIN_PASSWORD: z.string().min(12, 'must be at least 12 characters').optional(),
  SWITCHBOARD_API_RATE_BURST: z.coerce.number().int().min(1).default(300),
  SWITCHBOARD_API_RATE_PER_SECOND: positive.default(20),
  SWITCHBOARD_LOGIN_RATE_BURST: z.coerce.number().int().min(1).default(10),
  SWITCHBOARD_LOGIN_RATE_PER_MINUTE: positive.default(5),
  SWITCHBOARD_MCP_RATE_BURST: z.coerce.number().int().min(1).default(120),
  SWITCHBOARD_MCP_RATE_PER_SECOND: positive.default(10),
  SWITCHBOARD_MCP_BREAKER_FAILURES: z.coerce.number().int().min(1).default(5),
  SWITCHBOARD_MCP_BREAKER_COOLDOWN_SECONDS: positive.default(30),
  SWITCHBOARD_MCP_IDLE_SECONDS: positive.default(300),
  SWITCHBOARD_MASTER_KEY: z.string().min(32, 'must be at least 32 characters').optional(),
  SWITCHBOARD_MCP_SANDBOX: z.enum(['bwrap', 'none']).default('bwrap'),
  SWITCHBOARD_OUTBOUND_ALLOW: z
    .string()
    .default('')
    .superRefine((value, ctx) => {
      try {
        parseAllowList(ranges(value))
      } catch (error) {
        ctx.addIssue({ code: 'custom', message: (error as Error).message })
      }
    }),
  SWITCHBOARD_LOGIN_ACCOUNT_PER_HOUR: z.coerce.number().int().min(1).default(100),
  SWITCHBOARD_THROTTLE_STORE: z.enum(['shared', 'memory']).optional(),
  SWITCHBOARD_OUTBOUND_CA_FILE: z
    .string()
    .optional()
    .superRefine((path, ctx) => {
      if (path !== undefined && !existsSync(path)) ctx.addIssue({ code: 'custom', message: 'no such file' })
    }),
  SWITCHBOARD_OAUTH_ACCESS_TOKEN_SECONDS: z.coerce.number().int().min(1).max(86_400).default(3600),
  SWITCHBOARD_OAUTH_REFRESH_TOKEN_DAYS: positive.max(365).default(30),
  SWITCHBOARD_TASKS_PER_USER: z.coerce.number().int().min(1).max(100).default(3),
  SWITCHBOARD_TURNS_PER_USER: z.coerce.number().int().min(1).max(100).default(4),
  SWITCHBOARD_PLAN_CONTINUATION_DELAY_MS: z.coerce.number().int().min(0).max(3_600_000).default(1000),
  SWITCHBOARD_CHANNEL_RETRY_MS: z.coerce.number().int().min(1).max(3_600_000).default(2000),
  SWITCHBOARD_SMTP_URL: z.url({ protocol: /^smtps?$/ }).optional(),
  SWITCHBOARD_MAIL_FROM: z.email().default('no-reply@switchboard.local'),
  // Long enough not to be guessed: it opens the process's figures, which name agents, servers and routes.
  SWITCHBOARD_METRICS_TOKEN: z.string().min(24, 'at least 24 characters').optional(),
  SWITCHBOARD_LOG_LEVEL: z.enum(['debug', 'info', 'warn', 'error', 'silent']).default('info'),
  // OpenTelemetry's own variables, as every OTLP-speaking program reads them (traces only, OTLP over HTTP).
  OTEL_SDK_DISABLED: z.enum(['true', 'false']).optional(),
  OTEL_TRACES_EXPORTER: z.enum(['otlp', 'none']).optional(),
  OTEL_EXPORTER_OTLP_ENDPOINT: z.url({ protocol: /^https?$/ }).optional(),
  OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: z.url({ protocol: /^https?$/ }).optional(),
  OTEL_EXPORTER_OTLP_HEADERS: z.string().optional(),
  OTEL_EXPORTER_OTLP_TRACES_HEADERS: z.string().optional(),
  OTEL_SERVICE_NAME: z.string().min(1).max(200).default('switchboard'),
})

/** OTEL_EXPORTER_OTLP_HEADERS: `key=value` pairs, comma-separated, values percent-encoded (the specification's form). */
function otlpHeaders(text: string | undefined): Record<string, string> {
  const headers: Record<string, string> = {}
  for (const pair of (text ?? '').split(',')) {
    const eq = pair.indexOf('=')
    if (eq <= 0) continue
    try {
      headers[pair.slice(0, eq).trim()] = decodeURIComponent(pair.slice(eq + 1).trim())
    } catch {
      throw new ConfigError([`OTEL_EXPORTER_OTLP_HEADERS: the value of ${pair.slice(0, eq).trim()} is not percent-encoded text`])
    }
  }
  return headers
}

function ranges(list: string): string[] {
  return list.split(',').map((range) => range.trim()).filter(Boolean)
}

/** Reads and validates the environment; throws one ConfigError naming every bad variable. */
export function loadConfig(source: Record<string, string | undefined> = process.env): Config {
  // An empty variable means "not set", as in most shells' `VAR= cmd`.
  const present = Object.fromEntries(
    Object.keys(env.shape).map((key) => [key, source[key] === '' ? undefined : source[key]]),
  )
  const parsed = env.safeParse(present)
  if (!parsed.success) {
    throw new ConfigError(
      parsed.error.issues.map((issue) => {
        const name = String(issue.path[0])
        // Never echo a secret back, even a bad one.
        // A database URL may carry its password.
        const shown = /PASSWORD|SECRET|KEY|SMTP_URL|DATABASE_/.test(name) ? 'a hidden value' : JSON.stringify(present[name])
        return `${name}: ${issue.message} (got ${shown})`
      }),
    )
  }
  const e = parsed.data
  if (e.DATABASE_DIRECT_URL && !e.DATABASE_URL) {
    throw new ConfigError(['DATABASE_DIRECT_URL: it goes around the pooler in DATABASE_URL, so it is set only beside DATABASE_URL'])
  }
  // The master key leaves the environment as soon as it is read: subprocesses and crash dumps never see it.
  delete source.SWITCHBOARD_MASTER_KEY
  const host = e.SWITCHBOARD_HOST
  const urlHost = host.includes(':') ? `[${host}]` : host
  return {
    host,
    apiPort: e.SWITCHBOARD_API_PORT,
    adminPort: e.SWITCHBOARD_ADMIN_PORT,
    baseUrl: (e.SWITCHBOARD_BASE_URL ?? `http://${urlHost}:${e.SWITCHBOARD_API_PORT}`).replace(/\/$/, ''),
    adminBaseUrl: (e.SWITCHBOARD_ADMIN_BASE_URL ?? `http://${urlHost}:${e.SWITCHBOARD_ADMIN_PORT}`).replace(/\/$/, ''),
    dataDir: resolve(e.SWITCHBOARD_DATA_DIR),
    pluginPaths: e.SWITCHBOARD_PLUGIN_PATHS.split(':').filter(Boolean).map((p) => resolve(p)),
    databaseUrl: e.DATABASE_URL,
    databaseDirectUrl: e.DATABASE_DIRECT_URL,
    internalApiSecret: e.INTERNAL_API_SECRET,
    sessionInactivityHours: e.SWITCHBOARD_SESSION_INACTIVITY_HOURS,
    sessionMaxDays: e.SWITCHBOARD_SESSION_MAX_DAYS,
    auditRetentionDays: e.SWITCHBOARD_AUDIT_RETENTION_DAYS,
    bodyLimitBytes: e.SWITCHBOARD_BODY_LIMIT_BYTES,
    documentMaxBytes: e.SWITCHBOARD_DOCUMENT_MAX_BYTES,
    oidcAllowHttp: e.SWITCHBOARD_OIDC_ALLOW_HTTP === 'true',
    voice: { maxBytes: e.SWITCHBOARD_VOICE_MAX_BYTES, maxMs: e.SWITCHBOARD_VOICE_MAX_SECONDS * 1000 },
    initialAdmin: { email: e.SWITCHBOARD_ADMIN_EMAIL, password: e.SWITCHBOARD_ADMIN_PASSWORD },
    apiRate: { burst: e.SWITCHBOARD_API_RATE_BURST, perSecond: e.SWITCHBOARD_API_RATE_PER_SECOND },
    loginRate: { burst: e.SWITCHBOARD_LOGIN_RATE_BURST, perSecond: e.SWITCHBOARD_LOGIN_RATE_PER_MINUTE / 60 },
    mcpRate: { burst: e.SWITCHBOARD_MCP_RATE_BURST, perSecond: e.SWITCHBOARD_MCP_RATE_PER_SECOND },
    mcpUpstream: {
      breakerFailures: e.SWITCHBOARD_MCP_BREAKER_FAILURES,
      breakerCooldownMs: e.SWITCHBOARD_MCP_BREAKER_COOLDOWN_SECONDS * 1000,
      idleMs: e.SWITCHBOARD_MCP_IDLE_SECONDS * 1000,
    },
    masterKey: e.SWITCHBOARD_MASTER_KEY,
    mcpSandbox: e.SWITCHBOARD_MCP_SANDBOX,
    outboundAllow: ranges(e.SWITCHBOARD_OUTBOUND_ALLOW),
    loginAccountPerHour: e.SWITCHBOARD_LOGIN_ACCOUNT_PER_HOUR,
    throttleStore: e.SWITCHBOARD_THROTTLE_STORE,
    outboundCa: e.SWITCHBOARD_OUTBOUND_CA_FILE === undefined ? undefined : readFileSync(e.SWITCHBOARD_OUTBOUND_CA_FILE, 'utf8'),
    oauth: { accessTokenSeconds: e.SWITCHBOARD_OAUTH_ACCESS_TOKEN_SECONDS, refreshTokenSeconds: Math.round(e.SWITCHBOARD_OAUTH_REFRESH_TOKEN_DAYS * 86_400) },
    tasksPerUser: e.SWITCHBOARD_TASKS_PER_USER,
    turnsPerUser: e.SWITCHBOARD_TURNS_PER_USER,
    planContinuationDelayMs: e.SWITCHBOARD_PLAN_CONTINUATION_DELAY_MS,
    channelRetryMs: e.SWITCHBOARD_CHANNEL_RETRY_MS,
    mail: { smtpUrl: e.SWITCHBOARD_SMTP_URL, from: e.SWITCHBOARD_MAIL_FROM },
    metricsToken: e.SWITCHBOARD_METRICS_TOKEN,
    logLevel: e.SWITCHBOARD_LOG_LEVEL,
    tracing: {
      endpoint:
        e.OTEL_SDK_DISABLED === 'true' || e.OTEL_TRACES_EXPORTER === 'none'
          ? undefined
          : (e.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ?? (e.OTEL_EXPORTER_OTLP_ENDPOINT ? `${e.OTEL_EXPORTER_OTLP_ENDPOINT.replace(/\/$/, '')}/v1/traces` : undefined)),
      headers: { ...otlpHeaders(e.OTEL_EXPORTER_OTLP_HEADERS), ...otlpHeaders(e.OTEL_EXPORTER_OTLP_TRACES_HEADERS) },
      serviceName: e.OTEL_SERVICE_NAME,
    },
    pluginEnv: Object.fromEntries(
      Object.entries(source).filter(
        (entry): entry is [string, string] => entry[0].startsWith('SWITCHBOARD_PLUGIN_') && entry[0] !== 'SWITCHBOARD_PLUGIN_PATHS' && typeof entry[1] === 'string',
      ),
    ),
  }
}
