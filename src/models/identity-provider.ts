import { z } from '@hono/zod-openapi'
import { isAbove, standing } from '../auth/actor.ts'
import { secretName } from '../db/columns.ts'
import { ApiError } from '../errors.ts'
import { defineModel } from './define.ts'

const companyRole = z.enum(['member', 'admin', 'owner'])

export const RoleMapping = z
  .array(
    z.strictObject({
      group: z.string().min(1).max(256).openapi({ description: 'A value of the groups claim, as the provider sends it.' }),
      role: companyRole,
    }),
  )
  .max(100)
  .openapi('IdentityProviderRoleMapping', { description: 'Which group of the provider gives which company role; a person in several gets the highest.' })

/**
 * An OpenID Connect provider a company signs its people in with: "Sign in with …" on the sign-in page, the
 * authorization code flow with PKCE, the ID token verified against the provider's keys. The client secret is a
 * vault name, never the secret.
 */
export const IdentityProvider = defineModel({
  name: 'IdentityProvider',
  table: 'identity_providers',
  description:
    'An OpenID Connect identity provider the company signs its people in with. The first sign-in creates the person in the company (`jit`), ' +
    'or links an existing member with the same verified email (`link_by_email`); the groups claim gives their role as `role_mapping` says.',
  tenantColumn: 'company_id',
  fields: {
    slug: z
      .string()
      .regex(/^[a-z0-9](?:[a-z0-9-]{0,38}[a-z0-9])?$/, 'lower-case letters, digits and dashes, at most 40')
      .openapi({
        description: 'The provider’s public name in the sign-in addresses: /auth/sso/{slug} starts a sign-in, /auth/sso/{slug}/callback is the redirect URI to register with the provider. Unique on the platform.',
        example: 'acme-okta',
      }),
    name: z.string().trim().min(1).max(80).openapi({ description: 'Shown on the sign-in page as “Sign in with {name}”.', example: 'Okta' }),
    issuer: z.url({ protocol: /^https?$/ }).max(2048).openapi({ description: 'The provider’s issuer: its discovery document is {issuer}/.well-known/openid-configuration.', example: 'https://example.okta.com' }),
    client_id: z.string().min(1).max(512),
    client_secret_secret: secretName.nullable().default(null).openapi({ description: 'Vault name of the client secret (the company’s secret of that name); null for a public client.' }),
    scopes: z.string().trim().min(6).max(500).regex(/(^|\s)openid(\s|$)/, 'must include openid').default('openid email profile'),
    enabled: z.boolean().default(true),
    listed: z.boolean().default(false).openapi({
      description:
        'Offered on the platform’s shared sign-in page, to everyone; only a superadmin lists a provider. Otherwise it is offered on the company’s own sign-in page, /login?company={company slug}.',
    }),
    jit: z.boolean().default(true).openapi({ description: 'A first sign-in of someone unknown creates them as a person of the company.' }),
    link_by_email: z.boolean().default(false).openapi({
      description: 'A first sign-in whose verified email is an existing member’s signs in as that member (never a superadmin, a member of another company, or someone above what the provider may grant).',
    }),
    groups_claim: z.string().min(1).max(100).default('groups').openapi({ description: 'The ID token claim that lists the person’s groups.' }),
    role_mapping: RoleMapping.default([]),
    default_role: z.enum(['member', 'admin']).nullable().default('member').openapi({ description: 'The role of someone in none of the mapped groups; null: only people in a mapped group may sign in.' }),
  },
  async guard(_tx, actor, { before, after }) {
    if (!after) return
    // A company's name and button on everyone's sign-in page would let one tenant fish for another's people.
    if (Boolean(after.listed) !== Boolean(before?.listed) && !actor.isSuperadmin) {
      throw new ApiError('forbidden', 'Only a superadmin lists a provider on the shared sign-in page; the company’s own page, /login?company={slug}, offers it without that.')
    }
    // The ladder: a provider grants no role above the role of whoever sets it up.
    const mine = standing(actor)
    const granted = [...((after.role_mapping as Array<{ role: 'member' | 'admin' | 'owner' }>) ?? []).map((m) => m.role), after.default_role as 'member' | 'admin' | null].filter((r) => r !== null)
    const above = granted.find((role) => isAbove(role, mine))
    if (above) throw new ApiError('forbidden', `This provider would grant ${above}, above your own role (${mine ?? 'none'}).`)
  },
  audited: true,
  access: { list: 'admin', read: 'admin', create: 'admin', update: 'admin', delete: 'admin' },
  example: { slug: 'acme-okta', name: 'Okta', issuer: 'https://example.okta.com', client_id: '0oa1b2c3d4', client_secret_secret: 'okta/client-secret', role_mapping: [{ group: 'eng-leads', role: 'admin' }] },
})
