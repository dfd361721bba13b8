/**
 * The plugin SDK: the one module a plugin imports from Switchboard. Everything a plugin may use of the kernel
 * is here, so the kernel can change behind it.
 */
import type { OpenAPIHono } from '@hono/zod-openapi'
import type { Context, MiddlewareHandler } from 'hono'
import { ApiError } from '../errors.ts'
import { requireActor as requireSignedIn } from '../auth/access.ts'
import type { Actor } from '../auth/actor.ts'
import type { Logger } from '../logger.ts'
import type { ModelEntry, Runner } from '../runners/contract.ts'
import type { ToolContext, ToolUser, VirtualTool } from '../mcp/providers.ts'
import type { Manifest } from './manifest.ts'
import type { Plans } from '../plans/plans.ts'
import type { Artifacts } from '../artifacts/artifacts.ts'
import type { BackgroundTasks } from '../tasks/tasks.ts'
import type { ToolRecords } from '../models/tool-records.ts'
import type { PluginEnv } from './openapi.ts'
import type { ChannelKernel } from '../channels/contract.ts'

export { ApiError } from '../errors.ts'
export { clientPerKey, modelList, priceList, readProviderSettings, usage, type Prices, type ProviderSettings } from '../runners/provider-settings.ts'
export { finishAnswer, type PartialToolCall } from '../runners/tool-calls.ts'
export { LONGEST_RETRY_WAIT_MS, patientFetch, providerFailure, type ProviderSdk } from '../runners/provider-failures.ts'
export { openAICompatibleRunner } from '../runners/openai-compatible.ts'
export { DeviceSignIn } from '../runners/device-sign-in.ts'
export { systemClock } from '../clock.ts'
export { createPluginRouter, problem, signedIn, type PluginEnv } from './openapi.ts'
export { createRoute, z } from '@hono/zod-openapi'
export { PLAN_TOOL_INPUTS } from '../plans/inputs.ts'
export { toolInput, type ToolInput } from '../mcp/tool-input.ts'
export { planText, type PlanView } from '../plans/view.ts'
export type { TaskView } from '../tasks/tasks.ts'
export type { Job, JobWork } from '../scheduler.ts'
export { ChannelSendError } from '../channels/contract.ts'
export type {
  ChannelChoice,
  ChannelDriver,
  ChannelEndpoint,
  ChannelKernel,
  ChannelPlatform,
  ChannelSettings,
  ChannelTarget,
  InboundAttachment,
  InboundMessage,
  VoiceMessage,
  WebhookReport,
} from '../channels/contract.ts'
export { secretsEqual } from '../auth/secrets.ts'
export { hmacSha256 } from '../channels/signatures.ts'
export { cappedBody } from '../net/capped-body.ts'
export type { ChatMessage, ModelEntry, Runner, RunnerEvent, RunnerRequest, SpeakRequest, ToolCall, ToolSpec, TranscribeRequest } from '../runners/contract.ts'
export type { Actor, Logger, Manifest, MiddlewareHandler }
export type { ToolContext, ToolTurn, ToolUser, VirtualTool } from '../mcp/providers.ts'
export type { CallToolResult } from '@modelcontextprotocol/sdk/types.js'

/** What one model call cost, as a runner's `usage` events add up. */
export interface UsageReport {
  runner: string
  /** The runner's model id (ModelEntry.id). */
  model: string
  input_tokens: number
  output_tokens: number
  cost_usd: number
}

/** The kernel services behind the built-in tool plugins: their rules live in the kernel, for the tools and the API alike. */
export interface PluginKernel {
  plans: Plans
  artifacts: Artifacts
  tasks: BackgroundTasks
  /**
   * The generic records (/api/v1's models) as the person a tool runs for writes them, under the same role rules:
   * caches, live agents and chat feeds follow as after any write.
   */
  records: ToolRecords
}

