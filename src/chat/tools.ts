import type { CallToolResult, Progress, Tool } from '@modelcontextprotocol/sdk/types.js'
import type { Actor } from '../auth/actor.ts'
import { companyScoped } from '../db/scoped.ts'
import type { AgentConfig, Db } from '../db/schema.ts'
import type { Logger } from '../logger.ts'
import type { McpCatalog } from '../mcp/catalog.ts'
import { CompanyUser } from '../models/company.ts'
import type { Provider, ToolUser } from '../mcp/providers.ts'
import type { ToolSpec } from '../runners/contract.ts'
import type { Approvals } from '../approvals/approvals.ts'
import type { PermissionRule } from '../mcp/permissions.ts'

/** What of an agent decides its tools. */
export type ToolAgent = Pick<AgentConfig, 'id' | 'company_id' | 'mcp_permissions' | 'plugins' | 'context_options'>

/** The tools of one turn: what the model is offered, and how its calls are run. */
export interface TurnTools {
  specs: ToolSpec[]
  /** The tool's answer as text; throws with a readable message when it cannot be run. */
  call(name: string, args: Record<string, unknown>, signal: AbortSignal): Promise<string>
  /** What the person should know about tools missing from this turn (a connection of theirs to make or renew). */
  notices?: string[]
}

/** Where the turn loop gets its tools. */
export interface ToolExecutor {
  /**
   * `signal` ends the turn (stop, timeout): setting up the tools stops waiting too. Built-in tools learn the
   * conversation they are called in.
   */
  forTurn(actor: Actor, agent: ToolAgent, signal: AbortSignal, conversationId: string): Promise<TurnTools>
}

/** Thrown when an agent's tools cannot be set up; the turn reports it to the user as it is. */
export class ToolSetupError extends Error {}

/** Tools the kernel itself offers every agent. */
const BUILT_IN: Array<{ spec: ToolSpec; run(args: Record<string, unknown>): string }> = [
  {
    spec: {
      name: 'current_time',
      description: 'The current date and time, in UTC or in an IANA time zone.',
      parameters: { type: 'object', properties: { time_zone: { type: 'string', description: 'e.g. Europe/Paris' } } },
    },
    run({ time_zone }) {
      return clockReading(new Date(), typeof time_zone === 'string' ? time_zone : 'UTC')
    },
  },
]

/** `YYYY-MM-DD HH:MM:SS <zone>` in a time zone, from the parts Intl gives (locale formats differ on midnight). */
export function clockReading(date: Date, timeZone: string): string {
  const format = new Intl.DateTimeFormat('en-US', {
    timeZone,
    year: 'numeric',
    month: '2-digit',
    day: '2-digit',
    hour: '2-digit',
    minute: '2-digit',
    second: '2-digit',
    hourCycle: 'h23',
    timeZoneName: 'short',
  })
  const part = Object.fromEntries(format.formatToParts(date).map((p) => [p.type, p.value]))
  return `${part.year}-${part.month}-${part.day} ${part.hour}:${part.minute}:${part.second} ${part.timeZoneName}`
}

/** Model-facing names: `<server>__<tool>`, within what providers accept (OpenAI: 64 of [A-Za-z0-9_-]). */
const SEPARATOR = '__'
const TOOL_NAME = /^[A-Za-z0-9_-]{1,64}$/

/** An MCP tool result as the text a model reads. */
function resultText(result: CallToolResult): string {
  const text = result.content
    .map((part) => (part.type === 'text' ? part.text : part.type === 'resource_link' ? `[${part.name}](${part.uri})` : `[${part.type} content]`))
    .join('\n')
  return result.isError ? `Error: ${text}` : text
}

/** What asking for a tool call's approval takes: the rule that asks, who may answer, how long it waits. */
interface Asking {
  rule: string
  approvers: 'self' | 'admins'
  timeoutSeconds: number
}

/** Whether a call needs a person's yes: by a permission rule, or by the agent's own list (the person answers). */
function askingFor(verdict: { decision: string; rule?: PermissionRule }, byAgent: boolean): Asking | undefined {
  if (verdict.decision === 'approve' && verdict.rule) {
    return { rule: `permission rule ${verdict.rule.id ?? `${verdict.rule.server}/${verdict.rule.tool}`}`, approvers: verdict.rule.approvers ?? 'self', timeoutSeconds: verdict.rule.approval_timeout_seconds ?? 300 }
  }
  return byAgent ? { rule: 'the agent’s own list of tools that need approval', approvers: 'self', timeoutSeconds: 300 } : undefined
}

/** What the model reads when a call was not made: why, so it can carry on without it. */
function declined(asked: { server: string; tool: string; timeoutSeconds: number }, outcome: string): string {
  const call = `${asked.server}/${asked.tool}`
  if (outcome === 'denied') return `The person declined the call of ${call}; it was not made. Carry on without it, or ask them what they would rather do.`
  if (outcome === 'expired') return `Nobody answered the request to call ${call} within ${asked.timeoutSeconds} seconds, so it was not made. Carry on without it, or ask again later.`
  return `The call of ${call} was not made: the turn ended while it waited for approval.`
}

/** How long a turn waits for a server's tool list; a server slower than this sits the turn out. */
const LIST_TIMEOUT_MS = 5_000

