import { createRoute, z } from '@hono/zod-openapi'
import { commonErrors, signedIn } from '../responses.ts'

/** A day of the calendar as YYYY-MM-DD: 2026-02-30 is refused, not rolled over into March. */
const day = z
  .string()
  .regex(/^\d{4}-\d\d-\d\d$/, 'a day as YYYY-MM-DD')
  .refine((v) => {
    const time = Date.parse(`${v}T00:00:00Z`)
    return !Number.isNaN(time) && new Date(time).toISOString().slice(0, 10) === v
  }, 'not a day of the calendar')

const Figures = {
  turns: z.int().openapi({ description: 'Chat turns.' }),
  input_tokens: z.number(),
  output_tokens: z.number(),
  cost_usd: z.number().openapi({ description: 'USD, as each model’s api_id is priced.' }),
  tool_calls: z.number().openapi({ description: 'Tools the agents called in those turns.' }),
}

const UsageSummary = z
  .object({
    scope: z.enum(['company', 'mine']),
    by: z.enum(['day', 'agent', 'user', 'model']),
    from: z.string().openapi({ description: 'The first day counted (UTC).' }),
    to: z.string().openapi({ description: 'The last day counted (UTC).' }),
    data: z.array(
      z.object({
        key: z.string().nullable().openapi({ description: 'The day, the agent’s or person’s id (null for calls of no agent, or people since deleted), or runner/model.' }),
        label: z.string(),
        ...Figures,
      }),
    ),
    totals: z.object({ ...Figures, background_tasks: z.int().openapi({ description: 'Background tasks started in the period.' }) }),
  })
  .openapi('UsageSummary')

export const BudgetStateSchema = z
  .object({
    id: z.uuid().openapi({ description: 'The Budget record.' }),
    scope: z.enum(['company', 'person']),
    metric: z.enum(['cost_usd', 'tokens']),
    limit: z.number(),
    used: z.number().openapi({ description: 'Used this calendar month (UTC).' }),
    lifted_until: z.string().nullable().openapi({ description: 'While lifted, a spent budget refuses nothing.' }),
    refusing: z.boolean().openapi({ description: 'Turns and tool calls are refused now.' }),
  })
  .openapi('BudgetState')

export const usageRoute = createRoute({
  method: 'get',
  path: '/api/usage',
  operationId: 'getUsage',
  summary: 'What turns cost, over time, by agent, by person or by model',
  description:
    'Tokens, cost, turns and tool calls from the usage records. `scope=mine` (the default) is the caller’s own; `scope=company` is the whole company’s and needs an admin. ' +
    'The period is whole UTC days, `from` to `to`, at most 366 days; by default the current month.',
  tags: ['Usage'],
  security: signedIn,
  request: {
    query: z.object({
      scope: z.enum(['company', 'mine']).default('mine'),
      by: z.enum(['day', 'agent', 'user', 'model']).default('day'),
      from: day.optional(),
      to: day.optional(),
    }),
  },
  responses: { 200: { description: 'The usage.', content: { 'application/json': { schema: UsageSummary } } }, ...commonErrors },
})

export const budgetsRoute = createRoute({
  method: 'get',
  path: '/api/usage/budgets',
  operationId: 'getBudgetStates',
  summary: 'The budgets that apply to the caller, as they stand this month',
  description: 'The company’s budgets and the caller’s own, with what was used this calendar month (UTC) and whether work is refused now. Budgets are set as Budget records.',
  tags: ['Usage'],
  security: signedIn,
  responses: {
    200: { description: 'The budgets.', content: { 'application/json': { schema: z.object({ data: z.array(BudgetStateSchema) }).openapi('BudgetStates') } } },
    ...commonErrors,
  },
})
