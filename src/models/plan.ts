import { z } from '@hono/zod-openapi'
import { sql } from 'kysely'
import { ApiError } from '../errors.ts'
import { isFinal, refuseWordsOfOthers } from '../plans/states.ts'
import { defineModel } from './define.ts'
import { takesPart } from './webchat.ts'

export const PLANS_ARE_MADE =
  'Plans are made with POST /api/plans (with their tasks) or by an agent’s plan_create tool, and change through ' +
  'POST /api/plans/{id}/update and /api/plans/{id}/tasks/status, which keep their rules.'

const PLAN_STATUS = z.enum(['draft', 'active', 'paused', 'completed', 'cancelled'])
const TASK_STATUS = z.enum(['pending', 'in_progress', 'completed', 'failed', 'skipped'])

/** A finished plan is a record of what was done: its words stay as they were. */
function refuseFinal(status: string | undefined, what: string): void {
  if (status && isFinal(status as never)) throw new ApiError('conflict', `The plan is ${status}, which is final: its ${what} can no longer change.`)
}

export const Plan = defineModel({
  name: 'Plan',
  table: 'plans',
  description:
    'A plan the agent follows in a conversation: tasks done in order, one live plan (draft, active or paused) per ' +
    'conversation. Participants read it; its title and description may be edited here, its status only through ' +
    'the plan actions (execute, pause, resume, cancel).',
  tenantColumn: 'company_id',
  fields: {
    title: z.string().trim().min(1).max(300),
    description: z.string().max(10_000).default(''),
  },
  readOnly: {
    conversation_id: z.uuid(),
    status: PLAN_STATUS,
    created_by: z.uuid().nullable(),
    driven_by: z.uuid().nullable().openapi({ description: 'Who executed or last resumed it: continuation turns run as them.' }),
    continuations: z.int().openapi({ description: 'Continuation messages sent since it was last executed or resumed (at most 20).' }),
    awaiting_approval_id: z.uuid().nullable().openapi({ description: 'The tool approval its work waits on: the plan is paused until it is answered, then goes on.' }),
  },
  recordRule: (eb, actor) => takesPart(eb, actor, 'plans.conversation_id'),
  createdElsewhere: PLANS_ARE_MADE,
  async guard(_tx, actor, { before, after }) {
    if (!before) throw new ApiError('method_not_allowed', PLANS_ARE_MADE)
    if (after) {
      refuseFinal(before.status, 'title and description')
      refuseWordsOfOthers(before, actor)
    }
  },
  access: { list: 'member', read: 'member', create: 'member', update: 'member', delete: 'member' },
  example: { title: 'Write the quarterly report', description: 'Figures from the finance sheet.' },
})

export const PlanTask = defineModel({
  name: 'PlanTask',
  table: 'plan_tasks',
  description:
    'One task of a plan, in order (`position`). Its title and description may be edited here while the plan is ' +
    'not finished, and a pending task deleted; its status moves only through the plan task route and tool ' +
    '(pending → in_progress → completed, never skipping a step).',
  tenantColumn: 'company_id',
  fields: {
    title: z.string().trim().min(1).max(300),
    description: z.string().max(10_000).default(''),
  },
  readOnly: {
    plan_id: z.uuid(),
    position: z.int().openapi({ description: 'Orders the plan’s tasks (ascending); the tools number them 1, 2, 3 in this order.' }),
    status: TASK_STATUS,
    note: z.string().openapi({ description: 'What was said when the task was finished, failed or skipped.' }),
  },
  recordRule: (eb, actor) =>
    eb.exists(
      eb
        .selectFrom('plans as owner')
        .select('owner.id')
        .whereRef('owner.id', '=', 'plan_tasks.plan_id')
        .where((inner) => takesPart(inner, actor, 'owner.conversation_id')),
    ),
  createdElsewhere: PLANS_ARE_MADE,
  async guard(tx, actor, { before, after }) {
    if (!before) throw new ApiError('method_not_allowed', PLANS_ARE_MADE)
    const plan = await tx.selectFrom('plans').select(['status', 'driven_by']).where('id', '=', before.plan_id).executeTakeFirst()
    refuseFinal(plan?.status, 'tasks')
    if (plan && after) refuseWordsOfOthers(plan, actor)
    if (!after && before.status !== 'pending') throw new ApiError('conflict', `Only a pending task can be removed; this one is ${before.status.replace('_', ' ')}.`)
  },
  computed: {
    plan_status: {
      schema: PLAN_STATUS.openapi({ description: 'The status of the task’s plan.' }),
      select: () => sql<string>`(select p.status from plans p where p.id = plan_tasks.plan_id)`,
    },
  },
  access: { list: 'member', read: 'member', create: 'member', update: 'member', delete: 'member' },
  example: { title: 'Gather the figures', description: 'From the finance sheet.' },
})
