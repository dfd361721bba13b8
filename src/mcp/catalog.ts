import { AggregateProvider } from './aggregate.ts'
import type { McpDirectory } from './directory.ts'
import { mayUseServer, mayUseTool } from './permissions.ts'
import { UpstreamProvider, VirtualProvider, type Provider, type ToolUser, type VirtualTool } from './providers.ts'
import type { Upstreams } from './upstreams.ts'

/** Whether the user may use an item of a server: a tool by name, `prompt:<name>` or `resource:<uri>`. */
export type Judge = (server: string, item: string) => boolean

/**
 * The MCP providers a user can reach, and the rules that judge them: their company's upstream servers and every
 * plugin's built-in tools, all behind the same permission rules. The gateway and the agents' tool sets both ask here.
 */
export class McpCatalog {
  readonly #virtual: Map<string, VirtualProvider>

  constructor(
    private readonly directory: McpDirectory,
    private readonly upstreams: Upstreams,
    virtualTools: ReadonlyMap<string, readonly VirtualTool[]>,
    /** Whether a plugin is switched on now: a plugin's tools come and go with it, in every catalogue. */
    private readonly pluginEnabled: (plugin: string) => boolean = () => true,
  ) {
    this.#virtual = new Map([...virtualTools].map(([name, tools]) => [name, new VirtualProvider(name, tools)]))
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
    return server && new UpstreamProvider(server, this.upstreams)
  }

  /** Every provider the user may reach at all. */
  async providers(user: ToolUser): Promise<Provider[]> {
    if (!user.companyId) return []
    const [servers, rules] = await Promise.all([this.directory.servers(user.companyId), this.directory.rules(user.companyId)])
    const plugins = [...this.#virtual.keys()].flatMap((name) => this.#plugin(name) ?? [])
    const all: Provider[] = [...plugins, ...servers.filter((s) => !this.#virtual.has(s.name)).map((s) => new UpstreamProvider(s, this.upstreams))]
    return all.filter((p) => mayUseServer(rules, user.userId, p.name))
  }

  /** Everything the user may use, as one provider that judges by itself (the gateway's `/mcp`). */
  async aggregate(user: ToolUser): Promise<AggregateProvider> {
    const [providers, judge] = await Promise.all([this.providers(user), this.judge(user)])
    return new AggregateProvider(providers, judge)
  }

  /** The user's permissions, read once (they are cached for a few seconds) and asked many times. */
  async judge(user: ToolUser): Promise<Judge & { server(name: string): boolean }> {
    const rules = user.companyId ? await this.directory.rules(user.companyId) : []
    const judge = (server: string, item: string) => mayUseTool(rules, user.userId, server, item) === 'allow'
    return Object.assign(judge, { server: (name: string) => mayUseServer(rules, user.userId, name) })
  }
}
