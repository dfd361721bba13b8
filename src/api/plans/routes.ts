import { createRoute, z } from '@hono/zod-openapi'
import { anyUuid } from '../../models/fields.ts'
import { NewPlan, PlanChanges, TaskMove } from '../../plans/inputs.ts'
import { IdParam } from '../params.ts'
import { commonErrors, conflictErrors, notFoundError, signedIn, validationErrors } from '../responses.ts'

const Task = z
  .object({
    id: z.uuid(),
    number: z.int().openapi({ description: 'Its place in the plan, from 1.' }),
    title: z.string(),
    description: z.string(),
    status: z.enum(['pending', 'in_progress', 'completed', 'failed', 'skipped']),
    note: z.string().openapi({ description: 'What was said when it was finished, failed or skipped.' }),
  })
  .openapi('PlanTaskView')

export const PlanView = z
  .object({
    id: z.uuid(),
    conversation_id: z.uuid(),
    title: z.string(),
    description: z.string(),
    status: z.enum(['draft', 'active', 'paused', 'completed', 'cancelled']),
    continuations: z.int().openapi({ description: 'Continuation messages sent since it was last executed or resumed (at most 20).' }),
    awaiting_approval_id: z.uuid().nullable().openapi({ description: 'The tool approval its work waits on: the plan is paused until it is answered, then goes on.' }),
    created_at: z.iso.datetime(),
    updated_at: z.iso.datetime(),
    tasks: z.array(Task),
  })
  .openapi('PlanView', { description: 'A plan with its tasks, in order.' })

const planResponse = (description: string) => ({ description, content: { 'application/json': { schema: PlanView } } })
const refused = { 409: { description: 'The plan’s or task’s state does not allow it; `detail` says why.' } }
const json = <T extends z.ZodType>(schema: T) => ({ body: { content: { 'application/json': { schema } }, required: true } })

/**
 * The plan and its conversation, as one flat object: extending NewPlan would document an allOf of two closed
 * objects, which no body satisfies (each refuses the other's fields).
 */
const NewPlanRequest = z
  .strictObject({ conversation_id: anyUuid.openapi({ format: 'uuid' }), ...NewPlan.shape })
  .openapi('NewPlanRequest', { example: { conversation_id: '01936f3e-6d2a-7c41-9b1e-2f3a4b5c6d7e', title: 'Quarterly report', tasks: [{ title: 'Gather figures' }, { title: 'Write it' }] } })

export const createPlanRoute = createRoute({
  method: 'post',
  path: '/api/plans',
  operationId: 'createPlan',
  summary: 'Make a conversation’s plan (as the plan_create tool does)',
  description: 'A draft plan with its tasks, in a conversation you take part in. A conversation has one live plan (draft, active or paused) at a time.',
  tags: ['Plans'],
  security: signedIn,
  request: json(NewPlanRequest),
  responses: { 201: planResponse('The new plan, a draft.'), ...commonErrors, ...notFoundError, ...validationErrors, ...refused },
})

export const readPlanRoute = createRoute({
  method: 'get',
  path: '/api/plans/{id}',
  operationId: 'readPlan',
  summary: 'A plan with its tasks',
  tags: ['Plans'],
  security: signedIn,
  request: { params: IdParam },
  responses: { 200: planResponse('The plan.'), ...commonErrors, ...notFoundError },
})

export const conversationPlanRoute = createRoute({
  method: 'get',
  path: '/api/chat/conversations/{id}/plan',
  operationId: 'readConversationPlan',
  summary: 'A conversation’s plan: its live one, else its latest',
  tags: ['Plans'],
  security: signedIn,
  request: { params: IdParam },
  responses: { 200: planResponse('The plan.'), ...commonErrors, 404: { description: 'No such conversation, or it has never had a plan.' } },
})

export const moveTaskRoute = createRoute({
  method: 'post',
  path: '/api/plans/{id}/tasks/status',
  operationId: 'movePlanTask',
  summary: 'Move one task (as the plan_task_update tool does)',
  description:
    'pending → in_progress or skipped; in_progress → completed, failed or skipped; failed → pending. Tasks move only ' +
    'while the plan is active, and start in order. A failed task pauses the plan; when every task is completed or ' +
    'skipped the plan is completed.',
  tags: ['Plans'],
  security: signedIn,
  request: { params: IdParam, ...json(TaskMove) },
  responses: { 200: planResponse('The plan after the move.'), ...commonErrors, ...notFoundError, ...validationErrors, ...refused },
})

export const updatePlanRoute = createRoute({
  method: 'post',
  path: '/api/plans/{id}/update',
  operationId: 'updatePlan',
  summary: 'Change a plan’s tasks and take an action (as the plan_update tool does)',
  description:
    'Task edits, removals (pending tasks only), a new order of the pending tasks, additions at the end, then the ' +
    'action (execute: draft → active; pause; resume: paused → active; cancel), all or nothing. Executing or resuming ' +
    'starts auto-continuation, as you: the agent is sent up to 20 continuation messages.',
  tags: ['Plans'],
  security: signedIn,
  request: { params: IdParam, ...json(PlanChanges) },
  responses: { 200: planResponse('The plan after the change.'), ...commonErrors, ...notFoundError, ...validationErrors, ...refused, ...conflictErrors },
})
