import { z } from '@hono/zod-openapi'
import { sql } from 'kysely'
import { hasRole } from '../auth/actor.ts'
import { ApiError } from '../errors.ts'
import { defineModel } from './define.ts'
import { companyMember } from './references.ts'

const NIL = '00000000-0000-0000-0000-000000000000'

/** A company's or one person's monthly spending limit; its state (used, refused or not) is GET /api/usage/budgets. */
export const Budget = defineModel({
  name: 'Budget',
  table: 'budgets',
  description:
    'What a company (user_id null) or one person in it may spend in a calendar month (UTC), in USD (`cost_usd`) or in tokens. ' +
    'Past 80 % people are told; at 100 % their turns and tool calls are refused until the month ends, the limit is raised, or an admin lifts it (`lifted_until`).',
  tenantColumn: 'company_id',
  fields: {
    user_id: z.uuid().nullable().default(null).openapi({ description: 'The person it limits; null for the whole company.' }),
    metric: z.enum(['cost_usd', 'tokens']).default('cost_usd').openapi({ description: 'What is counted: USD as priced by each model’s api_id, or input plus output tokens.' }),
    monthly_limit: z.number().positive().max(1e12).openapi({ description: 'The most one calendar month may use.', example: 50 }),
    lifted_until: z.iso.datetime({ offset: true }).nullable().default(null).openapi({
      description: 'Until then, a spent budget refuses nothing (people are still told). How an admin lets work go on without raising the limit.',
    }),
  },
  references: { user_id: companyMember },
  // Members see the limits that apply to them: the company's and their own.
  recordRule: (eb, actor, access) =>
    access === 'write' || hasRole(actor, 'admin') ? undefined : eb.or([eb('budgets.user_id', 'is', null), eb('budgets.user_id', '=', actor.userId)]),
  async guard(tx, actor, { before, after }) {
    if (!after) return
    const userId = (after.user_id as string | null) ?? null
    const same = await tx
      .selectFrom('budgets')
      .select('id')
      .where('company_id', '=', actor.companyId)
      .where(sql<boolean>`coalesce(user_id, ${NIL}::uuid) = ${userId ?? NIL}::uuid`)
      .where('metric', '=', after.metric as 'cost_usd' | 'tokens')
      .$if(before !== undefined, (q) => q.where('id', '<>', before!.id))
      .executeTakeFirst()
    if (same) {
      const whose = userId ? 'This person' : 'The company'
      throw new ApiError('conflict', `${whose} already has a monthly budget in ${after.metric === 'tokens' ? 'tokens' : 'USD'}: change that one.`)
    }
  },
  audited: true,
  access: { list: 'member', read: 'member', create: 'admin', update: 'admin', delete: 'admin' },
  example: { user_id: null, metric: 'cost_usd', monthly_limit: 50 },
})
