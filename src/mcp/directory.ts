import type { Clock } from '../clock.ts'
import type { Db } from '../db/schema.ts'
import type { PermissionRule } from './permissions.ts'
import type { ServerDefinition } from './upstreams.ts'

interface Entry {
  servers: Map<string, ServerDefinition>
  rules: PermissionRule[]
  loadedAt: number
}

/** How long another process's edits may take to be seen; this process's own writes clear the cache at once. */
const TTL_MS = 5_000

/**
 * Each company's enabled MCP servers and permission rules, read in one round trip and kept for a few seconds, so
 * a tools/call through the gateway costs no query.
 */
export class McpDirectory {
  readonly #companies = new Map<string, Promise<Entry>>()

  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
  ) {}

  async server(companyId: string, name: string): Promise<ServerDefinition | undefined> {
    return (await this.#entry(companyId)).servers.get(name)
  }

  async servers(companyId: string): Promise<ServerDefinition[]> {
    return [...(await this.#entry(companyId)).servers.values()]
  }

  async rules(companyId: string): Promise<PermissionRule[]> {
    return (await this.#entry(companyId)).rules
  }

  /** After a write to McpServer or McpPermission. */
  invalidate(): void {
    this.#companies.clear()
  }

  async #entry(companyId: string): Promise<Entry> {
    const cached = this.#companies.get(companyId)
    if (cached) {
      const entry = await cached
      if (this.clock.now() - entry.loadedAt < TTL_MS) return entry
      if (this.#companies.get(companyId) === cached) this.#companies.delete(companyId)
    }
    let loading = this.#companies.get(companyId)
    if (!loading) {
      loading = this.#load(companyId)
      this.#companies.set(companyId, loading)
      loading.catch(() => this.#companies.delete(companyId))
    }
    return loading
  }

  async #load(companyId: string): Promise<Entry> {
    const loadedAt = this.clock.now()
    const [servers, rules] = await Promise.all([
      this.db
        .selectFrom('mcp_servers as s')
        // A program withdrawn from the company since (offered to another one now) is no program of its servers.
        .leftJoin('mcp_commands as p', (join) =>
          join.onRef('p.id', '=', 's.command_id').on((eb) => eb.or([eb('p.company_id', 'is', null), eb('p.company_id', '=', eb.ref('s.company_id'))])),
        )
        .select(['s.id', 's.company_id', 's.name', 's.transport', 's.env', 's.url', 's.headers', 's.vault_secrets', 's.version'])
        .select(['p.name as program_name', 'p.command', 'p.args', 'p.env as program_env', 'p.variables', 'p.network', 'p.enabled as program_enabled', 'p.version as program_version'])
        .where('s.company_id', '=', companyId)
        .where('s.enabled', '=', true)
        .execute(),
      this.db.selectFrom('mcp_permissions').select(['user_id', 'server', 'tool', 'effect']).where('company_id', '=', companyId).execute(),
    ])
    const definitions = servers.map(({ program_name, command, args, program_env, variables, network, program_enabled, program_version, ...server }): ServerDefinition => ({
      ...(server as Omit<ServerDefinition, 'program'>),
      program:
        program_name === null
          ? null
          : { name: program_name, command: command!, args: args as string[], env: program_env as ServerDefinition['env'], variables: variables as string[], network: network!, enabled: program_enabled! },
      // Grows with an edit of either: naming another program edits the server, which outweighs any program's count.
      version: server.version * 1_000_000 + (program_version ?? 0),
    }))
    return { servers: new Map(definitions.map((s) => [s.name, s])), rules, loadedAt }
  }
}
