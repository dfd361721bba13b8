import { join } from 'node:path'
import { createAdminApp } from './admin/app.tsx'
import { createApiClient } from './admin/api-client.ts'
import { createWebChat, type WebChat } from './admin/chat/index.ts'
import { AgentConfigs } from './agents/configs.ts'
import { AgentSupervisor } from './agents/supervisor.ts'
import { createApiApp } from './api/app.ts'
import { createAuthApp } from './api/auth/index.ts'
import { createPasswordResetApp } from './api/passwords/index.ts'
import { ActiveTurns } from './chat/active-turns.ts'
import { Chat } from './chat/chat.ts'
import { ChatFeed } from './chat/feed.ts'
import { ConversationDocuments } from './documents/conversation-documents.ts'
import { Approvals } from './approvals/approvals.ts'
import { stopExtractions } from './documents/extract.ts'
import { AgentTools } from './chat/tools.ts'
import { AccessPolicy } from './auth/access.ts'
import { Authenticator } from './auth/authenticator.ts'
import { ensureSuperadmin, type Bootstrap, type FirstPassword } from './auth/bootstrap.ts'
import { sessionPolicy } from './auth/sessions.ts'
import { systemClock, type Clock } from './clock.ts'
import type { Config } from './config.ts'
import type { Store } from './db/connect.ts'
import { migrate } from './db/migrate.ts'
import type { Logger } from './logger.ts'
import { createModelRegistry } from './models/registry.ts'
import { SmtpMailer } from './mail/mailer.ts'
import { serveVaultSocket } from './vault/socket.ts'
import type { Services } from './services.ts'
import { NoMetrics, type Metrics } from './metrics/metrics.ts'
import { Tracing } from './tracing/tracing.ts'
import type { SpanExporter } from '@opentelemetry/sdk-trace'
import { MemoryBucketStore, type BucketStore } from './throttle/buckets.ts'
import { PostgresBucketStore } from './throttle/postgres.ts'
import { LeasedBucketStore } from './throttle/leased.ts'
import type { EventBus } from './events/bus.ts'
import { MemoryBus } from './events/memory.ts'
import { PostgresBus } from './events/postgres.ts'
import { MemoryTurnLocks, PostgresTurnLocks, type TurnLocks } from './chat/turn-locks.ts'
import { SelfAddress } from './http/self-address.ts'
import { RunnerModels } from './runners/registry.ts'
import { deriveHmacKey, deriveKey, masterKey } from './vault/keys.ts'
import { VaultTokens } from './vault/tokens.ts'
import { McpCatalog } from './mcp/catalog.ts'
import { McpDirectory } from './mcp/directory.ts'
import { Gateway } from './mcp/gateway.ts'
import { Sandbox } from './mcp/sandbox.ts'
import { Upstreams } from './mcp/upstreams.ts'
import { McpConnections } from './mcp/connections.ts'
import { outboundChecks } from './net/write-checks.ts'
import { Writes } from './events/writes.ts'
import { ToolRecords } from './models/tool-records.ts'
import { CacheFlusher, flushAfterWrites } from './events/caches.ts'
import { OutboundPolicy } from './net/outbound.ts'
import { Vault } from './vault/vault.ts'
import { discoverPlugins } from './plugin-host/discover.ts'
import { PluginHost } from './plugin-host/host.ts'
import { OAuthClients } from './oauth/clients.ts'
import { AuthorizationServer } from './oauth/server.ts'
import type { PluginKernel } from './plugin-host/sdk.ts'
import { Plans } from './plans/plans.ts'
import { PlanContinuation } from './plans/continuation.ts'
import { Artifacts } from './artifacts/artifacts.ts'
import { sweepAudit } from './audit/trail.ts'
import { Budgets } from './usage/budgets.ts'
import { Drain } from './lifecycle/drain.ts'
import { SystemSettings } from './settings/system.ts'
import { sweepConversations } from './chat/retention.ts'
import { BEAT_MS, Presence } from './lifecycle/presence.ts'
import { BackgroundTasks } from './tasks/tasks.ts'
import { Channels } from './channels/channels.ts'
import { Voice } from './voice/voice.ts'
import { SingleSignOn } from './auth/sso/single-sign-on.ts'
import { Scheduler } from './scheduler.ts'

