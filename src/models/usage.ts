import { z } from '@hono/zod-openapi'
import { defineModel } from './define.ts'
import { companyMember } from './references.ts'

/** The largest count the integer columns hold. */
export const MAX_COUNT = 2_147_483_647
const tokens = z.int().min(0).max(MAX_COUNT).default(0)

/** Written by the platform as calls are made; through the API only a superadmin may correct a row. */
export const UsageRecord = defineModel({
  name: 'UsageRecord',
  table: 'usage_records',
  description:
    'What one model call outside a chat turn (an /rlm-query) cost the company: runner, model, tokens and USD, and who made it. ' +
    'The platform writes these; company admins read their own company’s.',
  tenantColumn: 'company_id',
  fields: {
    user_id: z.uuid().nullable().default(null).openapi({ description: 'Who made the call; null once that user is deleted.' }),
    source: z.string().min(1).max(64).openapi({ description: 'What made the call: the plugin’s name.' }),
    runner: z.string().min(1).max(64),
    model: z.string().min(1).max(200).openapi({ description: 'The runner’s model id.' }),
    input_tokens: tokens,
    output_tokens: tokens,
    cost_usd: z.number().min(0).max(1e9).default(0),
  },
  references: { user_id: companyMember },
  access: { list: 'admin', read: 'admin', create: 'superadmin', update: 'superadmin', delete: 'superadmin' },
  example: { user_id: '01936f3e-6d2a-7c41-9b1e-2f3a4b5c6d7f', source: 'rlm', runner: 'openai', model: 'fast', input_tokens: 1200, output_tokens: 300, cost_usd: 0.0021 },
})