export interface PluginContext {
  readonly manifest: Manifest
  /**
   * The plugin's settings, as text, keyed by `key` in lower case: the manifest's config_schema defaults, then what a
   * superadmin stored (PUT /api/plugins/<name>/settings), then SWITCHBOARD_PLUGIN_<NAME>_<KEY> variables, which the
   * operator set and so win (for runner-openai, SWITCHBOARD_PLUGIN_RUNNER_OPENAI_BASE_URL is `base_url`). The object
   * is live: read it when you need a value, or re-read it in onStartup, which runs again after every change. Secret
   * settings are not here: read them with secret(key).
   */
  readonly settings: Readonly<Record<string, string>>
  /** Log lines carry the plugin's name. */
  readonly log: Logger
  /**
   * The plugin's routes. A `public_api` plugin's router is mounted at its `public_api_prefix` and decides itself
   * who may call (webhook receivers check a signature); any other plugin's is mounted at /api/plugins/<name>/
   * behind sign-in. Declare routes with `router.openapi(createRoute({...}), handler)` so /api/openapi.json
   * describes them (paths relative to the mount point); the host adds sign-in security to a private router's.
   */
  readonly router: OpenAPIHono<PluginEnv>
  /**
   * Runs at boot, after every plugin is set up, and again on each reload, each time the plugin is switched on and
   * after its settings change, in every process (ON_STARTUP). A plugin switched off is still set up at boot, but
   * its hooks wait until it is switched on.
   */
  onStartup(hook: () => void | Promise<void>): void
  /** Offers a runner to agents, under its name (an agent's `runner` field). */
  registerRunner(runner: Runner): void
  /**
   * Serves built-in tools (an mcp plugin only): a virtual tool provider named after the plugin, reached at
   * /mcp/<plugin> and by agents that enable the plugin, behind the same MCP permission rules as any server.
   */
  registerTools(tools: VirtualTool[]): void
  /** A runner by name; looked up when called, so runners of plugins set up later count too. */
  runner(name: string): Runner | undefined
  /** A runner's model from the persisted registry (its first, when `modelId` is empty), read afresh each call. */
  model(runner: string, modelId?: string): Promise<ModelEntry | undefined>
  /** One of this plugin's own secrets from the vault (e.g. an API key set through the runner endpoints). */
  secret(key: string): Promise<string | undefined>
  /** Keeps (or, with null, deletes) one of this plugin's own secrets in the vault: tokens it signed in with, say. */
  keepSecret(key: string, value: string | null): Promise<void>
  /**
   * The API rate limit of /api/v1/*, from the same per-user bucket (a 429 with Retry-After when it is empty), for
   * a route that spends resources: `router.post('/x', context.throttle, handler)`.
   */
  readonly throttle: MiddlewareHandler<PluginEnv>
  /**
   * Records a model call's cost against the caller's company and user (read back as UsageRecord), under this
   * plugin's name. The caller must be a company member (see requireMember).
   */
  recordUsage(c: Context<PluginEnv>, usage: UsageReport): Promise<void>
  /** Kernel services for built-in tools: the plugins are set up once the kernel stands, so it is there from setup() on. */
  readonly kernel: PluginKernel
  /**
   * For channel plugins: register the platform's driver in setup(); hand each verified delivery to receive(), which
   * dedupes it across processes, runs the turn as the linked user and queues the answer for the driver's send().
   */
  readonly channels: ChannelKernel
}

export interface Plugin {
  setup(context: PluginContext): void | Promise<void>
}

/** A plugin module's default export. */
export function definePlugin(plugin: Plugin): Plugin {
  return plugin
}

/**
 * Whom what a built-in tool keeps (a plan, an artifact, a task) belongs to: the person whose chat turn called it,
 * though the tool runs as the agent's service account; through `/mcp`, the caller.
 */
export function personOf(context: ToolContext): ToolUser {
  return context.turn?.person ?? context.user
}

/** The signed-in caller of a request, or a 401 problem. For public routes that still need a user. */
export function requireActor(c: Context<PluginEnv>): Actor {
  return requireSignedIn(c.get('actor'))
}

/** The signed-in caller working in a company: a 401 problem without sign-in, a 403 for a user of no company. */
export function requireMember(c: Context<PluginEnv>): Actor & { companyId: string } {
  const actor = requireActor(c)
  if (actor.companyId === null) throw new ApiError('forbidden', 'This route works for a company, and you are not a member of any.')
  return { ...actor, companyId: actor.companyId }
}
