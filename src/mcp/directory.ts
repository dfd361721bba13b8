import { TtlCache } from '../cache.ts'
import type { Clock } from '../clock.ts'
import { companyScoped } from '../db/scoped.ts'
import type { Db } from '../db/schema.ts'
import type { EventBus } from '../events/bus.ts'
import { flushOn } from '../events/caches.ts'
import { McpPermission, McpServer, offeredTo } from '../models/mcp.ts'
import type { PermissionRule } from './permissions.ts'
import type { ServerDefinition } from './upstreams.ts'

interface Entry {
  servers: Map<string, ServerDefinition>
  rules: PermissionRule[]
}

/** Writes of servers, programs and rules flush the cache in every process at once (event `cache.flush`); the backstop. */
const TTL_MS = 60_000

/**
 * Each company's enabled MCP servers and permission rules, read in one round trip and kept for a few seconds, so
 * a tools/call through the gateway costs no query.
 */
export class McpDirectory {
  readonly #companies: TtlCache<string, Entry>

  constructor(
    private readonly db: Db,
    clock: Clock,
    events: EventBus,
  ) {
    this.#companies = new TtlCache(clock, TTL_MS)
    flushOn(events, 'mcp', () => this.#companies.clear())
  }

  async server(companyId: string, name: string): Promise<ServerDefinition | undefined> {
    return (await this.#entry(companyId)).servers.get(name)
  }

  async servers(companyId: string): Promise<ServerDefinition[]> {
    return [...(await this.#entry(companyId)).servers.values()]
  }

  async rules(companyId: string): Promise<PermissionRule[]> {
    return (await this.#entry(companyId)).rules
  }

  #entry(companyId: string): Promise<Entry> {
    return this.#companies.get(companyId, () => this.#load(companyId))
  }

  async #load(companyId: string): Promise<Entry> {
    const company = companyScoped(this.db, companyId)
    const [servers, programs, rules] = await Promise.all([
      company
        .selectFrom(McpServer)
        .select(['id', 'company_id', 'name', 'transport', 'command_id', 'env', 'url', 'headers', 'vault_secrets', 'oauth', 'version'])
        .where('enabled', '=', true)
        .execute(),
      // A program withdrawn from the company since (offered to another one now) is no program of its servers.
      this.db
        .selectFrom('mcp_commands')
        .select(['id', 'name', 'command', 'args', 'env', 'variables', 'network', 'enabled', 'version'])
        .where((eb) => offeredTo(eb, companyId))
        .execute(),
      company.selectFrom(McpPermission).select(['id', 'user_id', 'server', 'tool', 'effect', 'approvers', 'approval_timeout_seconds']).execute(),
    ])
    const byId = new Map(programs.map(({ id, version, ...program }) => [id, { program, version }]))
    const definitions = servers.map(({ command_id, version, ...server }): ServerDefinition => {
      const offered = command_id === null ? undefined : byId.get(command_id)
      return {
        ...server,
        program: offered?.program ?? null,
        // Grows with an edit of either: naming another program edits the server, which outweighs any program's count.
        version: version * 1_000_000 + (offered?.version ?? 0),
      }
    })
    return { servers: new Map(definitions.map((s) => [s.name, s])), rules }
  }
}
