import { z } from '@hono/zod-openapi'
import type { Expression, ExpressionBuilder, SqlBool } from 'kysely'
import type { Database } from '../db/schema.ts'
import { defineModel } from './define.ts'
import { secretName, type Values } from '../db/columns.ts'
import { ApiError } from '../errors.ts'
import { companyMember, visible } from './references.ts'

// No `__` and no trailing `_`: agents and the aggregate /mcp name tools `<server>__<tool>`.
const serverName = z.string().regex(/^[a-z0-9](?:[a-z0-9-]|_(?=[a-z0-9-])){0,63}$/, 'lowercase letters, digits, - and single _ inside, at most 64')

/** A value given as is, or taken from the vault at start (so the secret itself is never stored here). */
const ValueOrSecret = z.union([z.strictObject({ value: z.string().max(4096) }), z.strictObject({ secret: secretName })]).openapi('ValueOrSecret')
/** How a value reads back: a vault name as it is; a value given inline only as set, since it is write-only. */
const ValueOrSecretShown = z
  .union([z.object({ set: z.literal(true) }), z.object({ secret: secretName })])
  .openapi('ValueOrSecretShown', { description: 'A value given inline reads back as {"set": true}: it is never shown again.' })

const variableName = z.string().regex(/^[A-Za-z_][A-Za-z0-9_]{0,127}$/, 'an environment variable name')
const values = (description: string) => z.record(variableName, ValueOrSecret).default({}).openapi({ description })
const shownValues = z.record(z.string(), ValueOrSecretShown)

/** Inline values are write-only: responses say that one is set, never what it is. */
function hideValues(map: unknown): unknown {
  if (typeof map !== 'object' || map === null) return map
  return Object.fromEntries(Object.entries(map as Values).map(([key, source]) => [key, 'secret' in source ? { secret: source.secret } : { set: true }]))
}

/** The catalogue's programs a company may run: those offered to every company, and those offered to it alone. */
export function offeredTo(eb: ExpressionBuilder<Database, 'mcp_commands'>, companyId: string | null): Expression<SqlBool> {
  return eb.or([eb('mcp_commands.company_id', 'is', null), eb('mcp_commands.company_id', '=', companyId)])
}

export const McpCommand = defineModel({
  name: 'McpCommand',
  table: 'mcp_commands',
  description:
    'The platform’s catalogue of programs that may run as stdio MCP servers, kept by superadmins. A company’s stdio ' +
    'McpServer names an entry and may set only the variables it declares. Each runs sandboxed (bubblewrap).',
  fields: {
    company_id: z.uuid().nullable().default(null).openapi({ description: 'Null: offered to every company; else to that company alone.' }),
    name: serverName,
    description: z.string().max(2000).default(''),
    command: z.string().min(1).max(1000).openapi({
      description: 'The program: a path, or a name found on the platform’s PATH. Command and args are shown to the admins it is offered to: keep secrets in env.',
    }),
    args: z.array(z.string().max(4096)).max(100).default([]),
    env: values('Fixed environment values, each given (write-only) or taken from the global vault.'),
    variables: z.array(variableName).max(100).default([]).openapi({
      description: 'Environment variables a company’s server may set for this program (from its vault or given); no others reach it.',
    }),
    network: z.boolean().default(false).openapi({
      description: 'true: the process reaches what the platform’s host reaches (needed for remote APIs and the vault API); false: no network at all.',
    }),
    enabled: z.boolean().default(true),
  },
  readAs: { env: shownValues },
  redact: (record) => ('env' in record ? { ...record, env: hideValues(record.env) } : record),
  // Admins see (and may offer) the programs offered to every company and those offered to theirs.
  recordRule: (eb, actor) => (actor.isSuperadmin ? undefined : offeredTo(eb, actor.companyId)),
  affectsAccess: true,
  audited: true,
  access: { list: 'admin', read: 'admin', create: 'superadmin', update: 'superadmin', delete: 'superadmin' },
  example: { name: 'everything', command: 'npx', args: ['-y', '@modelcontextprotocol/server-everything'], variables: ['API_TOKEN'], network: true },
})

