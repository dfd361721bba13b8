import { definePlugin, personOf, PLAN_TOOL_INPUTS, planText, type PluginContext, type ToolContext, type VirtualTool } from '../../src/plugin-host/sdk.ts'

/**
 * The planning tools. The rules (one live plan per conversation, the task and plan state machines) are the
 * kernel's, shared with the REST API; these tools only say where the plan is and how the answer reads.
 */

/** The conversation a call is about: the agent's own in a chat turn, else the one the arguments name. */
function conversationOf(args: Record<string, unknown>, context: ToolContext): string | undefined {
  if (context.turn) return context.turn.conversationId
  return typeof args.conversation_id === 'string' ? args.conversation_id : undefined
}

/** The arguments without where they point, which the kernel's inputs do not take. */
function withoutPlace(args: Record<string, unknown>): Record<string, unknown> {
  const { conversation_id: _c, plan_id: _p, ...rest } = args
  return rest
}

function tools(plugin: PluginContext): VirtualTool[] {
  const plans = () => plugin.kernel.plans
  return [
    {
      name: 'plan_create',
      description:
        'Make a plan for multi-step work in this conversation: a title and the tasks, in order. It starts as a draft ' +
        'the person can execute from the plan panel (or execute it with plan_update action "execute"). One live plan per conversation.',
      inputSchema: PLAN_TOOL_INPUTS.plan_create as VirtualTool['inputSchema'],
      async run(args, context) {
        const conversation = conversationOf(args, context)
        if (!conversation) throw new Error('Say which conversation the plan is for (conversation_id).')
        const plan = await plans().create(personOf(context), conversation, withoutPlace(args))
        return `Created the plan as a draft.\n${planText(plan)}`
      },
    },
    {
      name: 'plan_task_update',
      description:
        'Move one task of the plan: pending → in_progress → completed (or failed, or skipped); failed → pending to retry. ' +
        'Name the task by its number or id. Tasks are done in order, while the plan is active; a failed task pauses the plan.',
      inputSchema: PLAN_TOOL_INPUTS.plan_task_update as VirtualTool['inputSchema'],
      async run(args, context) {
        const place = { plan_id: typeof args.plan_id === 'string' ? args.plan_id : undefined, conversation_id: conversationOf(args, context) }
        const plan = await plans().moveTask(personOf(context), place, withoutPlace(args))
        return `Task updated.\n${planText(plan)}`
      },
    },
    {
      name: 'plan_update',
      description:
        'Change the plan: update_tasks (new title or description), add_tasks (at the end), remove_tasks and reorder ' +
        '(pending tasks only), and action: execute, pause, resume or cancel.',
      inputSchema: PLAN_TOOL_INPUTS.plan_update as VirtualTool['inputSchema'],
      async run(args, context) {
        let planId = typeof args.plan_id === 'string' ? args.plan_id : undefined
        if (!planId) {
          const conversation = conversationOf(args, context)
          if (!conversation) throw new Error('Say which plan (plan_id) or conversation (conversation_id).')
          const current = await plans().ofConversation(personOf(context), conversation)
          if (!current) throw new Error('This conversation has no plan: make one with plan_create.')
          planId = current.id
        }
        const plan = await plans().update(personOf(context), planId, withoutPlace(args), { byAgent: context.turn !== undefined })
        return `Plan updated.\n${planText(plan)}`
      },
    },
  ]
}

export default definePlugin({
  setup(context) {
    context.registerTools(tools(context))
  },
})
