import { z } from '@hono/zod-openapi'
import { jsonSchemaOf } from '../mcp/tool-input.ts'
import { PLAN_ACTIONS } from './states.ts'

/** At most this many tasks in one plan: a plan is a checklist a person reads, not a queue. */
export const MAX_TASKS = 50

const title = z.string().trim().min(1).max(300)
const description = z.string().max(10_000)

/** A task by its id, or by its number in the plan (1 = first), which is how a model most easily names it. */
export const TaskRef = z
  .union([z.uuid(), z.int().min(1).max(MAX_TASKS), z.string().regex(/^\d{1,2}$/).transform(Number)])
  .openapi({ description: 'The task’s id, or its number in the plan (1 = first).' })
export type TaskRef = z.output<typeof TaskRef>

const NewTask = z.strictObject({ title, description: description.optional() })

export const NewPlan = z
  .strictObject({
    title,
    description: description.optional(),
    tasks: z.array(NewTask).min(1).max(MAX_TASKS).openapi({ description: 'The steps, in the order they are to be done.' }),
  })
  .openapi('NewPlan')
export type NewPlan = z.output<typeof NewPlan>

export const TaskMove = z
  .strictObject({
    task: TaskRef,
    status: z.enum(['pending', 'in_progress', 'completed', 'failed', 'skipped']),
    note: z.string().max(10_000).optional().openapi({ description: 'What was done, or why it failed or was skipped.' }),
  })
  .openapi('PlanTaskMove', { example: { task: 1, status: 'in_progress' } })
export type TaskMove = z.output<typeof TaskMove>

const PlanChangesShape = z.strictObject({
    update_tasks: z
      .array(z.strictObject({ task: TaskRef, title: title.optional(), description: description.optional() }))
      .max(MAX_TASKS)
      .optional()
      .openapi({ description: 'New titles or descriptions of existing tasks.' }),
    add_tasks: z.array(NewTask).max(MAX_TASKS).optional().openapi({ description: 'Tasks added at the end, in this order.' }),
    remove_tasks: z.array(TaskRef).max(MAX_TASKS).optional().openapi({ description: 'Pending tasks to remove.' }),
    reorder: z
      .array(TaskRef)
      .max(MAX_TASKS)
      .optional()
      .openapi({ description: 'Every pending task, in its new order; the others keep their places.' }),
    action: z.enum(PLAN_ACTIONS).optional().openapi({ description: 'execute (draft → active), pause, resume (paused → active), cancel. Applied after the task changes.' }),
})

export const PlanChanges = PlanChangesShape
  .refine((c) => Object.values(c).some((v) => v !== undefined), { message: 'say what to change: update_tasks, add_tasks, remove_tasks, reorder or action' })
  .openapi('PlanChanges', { example: { add_tasks: [{ title: 'Check the figures' }], action: 'execute' } })
export type PlanChanges = z.output<typeof PlanChanges>

const where = {
  conversation_id: z.uuid().optional().describe('The conversation, when not called from one (an agent’s turn names its own).'),
}

/** A tool's input schema: what the kernel validates, plus where the plan is when no chat turn says. */
function toolInput(schema: z.ZodObject, extra: z.ZodRawShape): Record<string, unknown> {
  return jsonSchemaOf(schema.extend(extra))
}

/** The planning tools' input schemas (JSON Schema), made from the inputs the kernel validates. */
export const PLAN_TOOL_INPUTS = {
  plan_create: toolInput(NewPlan, where),
  plan_task_update: toolInput(TaskMove, { ...where, plan_id: z.uuid().optional().describe('The plan; by default the task’s, or the conversation’s live plan.') }),
  plan_update: toolInput(PlanChangesShape, { ...where, plan_id: z.uuid().optional().describe('The plan; by default the conversation’s live plan.') }),
}