export const McpServer = defineModel({
  name: 'McpServer',
  table: 'mcp_servers',
  description:
    'An MCP server the company offers through the gateway at /mcp/{name}: a program of the platform’s catalogue run ' +
    'per user in a sandbox (stdio), or a remote URL.',
  tenantColumn: 'company_id',
  fields: {
    name: serverName,
    description: z.string().max(2000).default(''),
    transport: z.enum(['stdio', 'streamable-http']),
    command_id: z.uuid().nullable().default(null).openapi({ description: 'stdio: the McpCommand (platform catalogue entry) to run.' }),
    env: values('stdio: values for the variables the McpCommand declares, each given (write-only) or taken from the vault.'),
    url: z.url({ protocol: /^https?$/ }).nullable().default(null).openapi({
      description: 'streamable-http: the server’s endpoint; loopback, private and link-local addresses are refused unless the operator allows them.',
    }),
    headers: z
      .record(z.string().regex(/^[A-Za-z0-9-]{1,128}$/, 'a header name'), ValueOrSecret)
      .default({})
      .openapi({ description: 'streamable-http: headers sent upstream, each value given (write-only) or taken from the vault.' }),
    vault_secrets: z.array(secretName).max(100).default([]).openapi({
      description:
        'stdio: secrets the subprocess may read while it runs, with the token it is given in SWITCHBOARD_VAULT_TOKEN ' +
        '(POST /api/vault/get over the unix socket SWITCHBOARD_VAULT_SOCKET): the user’s own secret of that name if they have one, else the company’s.',
    }),
    enabled: z.boolean().default(true),
    oauth: z.boolean().default(false).openapi({
      description:
        'streamable-http: each person signs in to the server with their own account (OAuth), from My connections; their tokens ' +
        'are kept in the vault under them. Until they connect, the server’s tools are not in their catalogue.',
    }),
  },
  readAs: { env: shownValues, headers: shownValues },
  redact: (record) => ({
    ...record,
    ...('env' in record ? { env: hideValues(record.env) } : {}),
    ...('headers' in record ? { headers: hideValues(record.headers) } : {}),
  }),
  references: { command_id: visible(() => McpCommand) },
  affectsAccess: true,
  refine: (server) =>
    server.transport === 'stdio'
      ? [
          ...(server.command_id ? [] : [{ path: 'command_id', message: 'a stdio server runs a program of the catalogue (McpCommand)' }]),
          ...(server.url ? [{ path: 'url', message: 'a stdio server has no url' }] : []),
          ...(server.oauth ? [{ path: 'oauth', message: 'only a streamable-http server signs people in with OAuth' }] : []),
        ]
      : [
          ...(server.url ? [] : [{ path: 'url', message: 'a streamable-http server needs a url' }]),
          ...(server.command_id ? [{ path: 'command_id', message: 'a streamable-http server runs no program' }] : []),
        ],
  // The program's declared variables bound what a company may put into its environment; the URL must not reach
  // inside the platform's network.
  async guard(tx, _actor, { after }, context) {
    if (!after) return
    if (after.transport === 'stdio' && after.command_id) {
      const program = await tx.selectFrom('mcp_commands').select(['name', 'variables']).where('id', '=', after.command_id).executeTakeFirst()
      const declared = new Set(program?.variables ?? [])
      const undeclared = Object.keys(after.env ?? {}).filter((name) => !declared.has(name))
      if (program && undeclared.length > 0) {
        throw new ApiError('validation_error', `The program ${program.name} does not take these variables.`, {
          errors: undeclared.map((name) => ({ path: `env.${name}`, message: `not a variable ${program.name} declares (${[...declared].join(', ') || 'it declares none'})` })),
        })
      }
    }
    if (after.transport === 'streamable-http' && typeof after.url === 'string') await context.checkOutbound('url', after.url)
  },
  audited: true,
  access: { list: 'member', read: 'member', create: 'admin', update: 'admin', delete: 'admin' },
  example: { name: 'everything', transport: 'stdio', command_id: '01936f3e-6d2a-7c41-9b1e-2f3a4b5c6d7e', env: { API_TOKEN: { secret: 'everything/token' } } },
})

export const McpPermission = defineModel({
  name: 'McpPermission',
  table: 'mcp_permissions',
  description:
    'Allows or denies a user (or, without a user, everyone in the company by default) a server or one of its tools. ' +
    'A user with rules of their own for a server is judged by those; otherwise the defaults apply. The most specific rule wins; deny wins a tie, then approve; no rule is a deny. ' +
    'An `approve` rule offers the tool and makes each call wait for a person’s yes.',
  tenantColumn: 'company_id',
  fields: {
    user_id: z.uuid().nullable().default(null).openapi({ description: 'Null: the company’s default.' }),
    server: z.string().regex(/^(?:\*|[a-z0-9][a-z0-9_-]{0,63})$/, 'a server name, or * for every server'),
    tool: z.string().min(1).max(128).default('*').openapi({
      description:
        'What of the server: a tool name, `prompt:<name>`, `resource:<uri>`, a prefix ending in * (`get-*`, `resource:docs://private/*`), or * for all of it.',
    }),
    effect: z.enum(['allow', 'deny', 'approve']).openapi({
      description: '`approve`: the tool is offered, and each call waits for a person’s yes (in the web chat, on Slack or Telegram) before it runs.',
    }),
    approvers: z
      .enum(['self', 'admins'])
      .default('self')
      .openapi({ description: 'With `approve`: who may say yes or no: the person whose turn it is (`self`), or also the company’s admins (`admins`).' }),
    approval_timeout_seconds: z
      .int()
      .min(10)
      .max(86_400)
      .default(300)
      .openapi({ description: 'With `approve`: how long the call waits for an answer; none in time is a no, and the agent is told so.' }),
  },
  references: { user_id: companyMember },
  affectsAccess: true,
  audited: true,
  access: { list: 'admin', read: 'admin', create: 'admin', update: 'admin', delete: 'admin' },
  example: { server: 'everything', tool: 'echo', effect: 'allow' },
})
