import { definePlugin, personOf, type PluginContext, type TaskView, type VirtualTool } from '../../src/plugin-host/sdk.ts'

/**
 * Background tasks as built-in tools. The rules (who may run what, the limit per person, cancelling across
 * processes, telling the conversation) are the kernel's, shared with POST /api/tasks; these tools are their voice
 * for agents and MCP hosts.
 */

function taskId(args: Record<string, unknown>): string {
  if (typeof args.task_id !== 'string' || args.task_id.trim() === '') throw new Error('task_id must be the id async_run_tool answered.')
  return args.task_id.trim()
}

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
      inputSchema: {
        type: 'object',
        properties: {
          tool: { type: 'string', description: 'The tool as you call it, server__tool, e.g. everything__trigger-long-running-operation.' },
          arguments: { type: 'object', description: 'The tool’s arguments.' },
        },
        required: ['tool'],
      },
      async run(args, { user, turn }) {
        const { tool } = args
        if (typeof tool !== 'string' || tool.trim() === '') throw new Error('tool must name a tool as server__tool.')
        if (tool.startsWith(own)) throw new Error(`${tool} cannot itself run in the background.`)
        const given = args.arguments ?? {}
        if (typeof given !== 'object' || given === null || Array.isArray(given)) throw new Error('arguments must be an object.')
        const task = await context.kernel.tasks.run({ user, tool: tool.trim(), arguments: given as Record<string, unknown>, ...(turn ? { turn } : {}) })
        const told = turn ? ' Its result will be posted in this conversation when it is done.' : ''
        return `Started background task ${task.id} running ${task.tool}.${told} Ask async_task_status with task_id ${task.id} to follow it.`
      },
    },
    {
      name: 'async_task_status',
      description: 'The status of a background task (running, completed, failed, cancelled or interrupted), its progress, and its result once done.',
      inputSchema: { type: 'object', properties: { task_id: { type: 'string', description: 'As async_run_tool answered.' } }, required: ['task_id'] },
      async run(args, call) {
        const user = personOf(call)
        return described(await context.kernel.tasks.status(user, taskId(args)))
      },
    },
    {
      name: 'async_task_cancel',
      description: 'Cancels a running background task. A task that has already ended is left as it is.',
      inputSchema: { type: 'object', properties: { task_id: { type: 'string', description: 'As async_run_tool answered.' } }, required: ['task_id'] },
      async run(args, call) {
        const user = personOf(call)
        const { cancelled, task } = await context.kernel.tasks.cancel(user, taskId(args))
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