/** A provider's tools, every page of them (a bounded number, so a looping cursor cannot hold the turn). */
async function allTools(provider: Provider, user: ToolUser, signal: AbortSignal): Promise<Tool[]> {
  const tools: Tool[] = []
  let cursor: string | undefined
  for (let page = 0; page < 20; page++) {
    const listed = await provider.listTools(user, cursor, { signal, timeoutMs: LIST_TIMEOUT_MS })
    tools.push(...listed.tools)
    cursor = listed.nextCursor
    if (!cursor) break
  }
  return tools
}

/**
 * An agent's tools: the kernel's built-ins, plus MCP tools called through the same catalogue and permission rules as
 * the gateway. A server counts when the agent's `mcp_permissions.servers` names it (or names none), the acting user
 * may use it, and, for a plugin's built-in provider, the plugin is in `plugins.enabled`. Each tool must pass the
 * agent's allow and deny lists and the user's rules. The acting user is the caller, or the agent's service account.
 */
export class AgentTools implements ToolExecutor {
  constructor(
    private readonly db: Db,
    private readonly catalog: McpCatalog,
    private readonly log: Logger,
    private readonly approvals: Approvals,
  ) {}

  async forTurn(actor: Actor, agent: ToolAgent, signal: AbortSignal, conversationId: string): Promise<TurnTools> {
    const user = await this.#actingUser(actor, agent)
    const person: ToolUser = { userId: actor.userId, companyId: agent.company_id }
    const judge = await this.catalog.judge(user)
    const listed = agent.mcp_permissions.servers
    const named = Object.keys(listed)
    const [reachable, unconnected] = await Promise.all([this.catalog.providers(user), this.catalog.unconnected(user)])
    const providers = reachable.filter((p) => (named.length === 0 || named.includes(p.name)) && (p.kind === 'upstream' || agent.plugins.enabled.includes(p.name)))
    // Servers that sign each person in sit the turn out until the person connects; the person is told which.
    const notices = unconnected
      .filter((s) => named.length === 0 || named.includes(s.name))
      .map((s) =>
        s.status === 'expired'
          ? `Your connection to the MCP server ${s.name} has expired, so its tools are not available. Reconnect it under My connections (/me/connections).`
          : `The MCP server ${s.name} needs you to connect your own account before its tools are available. Connect it under My connections (/me/connections).`,
      )

    const routes = new Map<string, { provider: Provider; tool: string; approval?: Asking }>()
    const specs = BUILT_IN.map((b) => b.spec)
    // Providers are asked concurrently; one that fails costs only its own tools (and is logged), not the turn.
    const lists = await Promise.all(
      providers.map((provider) =>
        allTools(provider, user, signal).catch((error) => {
          this.log.warn('mcp tools unavailable for a turn', { server: provider.name, error: String((error as Error).message ?? error) })
          return []
        }),
      ),
    )
    providers.forEach((provider, i) => {
      const rules = listed[provider.name]
      for (const tool of lists[i]!) {
        const verdict = judge.verdict(provider.name, tool.name)
        if (verdict.decision === 'deny' || rules?.deny.includes(tool.name) || (rules?.allow && !rules.allow.includes(tool.name))) continue
        const name = `${provider.name}${SEPARATOR}${tool.name}`
        if (!TOOL_NAME.test(name) || routes.has(name)) {
          this.log.warn('mcp tool name unusable by models, or listed twice', { name })
          continue
        }
        routes.set(name, { provider, tool: tool.name, approval: askingFor(verdict, rules?.approve?.includes(tool.name) === true) })
        specs.push({ name, description: tool.description ?? '', parameters: tool.inputSchema as Record<string, unknown> })
      }
    })

    async function call(name: string, args: Record<string, unknown>, signal: AbortSignal, onProgress?: (progress: Progress) => void): Promise<string> {
      const builtIn = BUILT_IN.find((b) => b.spec.name === name)
      if (builtIn) return builtIn.run(args)
      const route = routes.get(name)
      if (!route) throw new Error(`There is no tool named ${name} for this agent.`)
      if (route.approval) {
        const asked = { server: route.provider.name, tool: route.tool, arguments: args, ...route.approval }
        const outcome = await approvals.ask({ companyId: agent.company_id, conversationId, agentId: agent.id, userId: actor.userId, ...asked }, signal)
        if (outcome !== 'approved') return declined(asked, outcome)
      }
      return resultText(await route.provider.callTool(user, { name: route.tool, arguments: args }, { signal, turn, ...(onProgress ? { onProgress } : {}) }))
    }
    const approvals = this.approvals
    const offers = (name: string) => routes.has(name) || BUILT_IN.some((b) => b.spec.name === name)
    const turn = { conversationId, agentId: agent.id, person, callTool: call, offers }
    return { specs, notices, call }
  }

  /** The caller, or the agent's service account when it has one (which must belong to the agent's company). */
  async #actingUser(actor: Actor, agent: ToolAgent): Promise<ToolUser> {
    const account = agent.context_options.service_account
    if (!account) return { userId: actor.userId, companyId: agent.company_id }
    const member = await companyScoped(this.db, agent.company_id).selectFrom(CompanyUser).select('user_id').where('user_id', '=', account).executeTakeFirst()
    if (!member) throw new ToolSetupError(`The agent’s service account ${account} is not a member of its company, so the agent cannot use tools.`)
    return { userId: account, companyId: agent.company_id, delegated: true }
  }
}
