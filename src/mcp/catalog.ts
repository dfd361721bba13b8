import { AggregateProvider } from './aggregate.ts'
import type { McpDirectory } from './directory.ts'
import { mayUseServer, mayUseTool, toolVerdict } from './permissions.ts'
import { UpstreamProvider, VirtualProvider, type Provider, type ToolCallHooks, type ToolUser, type VirtualTool } from './providers.ts'
import type { ServerDefinition, Upstreams } from './upstreams.ts'
import type { McpConnections } from './connections.ts'

/**
 * Whether the user may use an item of a server at once: a tool by name, `prompt:<name>` or `resource:<uri>`.
 * `verdict`, where the judge has the rules, also tells what may be used after a person's yes, and by which rule.
 */
export type Judge = ((server: string, item: string) => boolean) & { verdict?(server: string, item: string): ReturnType<typeof toolVerdict> }

/**
 * The MCP providers a user can reach, and the rules that judge them: their company's upstream servers and every
 * plugin's built-in tools, all behind the same permission rules. The gateway and the agents' tool sets both ask here.
 */
export class McpCatalog {
  readonly #providers = new Map<string, VirtualProvider>()

  constructor(
    private readonly directory: McpDirectory,
    private readonly upstreams: Upstreams,
    /** The plugins' built-in tools by plugin: read when asked, since the plugins register them after this is made. */
    private readonly virtualTools: ReadonlyMap<string, readonly VirtualTool[]>,
    /** Whether a plugin is switched on now: a plugin's tools come and go with it, in every catalogue. */
    private readonly pluginEnabled: (plugin: string) => boolean = () => true,
    /** People's own OAuth connections: a server that signs each person in counts only once they are connected. */
    private readonly connections?: McpConnections,
    /** What every tool call passes through, whoever makes it: the budget check, the metrics. */
    private readonly hooks: ToolCallHooks = {},
  ) {}

  /** Every plugin's provider, made once per plugin when first asked for. */
  get #virtual(): ReadonlyMap<string, VirtualProvider> {
    for (const [name, tools] of this.virtualTools) if (!this.#providers.has(name)) this.#providers.set(name, new VirtualProvider(name, tools, this.hooks))
    return this.#providers
  }

  /** A plugin's provider, while the plugin is switched on. */
  #plugin(name: string): VirtualProvider | undefined {
    return this.pluginEnabled(name) ? this.#virtual.get(name) : undefined
  }

  /** Whether `name` is a plugin's built-in tool provider. */
  isVirtual(name: string): boolean {
    return this.#virtual.has(name)
  }

  /**
   * The provider called `name` for the user, if there is one (permissions aside). A plugin's provider takes the
   * name before a company's server of the same name: built-in tools mean the same everywhere (and a plugin switched
   * off leaves the name to nobody).
   */
  async provider(user: ToolUser, name: string): Promise<Provider | undefined> {
    if (this.#virtual.has(name)) return this.#plugin(name)
    if (!user.companyId) return undefined
    const server = await this.directory.server(user.companyId, name)
    return server && new UpstreamProvider(server, this.upstreams, this.hooks)
  }

  /**
   * Every provider the user may reach at all. A server that signs each person in is left out until they have
   * connected their account (or while their connection is expired); `unconnected` names those.
   */
  async providers(user: ToolUser): Promise<Provider[]> {
    return (await this.#reachable(user)).providers
  }

  /** The servers the user may use but has not connected (or whose connection expired): their tools are absent. */
  async unconnected(user: ToolUser): Promise<Array<{ name: string; status: 'expired' | 'not_connected' }>> {
    return (await this.#reachable(user)).unconnected
  }

  async #reachable(user: ToolUser) {
    if (!user.companyId) return { providers: [], unconnected: [] }
    const [servers, rules] = await Promise.all([this.directory.servers(user.companyId), this.directory.rules(user.companyId)])
    const usable = servers.filter((s) => !this.#virtual.has(s.name) && mayUseServer(rules, user.userId, s.name))
    const statuses = usable.some((s) => s.oauth) && this.connections ? await this.connections.statuses(user.userId) : new Map()
    const connected = (s: ServerDefinition) => !s.oauth || statuses.get(s.id)?.status === 'connected'
    const plugins = [...this.#virtual.keys()].flatMap((name) => this.#plugin(name) ?? []).filter((p) => mayUseServer(rules, user.userId, p.name))
    return {
      providers: [...plugins, ...usable.filter(connected).map((s) => new UpstreamProvider(s, this.upstreams, this.hooks))] as Provider[],
      unconnected: usable.filter((s) => !connected(s)).map((s) => ({ name: s.name, status: statuses.get(s.id)?.status === 'expired' ? ('expired' as const) : ('not_connected' as const) })),
    }
  }

  /** Everything the user may use, as one provider that judges by itself (the gateway's `/mcp`). */
  async aggregate(user: ToolUser): Promise<AggregateProvider> {
    const [providers, judge] = await Promise.all([this.providers(user), this.judge(user)])
    return new AggregateProvider(providers, judge)
  }

  /**
   * The user's permissions, read once (they are cached for a few seconds) and asked many times. The judge itself
   * says what may run at once; `verdict` also tells what may run after a person's yes, and by which rule.
   */
  async judge(user: ToolUser): Promise<Judge & Required<Pick<Judge, 'verdict'>> & { server(name: string): boolean }> {
    const rules = user.companyId ? await this.directory.rules(user.companyId) : []
    const judge = (server: string, item: string) => mayUseTool(rules, user.userId, server, item) === 'allow'
    return Object.assign(judge, { server: (name: string) => mayUseServer(rules, user.userId, name), verdict: (server: string, item: string) => toolVerdict(rules, user.userId, server, item) })
  }
}
