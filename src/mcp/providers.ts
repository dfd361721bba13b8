import type { Client } from '@modelcontextprotocol/sdk/client/index.js'
import type { Metrics } from '../metrics/metrics.ts'
import type {
  CallToolRequest,
  CallToolResult,
  GetPromptRequest,
  GetPromptResult,
  ListPromptsResult,
  ListResourcesResult,
  ListResourceTemplatesResult,
  ListToolsResult,
  Progress,
  ReadResourceRequest,
  ReadResourceResult,
} from '@modelcontextprotocol/sdk/types.js'
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js'
import type { Actor } from '../auth/actor.ts'
import type { ServerDefinition, Upstreams } from './upstreams.ts'

/** How a tool call is run: cancelled with `signal`; `onProgress` hears the upstream's progress notifications. */
export interface CallOptions {
  signal?: AbortSignal
  onProgress?: (progress: Progress) => void
  /** Set when an agent's chat turn calls the tool (a built-in tool then knows its conversation). */
  turn?: ToolTurn
  /** A person said yes to this call of a tool an approve rule guards (the gateway asked its host). */
  approved?: boolean
}

/** The chat turn a tool is called from. */
export interface ToolTurn {
  conversationId: string
  agentId: string
  /**
   * The person whose turn it is. A tool runs as `user`, which is the agent's service account when it has one; what
   * a built-in tool keeps for someone (a plan, an artifact, a task) belongs to this person, or everyone using the
   * agent would share it.
   */
  person: ToolUser
  /**
   * Runs another of the turn's tools by its model-facing name (`server__tool`), within the agent's and the user's
   * permissions, as the turn itself would: how a background task runs one after the turn has ended.
   */
  callTool(name: string, args: Record<string, unknown>, signal: AbortSignal, onProgress?: (progress: Progress) => void): Promise<string>
  /** Whether the turn offers this tool (`server__tool`): what callTool would run rather than refuse. */
  offers(name: string): boolean
}

/**
 * How long an upstream tool call may take (MCP SDK's default is 60 s, which would cut long tools short and count
 * against the breaker). Progress notifications restart it; an agent's turn timeout or a host's cancel end it sooner.
 */
const TOOL_CALL_TIMEOUT_MS = 15 * 60 * 1000
/** However much progress it reports, a tool call ends after this long. */
const TOOL_CALL_MAX_MS = 4 * TOOL_CALL_TIMEOUT_MS

/** Who a tool runs for: a user in a company (the caller, or an agent's service account, then `delegated`). */
export type ToolUser = Pick<Actor, 'userId' | 'companyId'> & { delegated?: boolean }

/** For lists asked on someone's behalf who cannot wait long (an agent's turn about to start). */
export interface ListOptions {
  signal?: AbortSignal
  timeoutMs?: number
}

/** Who a built-in tool runs for, and from which chat turn when an agent calls it (through `/mcp`, none). */
export interface ToolContext {
  user: ToolUser
  signal: AbortSignal
  turn?: ToolTurn
}

/** A built-in tool of an mcp-kind plugin (a virtual tool provider). */
export interface VirtualTool {
  name: string
  description: string
  /** JSON Schema of the arguments (type: object). */
  inputSchema: { type: 'object'; properties?: Record<string, object>; required?: string[] }
  /** The answer as text, or a whole MCP tool result. Throwing answers an error result with the message. */
  run(args: Record<string, unknown>, context: ToolContext): string | CallToolResult | Promise<string | CallToolResult>
}

/**
 * Something that serves MCP tools under a name: an upstream server, or a plugin's built-in tools. Permissions are
 * not its business; the gateway and the agent tool set filter what it offers.
 */
export interface Provider {
  readonly name: string
  /** An upstream server, a plugin's built-in tools, or all of a user's at once (the gateway's `/mcp`). */
  readonly kind: 'upstream' | 'virtual' | 'aggregate'
  listTools(user: ToolUser, cursor?: string, options?: ListOptions): Promise<ListToolsResult>
  callTool(user: ToolUser, params: CallToolRequest['params'], options?: CallOptions): Promise<CallToolResult>
  listResources(user: ToolUser, cursor?: string): Promise<ListResourcesResult>
  listResourceTemplates(user: ToolUser, cursor?: string): Promise<ListResourceTemplatesResult>
  readResource(user: ToolUser, params: ReadResourceRequest['params']): Promise<ReadResourceResult>
  listPrompts(user: ToolUser, cursor?: string): Promise<ListPromptsResult>
  getPrompt(user: ToolUser, params: GetPromptRequest['params']): Promise<GetPromptResult>
}

/** What every tool call passes through, whoever makes it (a host through the gateway, an agent, a task). */
export interface ToolCallHooks {
  metrics?: Metrics
  /** Why the call may not start (the person's or company's budget is spent), or nothing; nothing at once where it can tell. */
  refusal?(user: ToolUser): Promise<string | undefined> | undefined
}

/**
 * Starts a tool call unless it is refused (answered as an error result the model or host reads), and counts it by
 * how it ended: answered, answered with an error, or failed outright.
 */
