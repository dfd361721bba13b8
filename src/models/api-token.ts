import { z } from '@hono/zod-openapi'
import { TOKEN_PREFIX } from '../auth/authenticator.ts'
import { hashSecret, newSecret } from '../auth/secrets.ts'
import { defineModel } from './define.ts'

export const ApiToken = defineModel({
  name: 'ApiToken',
  table: 'api_tokens',
  description: 'A personal API token for scripts (Authorization: Bearer sb_…). Deleting it revokes it.',
  fields: {
    name: z.string().trim().min(1).max(200),
    expires_at: z.iso.datetime({ offset: true }).nullable().default(null).openapi({ description: 'Never expires when null.' }),
  },
  readOnly: {
    user_id: z.uuid(),
    prefix: z.string().openapi({ description: 'The token’s first characters, to tell tokens apart.' }),
    last_used_at: z.iso.datetime({ offset: true }).nullable(),
  },
  stamp: (actor) => ({ user_id: actor.userId }),
  generated: {
    shape: { token: z.string().openapi({ description: 'The token itself. Shown only in this response: store it now.' }) },
    make() {
      const token = newSecret(TOKEN_PREFIX)
      return { columns: { token_hash: hashSecret(token), prefix: token.slice(0, 10) }, shown: { token } }
    },
  },
  // Tokens are personal: nobody, not even a superadmin, sees or revokes another user's tokens here.
  recordRule: (eb, actor) => eb('api_tokens.user_id', '=', actor.userId),
  audited: true,
  access: { list: 'member', read: 'member', create: 'member', update: 'member', delete: 'member' },
  affectsAccess: true,
  example: { name: 'nightly export' },
})
