import type { Budgets } from './usage/budgets.ts'
import type { PoolUse } from './db/pool-use.ts'
import type { Drain } from './lifecycle/drain.ts'
import type { Presence } from './lifecycle/presence.ts'
import type { SystemSettings } from './settings/system.ts'
import type { AgentSupervisor } from './agents/supervisor.ts'
import type { Tracing } from './tracing/tracing.ts'
import type { Metrics } from './metrics/metrics.ts'
import type { AccessPolicy } from './auth/access.ts'
import type { Chat } from './chat/chat.ts'
import type { ToolExecutor } from './chat/tools.ts'
import type { Authenticator } from './auth/authenticator.ts'
import type { SessionPolicy } from './auth/sessions.ts'
import type { Clock } from './clock.ts'
import type { Config } from './config.ts'
import type { Db } from './db/schema.ts'
import type { Logger } from './logger.ts'
import type { Writes } from './events/writes.ts'
import type { ModelRegistry } from './models/registry.ts'
import type { PluginHost } from './plugin-host/host.ts'
import type { RunnerModels } from './runners/registry.ts'
import type { McpCatalog } from './mcp/catalog.ts'
import type { Approvals } from './approvals/approvals.ts'
import type { McpDirectory } from './mcp/directory.ts'
import type { Gateway } from './mcp/gateway.ts'
import type { Upstreams } from './mcp/upstreams.ts'
import type { OutboundPolicy } from './net/outbound.ts'
import type { Sandbox } from './mcp/sandbox.ts'
import type { VaultTokens } from './vault/tokens.ts'
import type { Vault } from './vault/vault.ts'
import type { VaultSocket } from './vault/socket.ts'
import type { BucketStore } from './throttle/buckets.ts'
import type { CacheFlusher } from './events/caches.ts'
import type { ConversationDocuments } from './documents/conversation-documents.ts'
import type { EventBus } from './events/bus.ts'
import type { AuthorizationServer } from './oauth/server.ts'
import type { McpConnections } from './mcp/connections.ts'
import type { SelfAddress } from './http/self-address.ts'
import type { Plans } from './plans/plans.ts'
import type { Artifacts } from './artifacts/artifacts.ts'
import type { Channels } from './channels/channels.ts'
import type { Voice } from './voice/voice.ts'
import type { SingleSignOn } from './auth/sso/single-sign-on.ts'
import type { BackgroundTasks } from './tasks/tasks.ts'
import type { Mailer } from './mail/mailer.ts'
import type { PlanContinuation } from './plans/continuation.ts'
import type { Scheduler } from './scheduler.ts'

/** Kernel services, built once at boot and handed to both apps. No module holds a connection of its own. */
export interface Services {
  config: Config
  db: Db
  /** How the store's connections are used now, for the metrics. */
  dbPool: PoolUse
  /** This process's Prometheus metrics, served at /metrics to whoever holds SWITCHBOARD_METRICS_TOKEN. */
  metrics: Metrics
  /** Spans of requests, turns, runner and tool calls, to the OTLP endpoint the OTEL_* variables name (else off). */
  tracing: Tracing
  models: ModelRegistry
  /** Where every write is made and its consequences heard (caches, live agents, chat feeds), whatever its door. */
  writes: Writes
  /** Which addresses the platform connects to on a tenant's behalf. */
  outbound: OutboundPolicy
  /** How stdio MCP servers are isolated. */
  sandbox: Sandbox
  log: Logger
  clock: Clock
  /** Every periodic loop of this process (sweeps, heartbeats, queue polls): one run of each at a time. */
  scheduler: Scheduler
  /** Events within this process and, on PostgreSQL, to every other process of the deployment. */
  events: EventBus
  /** Drops cached reads in every process, confirmed by each before it returns. */
  caches: CacheFlusher
  /** Conversations' documents: stored, and read for turns. */
  documents: ConversationDocuments
  /** Where this process's api app answers on loopback (main sets the port once it listens). */
  self: SelfAddress
  sessionPolicy: SessionPolicy
  authenticator: Authenticator
  access: AccessPolicy
  /** One store per limit, so each sweeps by its own rate. */
  throttles: { api: BucketStore; login: BucketStore; mcp: BucketStore }
  /** Mails the platform sends people itself (reset links, address checks); undefined without SWITCHBOARD_SMTP_URL. */
  mailer: Mailer | undefined
  plugins: PluginHost
  /** Every runner's persisted model registry. */
  runnerModels: RunnerModels
  vault: Vault
  /** Tokens MCP subprocesses read their secrets with, stored hashed so that any process validates them. */
  vaultTokens: VaultTokens
  /** The only channel vault tokens work on: a unix socket bound into each stdio server's sandbox. */
  vaultSocket: VaultSocket
  /** Upstream MCP connections per user and server; closeAll() at shutdown kills their subprocesses. */
  upstreams: Upstreams
  /** Each company's MCP servers and permission rules, briefly cached; cleared after writes to them. */
  mcpDirectory: McpDirectory
  /** The MCP providers (upstream servers, plugins' built-in tools) a user can reach, and their permissions. */
  catalog: McpCatalog
  gateway: Gateway
  tools: ToolExecutor
  /** Tool calls waiting for a person's yes: asked by turns, answered through the API and the web chat. */
  approvals: Approvals
  /** Monthly budgets of companies and people, judged before turns and tool calls. */
  budgets: Budgets
  /** This process's drain for a rolling deploy: no new turns, webhooks or tasks; what runs finishes. */
  drain: Drain
  /** This process among the platform's processes, by heartbeat. */
  presence: Presence
  /** The platform-wide settings (SystemConfig's known keys), read without a restart. */
  settings: SystemSettings
  /** Conversation turns: admitted one at a time per conversation, run, stopped. */
  chat: Chat
  agents: AgentSupervisor
  /** The OAuth authorization server MCP hosts get their tokens from. */
  oauth: AuthorizationServer
  /** People's own OAuth connections to the remote MCP servers that sign each person in. */
  mcpConnections: McpConnections
  /** Plans and their tasks: the state machines, live events and auto-continuation. */
  plans: Plans
  /** Sends the next continuation message after each whole answer while a conversation's plan is active. */
  continuation: PlanContinuation
  /** What agents hand over (create_artifact): stored, shared by signed links, swept when expired. */
  artifacts: Artifacts
  /** Tools run in the background (async_run_tool), persisted, limited per user. */
  tasks: BackgroundTasks
  /** Telegram, Slack, WhatsApp and email: deliveries kept once, answered as the linked user, replies retried. */
  channels: Channels
  /** Voice notes heard and answers spoken, through the runners that offer speech. */
  voice: Voice
  /** Sign-in through the identity providers companies configure (OpenID Connect). */
  sso: SingleSignOn
}