async function guarded(hooks: ToolCallHooks, user: ToolUser, server: string, tool: string, call: () => Promise<CallToolResult>): Promise<CallToolResult> {
  const judging = hooks.refusal?.(user)
  const refused = judging && (await judging)
  if (refused !== undefined) {
    hooks.metrics?.toolCall(server, tool, 'error')
    return { content: [{ type: 'text', text: refused }], isError: true }
  }
  const { metrics } = hooks
  if (!metrics) return call()
  try {
    const result = await call()
    metrics.toolCall(server, tool, result.isError ? 'error' : 'ok')
    return result
  } catch (error) {
    metrics.toolCall(server, tool, 'error')
    throw error
  }
}

/** An upstream MCP server, reached through the user's own connection. */
export class UpstreamProvider implements Provider {
  readonly kind = 'upstream'

  constructor(
    readonly server: ServerDefinition,
    private readonly upstreams: Upstreams,
    private readonly hooks: ToolCallHooks = {},
  ) {}

  get name(): string {
    return this.server.name
  }

  listTools(user: ToolUser, cursor?: string, { signal, timeoutMs }: ListOptions = {}) {
    return this.#call(user, (c) => c.listTools({ cursor }, { signal, timeout: timeoutMs }), signal)
  }

  callTool(user: ToolUser, params: CallToolRequest['params'], { signal, onProgress }: CallOptions = {}) {
    const options = {
      signal,
      timeout: TOOL_CALL_TIMEOUT_MS,
      resetTimeoutOnProgress: true,
      maxTotalTimeout: TOOL_CALL_MAX_MS,
      ...(onProgress ? { onprogress: onProgress } : {}),
    }
    return guarded(this.hooks, user, this.name, params.name, () => this.#call(user, (c) => c.callTool(params, undefined, options) as Promise<CallToolResult>, signal))
  }

  // An upstream without resources or prompts simply has none to offer, rather than an error.
  listResources(user: ToolUser, cursor?: string) {
    return this.#call(user, (c) => (c.getServerCapabilities()?.resources ? c.listResources({ cursor }) : { resources: [] }))
  }

  listResourceTemplates(user: ToolUser, cursor?: string) {
    return this.#call(user, (c) => (c.getServerCapabilities()?.resources ? c.listResourceTemplates({ cursor }) : { resourceTemplates: [] }))
  }

  readResource(user: ToolUser, params: ReadResourceRequest['params']) {
    return this.#call(user, (c) => c.readResource(params))
  }

  listPrompts(user: ToolUser, cursor?: string) {
    return this.#call(user, (c) => (c.getServerCapabilities()?.prompts ? c.listPrompts({ cursor }) : { prompts: [] }))
  }

  getPrompt(user: ToolUser, params: GetPromptRequest['params']) {
    return this.#call(user, (c) => c.getPrompt(params))
  }

  #call<T>(user: ToolUser, request: (client: Client) => T | Promise<T>, signal?: AbortSignal): Promise<T> {
    return this.upstreams.call(user, this.server, async (client) => request(client), signal)
  }
}

/** A plugin's built-in tools; they have no resources or prompts. */
export class VirtualProvider implements Provider {
  readonly kind = 'virtual'
  readonly #tools: Map<string, VirtualTool>

  constructor(
    readonly name: string,
    tools: readonly VirtualTool[],
    private readonly hooks: ToolCallHooks = {},
  ) {
    this.#tools = new Map(tools.map((t) => [t.name, t]))
  }

  async listTools(): Promise<ListToolsResult> {
    return { tools: [...this.#tools.values()].map(({ name, description, inputSchema }) => ({ name, description, inputSchema })) }
  }

  callTool(user: ToolUser, params: CallToolRequest['params'], options: CallOptions = {}): Promise<CallToolResult> {
    return guarded(this.hooks, user, this.name, params.name, () => this.#run(user, params, options))
  }

  async #run(user: ToolUser, params: CallToolRequest['params'], { signal = new AbortController().signal, turn }: CallOptions): Promise<CallToolResult> {
    const tool = this.#tools.get(params.name)
    if (!tool) return errorResult(`${this.name} has no tool ${params.name}.`)
    try {
      const result = await tool.run(params.arguments ?? {}, { user, signal, ...(turn ? { turn } : {}) })
      return typeof result === 'string' ? { content: [{ type: 'text', text: result }] } : result
    } catch (error) {
      return errorResult((error as Error).message)
    }
  }

  async listResources(): Promise<ListResourcesResult> {
    return { resources: [] }
  }

  async listResourceTemplates(): Promise<ListResourceTemplatesResult> {
    return { resourceTemplates: [] }
  }

  async readResource(_user: ToolUser, params: ReadResourceRequest['params']): Promise<ReadResourceResult> {
    throw new McpError(ErrorCode.InvalidParams, `${this.name} has no resource ${params.uri}.`)
  }

  async listPrompts(): Promise<ListPromptsResult> {
    return { prompts: [] }
  }

  async getPrompt(_user: ToolUser, params: GetPromptRequest['params']): Promise<GetPromptResult> {
    throw new McpError(ErrorCode.InvalidParams, `${this.name} has no prompt ${params.name}.`)
  }
}

export function errorResult(text: string): CallToolResult {
  return { isError: true, content: [{ type: 'text', text }] }
}
