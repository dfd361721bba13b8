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
        .selectFrom('mcp_servers')
        .select(['id', 'company_id', 'name', 'transport', 'command', 'args', 'env', 'url', 'headers', 'vault_secrets', 'version'])
        .where('company_id', '=', companyId)
        .where('enabled', '=', true)
        .execute(),
      this.db.selectFrom('mcp_permissions').select(['user_id', 'server', 'tool', 'effect']).where('company_id', '=', companyId).execute(),
    ])
    return { servers: new Map(servers.map((s) => [s.name, s as ServerDefinition])), rules, loadedAt }
  }
}
