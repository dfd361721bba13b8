import type { Hono } from 'hono'
import type { ApiClient } from '../api-client.ts'
import type { AdminEnv } from '../context.ts'
import { mountApprovals } from './pages/approvals.tsx'
import { mountAudit } from './pages/audit.tsx'
import { mountUsage } from './pages/usage.tsx'
import { mountPermissions } from './pages/permissions.tsx'
import { mountPlugins } from './pages/plugins.tsx'
import { mountRunners } from './pages/runners.tsx'
import { mountVault } from './pages/vault.tsx'
import { agents } from './resources/agents.tsx'
import { budgets } from './resources/budgets.ts'
import { identityProviders } from './resources/sign-in.ts'
import { mcpCommands, mcpServers } from './resources/mcp.tsx'
import { companies, users } from './resources/people.tsx'
import { modelAcls, systemConfig } from './resources/platform.ts'
import { mountConsoleResource } from './routes.tsx'

export const RESOURCES = [agents, mcpServers, users, companies, identityProviders, budgets, mcpCommands, modelAcls, systemConfig]

/** Each model's console page, by model name: the overview links them. */
export const CONSOLE_PAGES: ReadonlyMap<string, { path: string; title: string }> = new Map([
  ...RESOURCES.map((r) => [r.model, { path: r.path, title: r.title }] as const),
  ['McpPermission', { path: '/permissions', title: 'Permissions' }],
  ['ApiToken', { path: '/me', title: 'Your API tokens' }],
  ['AuditEvent', { path: '/audit', title: 'Audit trail' }],
  ['ToolApproval', { path: '/approvals', title: 'Tool approvals' }],
  ['UsageRecord', { path: '/usage', title: 'Usage' }],
])

/** Every console page: the model pages, and those over the other APIs (runners, plugins, permissions, vault). */
export function mountConsole(app: Hono<AdminEnv>, api: ApiClient): void {
  for (const resource of RESOURCES) mountConsoleResource(app, api, resource)
  mountPermissions(app, api)
  mountRunners(app, api)
  mountPlugins(app, api)
  mountVault(app, api)
  mountAudit(app, api)
  mountApprovals(app, api)
  mountUsage(app, api)
}
