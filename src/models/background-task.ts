import { z } from '@hono/zod-openapi'
import { ApiError } from '../errors.ts'
import { defineModel } from './define.ts'

export const BACKGROUND_TASK_STATUSES = ['running', 'completed', 'failed', 'cancelled', 'interrupted'] as const

const TASKS_ARE_STARTED = 'Background tasks are started with POST /api/tasks, or by an agent’s async_run_tool.'
const timestamp = z.iso.datetime({ offset: true })

/**
 * A tool run in the background. The platform writes every field: what ran, how far it got and how it ended. People
 * see their own tasks only, whatever their role (a task's arguments and result are theirs); they may delete a task
 * once it has ended, to tidy their list.
 */
export const BackgroundTask = defineModel({
  name: 'BackgroundTask',
  table: 'background_tasks',
  description:
    'A tool run in the background (async_run_tool, or POST /api/tasks), with its progress and outcome. Read-only here: ' +
    'POST /api/tasks starts one, POST /api/tasks/cancel stops one; a running task cannot be deleted.',
  tenantColumn: 'company_id',
  fields: {},
  readOnly: {
    user_id: z.uuid().openapi({ description: 'Whose permissions the tool runs with.' }),
    conversation_id: z.uuid().nullable().openapi({ description: 'The conversation told of the outcome; null when started outside a chat turn.' }),
    agent_id: z.uuid().nullable().openapi({ description: 'The agent that started it, in whose name the outcome is told.' }),
    tool: z.string().openapi({ description: 'The tool as server__tool.', example: 'everything__trigger-long-running-operation' }),
    arguments: z.record(z.string(), z.unknown()),
    status: z.enum(BACKGROUND_TASK_STATUSES).openapi({
      description: 'running, then completed, failed, cancelled, or interrupted (the process running it stopped before it finished).',
    }),
    progress: z.number().nullable().openapi({ description: 'The last progress the tool reported.' }),
    progress_total: z.number().nullable(),
    progress_message: z.string().nullable(),
    result: z.string().nullable().openapi({ description: 'What the tool answered, as text (at most 100,000 characters).' }),
    result_truncated: z.boolean().openapi({ description: 'The result was cut at 100,000 characters.' }),
    error: z.string().nullable().openapi({ description: 'Why it failed or was interrupted.' }),
    finished_at: timestamp.nullable(),
  },
  createdElsewhere: TASKS_ARE_STARTED,
  recordRule: (eb, actor) => eb('background_tasks.user_id', '=', actor.userId),
  async guard(_tx, _actor, change) {
    // Only the service writes tasks: this keeps any other caller of createRecord out.
    if (!change.before) throw new ApiError('method_not_allowed', TASKS_ARE_STARTED)
    if (!change.after && change.before.status === 'running') {
      throw new ApiError('conflict', 'The task is still running: cancel it first (POST /api/tasks/cancel).')
    }
  },
  access: { list: 'member', read: 'member', create: 'member', update: 'superadmin', delete: 'member' },
  example: {},
})
