import type { OpenAPIHono } from '@hono/zod-openapi'
import type { Tool } from '@modelcontextprotocol/sdk/types.js'
import { hasRole, type Actor } from '../../auth/actor.ts'
import { companyScoped, scoped } from '../../db/scoped.ts'
import { ApiError, zodErrors } from '../../errors.ts'
import type { ApiEnv } from '../../http/env.ts'
import { breakerState, listTools, type ToolListing } from '../../mcp/listing.ts'
import { UpstreamProvider, type Provider } from '../../mcp/providers.ts'
import { CompanyUser } from '../../models/company.ts'
import { McpServer } from '../../models/mcp.ts'
import { getRecord } from '../../models/records.ts'
import type { Services } from '../../services.ts'
import { apiDefaultHook, malformedIdIsNotFound } from '../hooks.ts'
import { catalogueRoute, testServerRoute } from './routes.ts'

/** One entry of the catalogue before its tools are listed: what to list, or why nothing is. */
interface Entry {
  name: string
  kind: 'server' | 'plugin'
  id: string | null
  description: string
  enabled: boolean
  provider?: Provider
  /** Why the entry has no provider to list. */
  unlisted?: string
}

/** `user_id` names a person, so a malformed one is content the caller got wrong (422), as the console shows it. */
function malformedQueryIsInvalid(result: { success: boolean; target: string; error?: unknown }): undefined {
  if (!result.success && result.target === 'query') {
    throw new ApiError('validation_error', 'The query is not valid.', { errors: zodErrors(result.error as Parameters<typeof zodErrors>[0], 'query') })
  }
  apiDefaultHook(result)
  return undefined
}

/**
 * GET /api/mcp/tools and POST /api/mcp/servers/{id}/test: what the console needs to pick an agent's tools, check a
 * server and preview someone's permissions. Both list through the same upstream path as the gateway.
 */
export function mountMcpCatalogue(app: OpenAPIHono<ApiEnv>): void {
  app.openapi(
    catalogueRoute,
    async (c) => {
      const { services } = c.var
      const actor = await services.access.authorize(c.var.actor, McpServer, 'list')
      const previewed = await previewedUser(services, actor, c.req.valid('query').user_id)
      const companyId = actor.companyId!
      const admin = hasRole(actor, 'admin')
      const [entries, mine, theirs] = await Promise.all([
        catalogueEntries(services, actor),
        services.catalog.judge(actor),
        previewed ? services.catalog.judge({ userId: previewed, companyId }) : undefined,
      ])
      // A member is shown (and connects to) only what the gateway would serve them: listing a server they may not
      // use would start its program with their secrets for nothing.
      const shown = admin ? entries : entries.filter((e) => e.enabled && e.provider && mine.server(e.name))
      const listings = await Promise.all(shown.map((e): Promise<ToolListing | undefined> => (e.provider ? listTools(e.provider, actor) : Promise.resolve(undefined))))
      const data = shown.map((entry, i) => {
        const listing = listings[i]
        const tools = listing?.ok ? listing.tools.map((tool) => ({ ...describeTool(tool), ...(theirs ? { allowed: theirs(entry.name, tool.name) } : {}) })) : []
        const error = listing ? (listing.ok ? undefined : listing.error) : entry.unlisted
        return {
          name: entry.name,
          kind: entry.kind,
          id: entry.id,
          description: entry.description,
          enabled: entry.enabled,
          ...(theirs ? { allowed: entry.enabled && theirs.server(entry.name) } : {}),
          tools,
          ...(error === undefined ? {} : { error }),
          breaker: entry.kind === 'plugin' ? null : breakerState(services.upstreams, actor, entry.name),
        }
      })
      return c.json({ user_id: previewed ?? null, data }, 200)
    },
    malformedQueryIsInvalid,
  )

  app.openapi(
    testServerRoute,
    async (c) => {
      const { services } = c.var
      // Testing starts the server's program or reaches its URL: the business of whoever may configure it.
      const actor = await services.access.authorize(c.var.actor, McpServer, 'update')
      // Through the scoped builder: another company's server is a 404 like any record.
      const { record } = await getRecord(services.db, actor, McpServer, c.req.valid('param').id.toLowerCase())
      const name = String(record.name)
      const breaker = () => breakerState(services.upstreams, actor, name)
      if (record.enabled !== true) return c.json({ ok: false as const, error: 'The server is disabled; enable it to test it.', breaker: breaker() }, 200)
      const definition = (await services.mcpDirectory.servers(actor.companyId!)).find((s) => s.id === record.id)
      if (!definition) return c.json({ ok: false as const, error: RELOADING, breaker: breaker() }, 200)
      const listing = await listTools(new UpstreamProvider(definition, services.upstreams), actor)
      return listing.ok
        ? c.json({ ok: true as const, tools: listing.tools.map(describeTool), breaker: breaker() }, 200)
        : c.json({ ok: false as const, error: listing.error, breaker: breaker() }, 200)
    },
    malformedIdIsNotFound(McpServer.name),
  )
}

