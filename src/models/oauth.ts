import { z } from '@hono/zod-openapi'
import { sql } from 'kysely'
import { hasRole } from '../auth/actor.ts'
import { hashSecret, newSecret } from '../auth/secrets.ts'
import { CLIENT_ID_PREFIX, CLIENT_SECRET_PREFIX } from '../oauth/clients.ts'
import { redirectUriProblem } from '../oauth/redirects.ts'
import { defineModel } from './define.ts'

/**
 * The MCP hosts known as OAuth clients. Hosts identified by a metadata document, or registered dynamically, appear
 * here by themselves; a superadmin registers the others (a confidential client gets a secret, shown once).
 */
export const OAuthClient = defineModel({
  name: 'OAuthClient',
  table: 'oauth_clients',
  description:
    'An OAuth client of the platform’s authorization server (an MCP host). `kind` says how it came: metadata_document ' +
    '(client_id is the URL of its metadata, fetched by the platform), dynamic (RFC 7591 registration) or preregistered (made here).',
  fields: {
    client_name: z.string().trim().max(200).default(''),
    client_uri: z.url({ protocol: /^https?$/ }).max(2000).nullable().default(null),
    redirect_uris: z
      .array(z.string().superRefine((uri, ctx) => {
        const problem = redirectUriProblem(uri)
        if (problem) ctx.addIssue({ code: 'custom', message: `the redirect URI ${problem}` })
      }))
      .min(1)
      .max(10),
    token_endpoint_auth_method: z.enum(['none', 'client_secret_post', 'client_secret_basic']).default('client_secret_basic').openapi({
      description: 'none for a public client (a native or browser app); otherwise it authenticates with the secret shown at creation.',
    }),
  },
  readOnly: {
    client_id: z.string(),
    kind: z.enum(['metadata_document', 'dynamic', 'preregistered']),
    fetched_at: z.iso.datetime({ offset: true }).nullable().openapi({ description: 'When the metadata document was last read.' }),
  },
  stamp: () => ({ kind: 'preregistered', fetched_at: null }),
  generated: {
    shape: { client_secret: z.string().openapi({ description: 'Shown only in this response; unused when token_endpoint_auth_method is none.' }) },
    make() {
      const secret = newSecret(CLIENT_SECRET_PREFIX)
      return { columns: { client_id: newSecret(CLIENT_ID_PREFIX).slice(0, CLIENT_ID_PREFIX.length + 22), secret_hash: hashSecret(secret) }, shown: { client_secret: secret } }
    },
  },
  audited: true,
  access: { list: 'superadmin', read: 'superadmin', create: 'superadmin', update: 'superadmin', delete: 'superadmin' },
  affectsAccess: true,
  example: { client_name: 'Build server', redirect_uris: ['https://ci.example.com/oauth/callback'], token_endpoint_auth_method: 'client_secret_basic' },
})

/**
 * What a person approved an MCP host to do as them. Deleting a grant revokes it: every token issued under it stops
 * working at once. People see their own; company admins also see (and revoke) those made in their company.
 */
export const OAuthGrant = defineModel({
  name: 'OAuthGrant',
  table: 'oauth_grants',
  description: 'An MCP host’s access to a resource as a person, approved on the consent page. DELETE revokes it and every token it issued.',
  fields: {},
  readOnly: {
    client_ref: z.uuid().openapi({ description: 'The OAuthClient.' }),
    user_id: z.uuid(),
    company_id: z.uuid().nullable().openapi({ description: 'The company the host acts in.' }),
    resource: z.string().openapi({ description: 'The resource (RFC 8707) tokens are bound to, e.g. https://switchboard.example.com/mcp/github.' }),
    scope: z.string(),
    last_used_at: z.iso.datetime({ offset: true }).nullable(),
  },
  computed: {
    client_name: {
      schema: z.string().openapi({ description: 'As the client calls itself.' }),
      select: () => sql<string>`(select c.client_name from oauth_clients c where c.id = oauth_grants.client_ref)`,
    },
    client_id: {
      schema: z.string(),
      select: () => sql<string>`(select c.client_id from oauth_clients c where c.id = oauth_grants.client_ref)`,
    },
  },
  createdElsewhere: 'Grants are made when a person approves an MCP host on the consent page (/oauth/authorize).',
  recordRule: (eb, actor) =>
    hasRole(actor, 'admin') && actor.companyId !== null
      ? eb.or([eb('oauth_grants.user_id', '=', actor.userId), eb('oauth_grants.company_id', '=', actor.companyId)])
      : eb('oauth_grants.user_id', '=', actor.userId),
  audited: true,
  access: { list: 'member', read: 'member', create: 'superadmin', update: 'superadmin', delete: 'member' },
  affectsAccess: true,
  example: {},
})
