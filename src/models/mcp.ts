import { z } from '@hono/zod-openapi'
import { defineModel } from './define.ts'
import { secretName } from './fields.ts'
import { companyMember } from './references.ts'

// No `__` and no trailing `_`: agents and the aggregate /mcp name tools `<server>__<tool>`.
const serverName = z.string().regex(/^[a-z0-9](?:[a-z0-9-]|_(?=[a-z0-9-])){0,63}$/, 'lowercase letters, digits, - and single _ inside, at most 64')

/** A value given as is, or taken from the vault at start (so the secret itself is never stored here). */
const ValueOrSecret = z.union([z.strictObject({ value: z.string().max(4096) }), z.strictObject({ secret: secretName })]).openapi('ValueOrSecret')

export const McpServer = defineModel({
  name: 'McpServer',
  table: 'mcp_servers',
  description: 'An MCP server the company offers through the gateway at /mcp/{name}: a command run per user (stdio), or a remote URL.',
  tenantColumn: 'company_id',
  fields: {
    name: serverName,
    description: z.string().max(2000).default(''),
    transport: z.enum(['stdio', 'streamable-http']),
    command: z.string().min(1).max(1000).nullable().default(null).openapi({ description: 'stdio: the program to run.' }),
    args: z.array(z.string().max(4096)).max(100).default([]),
    env: z
      .record(z.string().regex(/^[A-Za-z_][A-Za-z0-9_]{0,127}$/, 'an environment variable name'), ValueOrSecret)
      .default({})
      .openapi({ description: 'stdio: the environment, each value given or taken from the vault.' }),
    url: z.url({ protocol: /^https?$/ }).nullable().default(null).openapi({ description: 'streamable-http: the server’s endpoint.' }),
    headers: z
      .record(z.string().regex(/^[A-Za-z0-9-]{1,128}$/, 'a header name'), ValueOrSecret)
      .default({})
      .openapi({ description: 'streamable-http: headers sent upstream, each value given or taken from the vault.' }),
    vault_secrets: z.array(secretName).max(100).default([]).openapi({
      description:
        'stdio: secrets the subprocess may read while it runs, with the token it is given in SWITCHBOARD_VAULT_TOKEN ' +
        '(POST SWITCHBOARD_VAULT_URL/get): the user’s own secret of that name if they have one, else the company’s.',
    }),
    enabled: z.boolean().default(true),
  },
  affectsAccess: true,
  refine: (server) =>
    server.transport === 'stdio'
      ? [...(server.command ? [] : [{ path: 'command', message: 'a stdio server needs a command' }]), ...(server.url ? [{ path: 'url', message: 'a stdio server has no url' }] : [])]
      : [...(server.url ? [] : [{ path: 'url', message: 'a streamable-http server needs a url' }]), ...(server.command ? [{ path: 'command', message: 'a streamable-http server has no command' }] : [])],
  access: { list: 'member', read: 'member', create: 'admin', update: 'admin', delete: 'admin' },
  example: { name: 'everything', transport: 'stdio', command: 'npx', args: ['@modelcontextprotocol/server-everything'], env: { API_TOKEN: { secret: 'everything/token' } } },
})

export const McpPermission = defineModel({
  name: 'McpPermission',
  table: 'mcp_permissions',
  description:
    'Allows or denies a user (or, without a user, everyone in the company by default) a server or one of its tools. ' +
    'A user with rules of their own for a server is judged by those; otherwise the defaults apply. The most specific rule wins; deny wins a tie; no rule is a deny.',
  tenantColumn: 'company_id',
  fields: {
    user_id: z.uuid().nullable().default(null).openapi({ description: 'Null: the company’s default.' }),
    server: z.string().regex(/^(?:\*|[a-z0-9][a-z0-9_-]{0,63})$/, 'a server name, or * for every server'),
    tool: z.string().min(1).max(128).default('*').openapi({
      description:
        'What of the server: a tool name, `prompt:<name>`, `resource:<uri>`, a prefix ending in * (`get-*`, `resource:docs://private/*`), or * for all of it.',
    }),
    effect: z.enum(['allow', 'deny']),
  },
  references: { user_id: companyMember },
  affectsAccess: true,
  access: { list: 'admin', read: 'admin', create: 'admin', update: 'admin', delete: 'admin' },
  example: { server: 'everything', tool: 'echo', effect: 'allow' },
})