const RELOADING = 'The server’s definition is being reloaded; try again in a moment.'

function describeTool(tool: Tool): { name: string; description: string } {
  return { name: tool.name, description: tool.description ?? '' }
}

/**
 * Whose permissions to judge by, if anyone's: someone of the caller's company (else 404, like any record of another
 * tenant); only admins may preview someone other than themselves (else 403).
 */
async function previewedUser(services: Services, actor: Actor, userId: string | undefined): Promise<string | undefined> {
  if (userId === undefined) return undefined
  const id = userId.toLowerCase()
  // Oneself always: a superadmin working in a company need not be its member.
  if (id === actor.userId) return id
  const member = await companyScoped(services.db, actor.companyId!).selectFrom(CompanyUser).select('user_id').where('user_id', '=', id).executeTakeFirst()
  if (!member) throw new ApiError('not_found', `No user with id ${id} in your company.`)
  if (id !== actor.userId && !hasRole(actor, 'admin')) throw new ApiError('forbidden', 'Only company admins may preview the tools of someone else; you may preview your own.')
  return id
}

/**
 * The company's McpServer records (disabled ones too, so the console can show them) and every plugin's built-in
 * tool provider, with the provider to list each through. Plugin providers come from the catalogue, as for the
 * gateway, so what it withholds is withheld here too.
 */
async function catalogueEntries(services: Services, actor: Actor): Promise<Entry[]> {
  const { catalog, db, mcpDirectory, plugins, upstreams } = services
  const [rows, definitions] = await Promise.all([
    scoped(db, actor).selectFrom(McpServer).select(['id', 'name', 'description', 'enabled']).orderBy('name').execute(),
    mcpDirectory.servers(actor.companyId!),
  ])
  const byId = new Map(definitions.map((d) => [d.id, d]))
  const servers = rows.map((row): Entry => {
    const entry = { name: row.name, kind: 'server' as const, id: row.id, description: row.description, enabled: row.enabled }
    if (!row.enabled) return { ...entry, unlisted: 'The server is disabled: it is not served, and its tools are not listed.' }
    // The gateway gives a plugin's built-in tools the name first (McpCatalog.provider).
    if (catalog.isVirtual(row.name)) return { ...entry, unlisted: `A plugin’s built-in tools take the name ${row.name}: /mcp/${row.name} serves the plugin, not this server.` }
    const definition = byId.get(row.id)
    return definition ? { ...entry, provider: new UpstreamProvider(definition, upstreams) } : { ...entry, unlisted: RELOADING }
  })
  const names = [...plugins.toolProviders.keys()].sort()
  const described = new Map(plugins.describe().map((m) => [m.name, m.description]))
  const providers = await Promise.all(names.map((name) => catalog.provider(actor, name)))
  const builtIn = providers
    .filter((p): p is Provider => p?.kind === 'virtual')
    .map((provider): Entry => ({ name: provider.name, kind: 'plugin', id: null, description: described.get(provider.name) ?? '', enabled: true, provider }))
  return [...servers, ...builtIn]
}
