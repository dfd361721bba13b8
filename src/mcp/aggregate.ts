import type { CallToolRequest, GetPromptRequest, ReadResourceRequest } from '@modelcontextprotocol/sdk/types.js'
import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js'
import type { Judge } from './catalog.ts'
import { errorResult, type CallOptions, type Provider, type ToolUser } from './providers.ts'

/** Aggregate names: `<server>__<name>`, the same shape agents see. */
const SEPARATOR = '__'

export function split(name: string): [string, string] | undefined {
  const at = name.indexOf(SEPARATOR)
  return at > 0 ? [name.slice(0, at), name.slice(at + SEPARATOR.length)] : undefined
}

/**
 * Every provider a user may reach as one MCP server (the gateway's `/mcp`): tools and prompts namespaced by server,
 * resources under their own URIs. Built per request with the user's rules, so it filters by itself. Lists are not
 * paged across servers: each server's first page is shown; hosts that need more use `/mcp/<server>`.
 */
export class AggregateProvider implements Provider {
  readonly name = ''
  readonly kind = 'aggregate'
  readonly #byName: Map<string, Provider>

  constructor(
    providers: readonly Provider[],
    private readonly judge: Judge,
  ) {
    this.#byName = new Map(providers.map((p) => [p.name, p]))
  }

  /** Tools that need a person's yes are listed too, saying so: a call of one is refused naming the rule. */
  async listTools(user: ToolUser) {
    const tools = await this.#gather((p) =>
      p.listTools(user).then((r) =>
        r.tools.flatMap((t) => {
          const name = p.name + SEPARATOR + t.name
          if (this.judge(p.name, t.name)) return [{ ...t, name }]
          if (this.judge.verdict?.(p.name, t.name).decision !== 'approve') return []
          return [{ ...t, name, description: `[Each call needs a person’s approval: a host that can be asked (elicitation) is asked, any other is refused.] ${t.description ?? ''}`.trim() }]
        }),
      ),
    )
    return { tools }
  }

  async callTool(user: ToolUser, params: CallToolRequest['params'], options?: CallOptions) {
    const [server, tool] = split(params.name) ?? []
    const provider = server && this.#byName.get(server)
    if (!provider) return errorResult(`You may not use the tool ${params.name}.`)
    if (!this.judge(server, tool!)) {
      const verdict = this.judge.verdict?.(server, tool!)
      if (verdict?.decision !== 'approve') return errorResult(`You may not use the tool ${params.name}.`)
      // Asked of the host's user, who said yes (the gateway's elicitation).
      if (options?.approved) return provider.callTool(user, { ...params, name: tool! }, options)
      const rule = verdict.rule?.id ? `the permission rule ${verdict.rule.id}` : `a permission rule on ${verdict.rule?.server}/${verdict.rule?.tool}`
      return errorResult(`The tool ${params.name} needs a person’s approval before each call (${rule}), and this MCP connection cannot ask for it. Use it from the web chat, where the request is shown to you, or ask an admin about the rule.`)
    }
    return provider.callTool(user, { ...params, name: tool! }, options)
  }

  async listResources(user: ToolUser) {
    const resources = await this.#gather((p) => p.listResources(user).then((r) => r.resources.filter((x) => this.judge(p.name, `resource:${x.uri}`))))
    return { resources }
  }

  async listResourceTemplates(user: ToolUser) {
    const resourceTemplates = await this.#gather((p) =>
      p.listResourceTemplates(user).then((r) => r.resourceTemplates.filter((x) => this.judge(p.name, `resource:${x.uriTemplate}`))),
    )
    return { resourceTemplates }
  }

  /** A resource is read from the first server that lists it and lets the user read it. */
  async readResource(user: ToolUser, params: ReadResourceRequest['params']) {
    for (const provider of this.#byName.values()) {
      if (!this.judge(provider.name, `resource:${params.uri}`)) continue
      const listed = await provider.listResources(user).catch(() => ({ resources: [] }))
      if (listed.resources.some((r) => r.uri === params.uri)) return provider.readResource(user, params)
    }
    throw new McpError(ErrorCode.InvalidParams, `No resource ${params.uri} that you may read; use /mcp/<server> for resources from templates.`)
  }

  async listPrompts(user: ToolUser) {
    const prompts = await this.#gather((p) =>
      p.listPrompts(user).then((r) => r.prompts.filter((x) => this.judge(p.name, `prompt:${x.name}`)).map((x) => ({ ...x, name: p.name + SEPARATOR + x.name }))),
    )
    return { prompts }
  }

  async getPrompt(user: ToolUser, params: GetPromptRequest['params']) {
    const [server, prompt] = split(params.name) ?? []
    const provider = server && this.#byName.get(server)
    if (!provider || !this.judge(server, `prompt:${prompt}`)) throw new McpError(ErrorCode.InvalidParams, `You may not use the prompt ${params.name}.`)
    return provider.getPrompt(user, { ...params, name: prompt! })
  }

  /** Asks every server at once; one that fails leaves only its own part out. */
  async #gather<T>(ask: (provider: Provider) => Promise<T[]>): Promise<T[]> {
    const parts = await Promise.all([...this.#byName.values()].map((p) => ask(p).catch(() => [] as T[])))
    return parts.flat()
  }
}
