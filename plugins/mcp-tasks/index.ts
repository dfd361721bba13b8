import { definePlugin, personOf, toolInput, z, type PluginContext, type TaskView, type VirtualTool } from '../../src/plugin-host/sdk.ts'

/**
 * Background tasks as built-in tools. The rules (who may run what, the limit per person, cancelling across
 * processes, telling the conversation) are the kernel's, shared with POST /api/tasks; these tools are their voice
 * for agents and MCP hosts.
 */

const RunInput = toolInput(
  z.strictObject({
    tool: z.string().trim().min(1).describe('The tool as you call it, server__tool, e.g. everything__trigger-long-running-operation.'),
    arguments: z.record(z.string(), z.unknown()).default({}).describe('The tool’s arguments.'),
  }),
)

const TaskInput = toolInput(z.strictObject({ task_id: z.string().trim().min(1).describe('As async_run_tool answered.') }))

/** What the model reads of a task: its state, and its result once there is one. */
function described(task: TaskView): string {
  const progress = task.progress === null ? null : { progress: task.progress, total: task.progress_total, message: task.progress_message }
  return JSON.stringify(
    {
      task_id: task.id,
      tool: task.tool,
      status: task.status,
      progress,
      result: task.result,
      ...(task.result_truncated ? { result_truncated: true } : {}),
      error: task.error,
      started_at: task.created_at,
      finished_at: task.finished_at,
    },
    null,
    2,
  )
}

function tools(context: PluginContext): VirtualTool[] {
  const own = `${context.manifest.name}__`
  return [
    {
      name: 'async_run_tool',
      description:
        'Runs another of your tools in the background, for long batch work, and answers at once with a task id. ' +
        'The conversation goes on meanwhile; the result is posted in this conversation when the tool is done. ' +
        'Follow it with async_task_status, stop it with async_task_cancel.',
      inputSchema: RunInput.inputSchema,
      async run(args, { user, turn }) {
        const { tool, arguments: given } = RunInput.parse(args)
        if (tool.startsWith(own)) throw new Error(`${tool} cannot itself run in the background.`)
        const task = await context.kernel.tasks.run({ user, tool, arguments: given, ...(turn ? { turn } : {}) })
        const told = turn ? ' Its result will be posted in this conversation when it is done.' : ''
        return `Started background task ${task.id} running ${task.tool}.${told} Ask async_task_status with task_id ${task.id} to follow it.`
      },
    },
    {
      name: 'async_task_status',
      description: 'The status of a background task (running, completed, failed, cancelled or interrupted), its progress, and its result once done.',
      inputSchema: TaskInput.inputSchema,
      async run(args, call) {
        const user = personOf(call)
        return described(await context.kernel.tasks.status(user, TaskInput.parse(args).task_id))
      },
    },
    {
      name: 'async_task_cancel',
      description: 'Cancels a running background task. A task that has already ended is left as it is.',
      inputSchema: TaskInput.inputSchema,
      async run(args, call) {
        const user = personOf(call)
        const { cancelled, task } = await context.kernel.tasks.cancel(user, TaskInput.parse(args).task_id)
        return cancelled ? `Background task ${task.id} is cancelled.` : `Background task ${task.id} had already ended (${task.status}); nothing to cancel.`
      },
    },
  ]
}

export default definePlugin({
  setup(context) {
    context.registerTools(tools(context))
  },
})