/** How often expired artifacts are deleted (each process may; whoever comes first does it). */
const ARTIFACT_SWEEP_MS = 10 * 60_000
// Several processes may sweep at once: each deletes what is left, which is nothing after the first.
const AUDIT_SWEEP_MS = 6 * 60 * 60_000
const CONVERSATION_SWEEP_MS = 60 * 60_000

/** The plugins that ship with Switchboard; SWITCHBOARD_PLUGIN_PATHS adds more folders. */
const PLUGINS_DIR = join(import.meta.dir, '..', 'plugins')

export interface Platform {
  services: Services
  api: ReturnType<typeof createApiApp>
  admin: ReturnType<typeof createAdminApp>
  /** Bun's WebSocket handler for the admin server (the web chat's `/ws/chat`). */
  adminWebSocket: WebChat['websocket']
  bootstrap: Bootstrap
  /** Tells the web chat's sockets to go (1001): a server's graceful stop waits for open WebSockets. */
  closeSockets(): void
  /** Ends what the platform opened besides the store: MCP requests and upstreams, the bus's and the locks' connections. */
  close(): Promise<void>
}

/**
 * What several processes on one PostgreSQL must share: the event bus, the turn locks and (unless configured
 * otherwise) the throttles' buckets live in the database. The embedded store has one process, and keeps them in memory.
 */
async function sharedState(config: Config, store: Store, log: Logger, metrics: Metrics, onLost: (conversationId: string) => void) {
  const url = store.kind === 'postgres' ? store.url : undefined
  const events: EventBus = url ? await PostgresBus.connect(url, store.db, log, metrics) : new MemoryBus(log)
  const locks: TurnLocks = url ? new PostgresTurnLocks(url, log, onLost) : new MemoryTurnLocks()
  const sharedBuckets = (config.throttleStore ?? (url ? 'shared' : 'memory')) === 'shared'
  const buckets = (): BucketStore => (sharedBuckets ? new PostgresBucketStore(store.db) : new MemoryBucketStore())
  // The API and MCP limits are served from leases, off the hot path; sign-in's reserve-then-verify stays exact.
  const leased = (): BucketStore => (sharedBuckets ? new LeasedBucketStore(new PostgresBucketStore(store.db)) : new MemoryBucketStore())
  return { events, locks, throttles: { api: leased(), login: buckets(), mcp: leased() } }
}

export interface PlatformOptions {
  clock?: Clock
  traceExporter?: SpanExporter
  /** The first superadmin's password, its hash begun while the store opened (main.ts, on a new data directory). */
  firstPassword?: FirstPassword
}

