import { z } from '@hono/zod-openapi'
import { standing } from '../auth/actor.ts'
import { hashSecret, newSecret } from '../auth/secrets.ts'
import { defineModel } from './define.ts'

/** What every SCIM token starts with: told apart from personal API tokens at a glance. */
export const SCIM_TOKEN_PREFIX = 'scim_'

/** A company's bearer token for SCIM provisioning at /scim/v2 (its identity system creates and deactivates people). */
export const ScimToken = defineModel({
  name: 'ScimToken',
  table: 'scim_tokens',
  description:
    'A bearer token the company’s identity system (Okta, Entra ID…) provisions people and groups with, at /scim/v2/Users and /scim/v2/Groups. Deleting it revokes it.',
  tenantColumn: 'company_id',
  fields: {
    name: z.string().trim().min(1).max(200).openapi({ example: 'Okta provisioning' }),
  },
  readOnly: {
    prefix: z.string().openapi({ description: 'The token’s first characters, to tell tokens apart.' }),
    made_by_role: z.enum(['admin', 'owner', 'superadmin']).openapi({ description: 'The role of whoever made it: its provisioning changes and grants nobody above it.' }),
    last_used_at: z.iso.datetime({ offset: true }).nullable(),
  },
  // The ladder: a token acts with its maker's role, checked at each change it makes.
  stamp: (actor) => ({ made_by_role: standing(actor) === 'superadmin' ? 'superadmin' : actor.role === 'owner' ? 'owner' : 'admin' }),
  generated: {
    shape: { token: z.string().openapi({ description: 'The token itself. Shown only in this response: store it now.' }) },
    make() {
      const token = newSecret(SCIM_TOKEN_PREFIX)
      return { columns: { token_hash: hashSecret(token), prefix: token.slice(0, 12) }, shown: { token } }
    },
  },
  audited: true,
  access: { list: 'admin', read: 'admin', create: 'admin', update: 'admin', delete: 'admin' },
  example: { name: 'Okta provisioning' },
})