/** Builds the kernel services and both apps on an open store. Servers and signals are main.ts's business. */
export async function createPlatform(config: Config, store: Store, log: Logger, { clock = systemClock, traceExporter, firstPassword }: PlatformOptions = {}): Promise<Platform> {
  const applied = await migrate(store.session)
  if (applied.length > 0) log.info('migrations applied', { migrations: applied })
  // Before anything reads the store: the first start seeds the default company and its agents here.
  const bootstrap = await ensureSuperadmin(store.db, config.initialAdmin, firstPassword)
  let turns: ActiveTurns | undefined
  // Their libraries are loaded only where they are used: most starts serve neither metrics nor traces.
  const metrics: Metrics = config.metricsToken ? new (await import('./metrics/prometheus.ts')).PrometheusMetrics() : new NoMetrics()
  const tracing = await Tracing.create(config.tracing, traceExporter)
  const { events, locks, throttles } = await sharedState(config, store, log, metrics, (id) => turns?.lost(id))
  turns = new ActiveTurns(locks, events, config.turnsPerUser)
  const self = new SelfAddress(config.host, config.apiPort)
  // The api app is made further down; the socket hands it requests once there are any.
  let apiApp: ReturnType<typeof createApiApp> | undefined
  const vaultSocket = serveVaultSocket(() => apiApp!)
  const scheduler = new Scheduler(log)
  const outbound = new OutboundPolicy(config.outboundAllow, { ca: config.outboundCa })
  const writes = new Writes(store.db, outboundChecks(outbound), log)
  // What still runs here, read when a drain reports: the services it counts are made below.
  const drain = new Drain(() => ({ turns: turns!.running, channel_work: channels.inFlight, background_tasks: kernel.tasks.running }))
  const presence = new Presence(store.db, clock, () => drain.draining)
  const caches = new CacheFlusher(events, presence)
  flushAfterWrites(writes, caches)
  const vault = new Vault(store.db, await deriveKey(masterKey(config.masterKey, config.dataDir), 'switchboard vault v1'), writes)
  const runnerModels = new RunnerModels(store.db, clock, events, writes)
  const vaultTokens = new VaultTokens(store.db, clock)
  const mcpDirectory = new McpDirectory(store.db, clock, events)
  const sandbox = new Sandbox({ mode: config.mcpSandbox, dataDir: config.dataDir })
  if (!sandbox.enabled) log.warn('stdio MCP servers run unsandboxed (SWITCHBOARD_MCP_SANDBOX=none): they see what the platform sees')
  const mcpConnections = new McpConnections(store.db, vault, clock, outbound.fetch, `${config.adminBaseUrl}/me/connections/callback`)
  const upstreams = new Upstreams(
    vault,
    vaultTokens,
    config,
    clock,
    log,
    { sandbox, outbound, self, vaultSocket },
    async (server) => (await mcpDirectory.servers(server.company_id)).some((s) => s.id === server.id),
    mcpConnections,
  )
  // First phase: the plugins found and which are on, with an empty registry of their runners and tools, which the
  // kernel services read when called. The plugins themselves are set up once the kernel stands, below.
  const plugins = await PluginHost.open(discoverPlugins([PLUGINS_DIR, ...config.pluginPaths]), { log, env: config.pluginEnv, models: runnerModels, vault, db: store.db, clock, events })
  const isEnabled = (plugin: string) => plugins.isEnabled(plugin)
  const policy = sessionPolicy(config)
  const authenticator = new Authenticator(store.db, clock, policy, events)
  const budgets = new Budgets(store.db, clock, events)
  const settings = new SystemSettings(store.db, clock, events)
  const catalog = new McpCatalog(mcpDirectory, upstreams, plugins.toolProviders, isEnabled, mcpConnections, { metrics, refusal: (user) => budgets.refusal(user) })
  const feed = new ChatFeed(events, log)
  const plans = new Plans(store.db, writes, feed)
  const approvals = new Approvals(store.db, events, feed, clock, log, plans)
  const tools = new AgentTools(store.db, catalog, log, approvals)
  const agents = new AgentSupervisor(store.db, log, () => plugins.startup(), events)
  const voice = new Voice({ db: store.db, runners: plugins.runners, limits: config.voice, log, budgets })
  const agentConfigs = new AgentConfigs(store.db, clock, events)
  const documents = new ConversationDocuments(store.db, events, caches)
  const chat = new Chat({ db: store.db, runners: plugins.runners, models: runnerModels, tools, log, metrics, tracing, budgets, documents, settings, turns, agents, agentConfigs, events, feed, writes, drain, voice })
  const channels = new Channels({
    db: store.db,
    voice,
    vault,
    clock,
    log,
    metrics,
    tracing,
    drain,
    internalSecret: config.internalApiSecret,
    events,
    writes,
    outbound,
    publicBaseUrl: config.baseUrl,
    adminBaseUrl: config.adminBaseUrl,
    retryMs: config.channelRetryMs,
    scheduler,
    shared: store.kind === 'postgres',
    documentMaxBytes: config.documentMaxBytes,
    guesses: throttles.login,
    sandbox,
    chat,
    feed,
    documents,
    authenticator,
    approvals,
    pluginEnabled: isEnabled,
  })
  const access = new AccessPolicy(store.db, clock, events)
  const models = createModelRegistry()
  const kernel: PluginKernel = {
    plans,
    artifacts: new Artifacts({
      db: store.db,
      writes,
      clock,
      log,
      signingKey: await deriveHmacKey(masterKey(config.masterKey, config.dataDir), 'switchboard artifact share links v1'),
      shareBaseUrl: config.adminBaseUrl,
      defaultTtlDays: () => settings.get('retention.artifact_days'),
    }),
    tasks: new BackgroundTasks({ db: store.db, writes, clock, log, catalog, feed, events, perUser: config.tasksPerUser, shared: store.kind === 'postgres', scheduler, tracing, drain }),
    records: new ToolRecords({ models, access, authenticator, writes }),
  }
  const continuation = new PlanContinuation(kernel.plans, chat, authenticator, log, config.planContinuationDelayMs)
  // Second phase: the plugins are set up against the finished kernel, and fill the registry.
  await plugins.load({ kernel, channels })
  await runnerModels.prepare(plugins.runners.values())
  const oauth = new AuthorizationServer(
    store.db,
    clock,
    new OAuthClients(store.db, clock, outbound.fetch),
    { issuer: config.baseUrl, accessTokenSeconds: config.oauth.accessTokenSeconds, refreshTokenSeconds: config.oauth.refreshTokenSeconds },
    // A grant for one server is asked of someone who may use it; the aggregate and the API hold whatever they may.
    async (actor, target) => target.kind === 'api' || target.server === '' || ((await catalog.provider(actor, target.server)) !== undefined && (await catalog.judge(actor)).server(target.server)),
    writes,
  )
  const mailer = config.mail.smtpUrl ? new SmtpMailer(config.mail.smtpUrl, config.mail.from) : undefined
  const services: Services = {
    config,
    db: store.db,
    dbPool: store.pool,
    metrics,
    tracing,
    models,
    writes,
    outbound,
    sandbox,
    log,
    clock,
    scheduler,
    events,
    caches,
    documents,
    self,
    sessionPolicy: policy,
    authenticator,
    access,
    throttles,
    mailer,
    plugins,
    runnerModels,
    vault,
    vaultTokens,
    vaultSocket,
    upstreams,
    mcpDirectory,
    catalog,
    gateway: new Gateway(catalog, store.db, events, caches, approvals),
    tools,
    approvals,
    budgets,
    drain,
    presence,
    settings,
    chat,
    agents,
    oauth,
    mcpConnections,
    plans: kernel.plans,
    continuation,
    artifacts: kernel.artifacts,
    tasks: kernel.tasks,
    channels,
    voice,
    sso: new SingleSignOn({
      db: store.db,
      vault,
      outbound,
      clock,
      log,
      adminBaseUrl: config.adminBaseUrl,
      allowHttp: config.oidcAllowHttp,
      flowKey: deriveHmacKey(masterKey(config.masterKey, config.dataDir), 'switchboard sso flow v1'),
    }),
  }
  services.agents.follow(writes)
  services.chat.follow(writes)
  // Before agents start: tasks the last run left running are settled first.
  await services.tasks.start()
  const api = createApiApp(services)
  apiApp = api
  const apiClient = createApiClient(api)
  const webChat = createWebChat(services, apiClient)
  const admin = createAdminApp(services, apiClient, [createAuthApp(services), createPasswordResetApp(services)], webChat)
  await plugins.startup()
  await services.agents.startAll()
  scheduler.every('sweeping expired artifacts', ARTIFACT_SWEEP_MS, () => services.artifacts.sweep(), { now: true })
  scheduler.every('sweeping conversations past their retention', CONVERSATION_SWEEP_MS, async () => sweepConversations(services.db, await settings.get('retention.conversation_days'), services.clock.now()), { now: true })
  scheduler.every('sweeping old audit events', AUDIT_SWEEP_MS, () => sweepAudit(services.db, config.auditRetentionDays, services.clock.now()), { now: true })
  scheduler.every('closing idle MCP connections', upstreams.reapEveryMs, async () => void (await upstreams.reapIdle()))
  channels.start()
  // A draining process claims no more queued channel work and polls no mailbox; what it claimed, it finishes.
  drain.onDrain(() => channels.stop())
  scheduler.every('process heartbeat', BEAT_MS, () => presence.beat(), { now: true })
  // The status says at once that this process drains, not at its next beat.
  drain.onDrain(() => presence.beat())
  async function close(): Promise<void> {
    await presence.leave().catch((error: Error) => log.warn('this process’s row was not removed', { error: error.message }))
    await continuation.stop()
    await channels.stop()
    // First: running tasks are marked interrupted while the store, the feed and the upstreams are all still there.
    await services.tasks.close()
    webChat.close()
    await scheduler.stop()
    stopExtractions()
    await services.gateway.closeAll()
    await services.upstreams.closeAll()
    await feed.drain()
    await Promise.all([events.close(), locks.close()])
    mailer?.close()
    vaultSocket.close()
    // Last: the spans of everything above are sent before the process goes.
    await tracing.close()
  }
  return { services, api, admin, adminWebSocket: webChat.websocket, bootstrap, close, closeSockets: () => webChat.close() }
}
