import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { chatTurn, type ChatEvent } from '../helpers/chat.ts'
import { startTestPlatform, type Principal, type TestPlatform } from '../helpers/platform.ts'

/**
 * An agent on the echo runner works a plan through the planning tools (`/tool mcp-planning__…`). Continuations
 * wait an hour here, so that only the test's own turns run; tests/plans/continuation.test.ts runs them.
 */
let p: TestPlatform
let agent: string

beforeAll(async () => {
  p = await startTestPlatform({ SWITCHBOARD_PLAN_CONTINUATION_DELAY_MS: '3600000' })
  const created = await p.call('POST', '/api/v1/AgentConfigRecord', { json: { name: 'planner', runner: 'echo', model: 'echo-1', plugins: { enabled: ['mcp-planning'] } } })
  expect(created.status).toBe(201)
  agent = created.body.id
  expect((await p.call('POST', '/api/v1/McpPermission', { json: { user_id: null, server: 'mcp-planning', tool: '*', effect: 'allow' } })).status).toBe(201)
})
afterAll(() => p.close())

/** One turn asking for a planning tool; answers the tool's result and the conversation. */
async function tool(name: string, args: Record<string, unknown>, conversation?: string, as?: Principal): Promise<{ result: string; conversation: string; events: ChatEvent[] }> {
  const json = { ...(conversation ? { conversation_id: conversation } : { agent_id: agent }), text: `/tool mcp-planning__${name} ${JSON.stringify(args)}` }
  const events = await chatTurn(p, json, { as })
  const result = events.find((e) => e.type === 'tool_result')
  if (!result) throw new Error(`no tool result: ${JSON.stringify(events)}`)
  return { result: result.result, conversation: events[0]!.conversation_id, events }
}

const planOf = async (conversation: string, as?: Principal) => (await p.call('GET', `/api/chat/conversations/${conversation}/plan`, { as })).body

describe('an agent works a plan through the tools', () => {
  test('create, tasks in order, a refused skip of a step, a failure that pauses, resume, completion', async () => {
    const created = await tool('plan_create', { title: 'Quarterly report', tasks: [{ title: 'Gather figures' }, { title: 'Write it' }, { title: 'Send it' }] })
    expect(created.result).toContain('Created the plan as a draft.')
    expect(created.result).toContain('1. [pending] Gather figures')
    const conversation = created.conversation
    let plan = await planOf(conversation)
    expect(plan).toMatchObject({ title: 'Quarterly report', status: 'draft' })
    expect(plan.tasks.map((t: { title: string; number: number }) => [t.number, t.title])).toEqual([[1, 'Gather figures'], [2, 'Write it'], [3, 'Send it']])

    // A draft is not worked on.
    expect((await tool('plan_task_update', { task: 1, status: 'in_progress' }, conversation)).result).toBe(
      'Error: Tasks move only while their plan is active; this plan is draft. Execute it first.',
    )
    expect((await tool('plan_update', { action: 'execute' }, conversation)).result).toContain('(active)')

    // pending → completed skips a step: refused, with the reason.
    const skipped = await tool('plan_task_update', { task: 1, status: 'completed' }, conversation)
    expect(skipped.result).toBe('Error: Task 1 ("Gather figures"): A pending task cannot be marked completed: set it in_progress first, then completed (skipping a step is not allowed).')
    // Tasks start in order.
    expect((await tool('plan_task_update', { task: 2, status: 'in_progress' }, conversation)).result).toContain(
      'Task 2 cannot start before task 1 ("Gather figures") is done',
    )
    await tool('plan_task_update', { task: 1, status: 'in_progress' }, conversation)
    const done = await tool('plan_task_update', { task: 1, status: 'completed', note: 'Figures from finance.' }, conversation)
    expect(done.result).toContain('1. [completed] Gather figures — Figures from finance.')

    // A failed task pauses the plan; nothing moves until it is resumed.
    await tool('plan_task_update', { task: 2, status: 'in_progress' }, conversation)
    expect((await tool('plan_task_update', { task: 2, status: 'failed', note: 'The template is missing.' }, conversation)).result).toContain('(paused)')
    expect((await tool('plan_task_update', { task: 2, status: 'pending' }, conversation)).result).toContain('this plan is paused. Resume it first.')
    expect((await tool('plan_update', { action: 'resume' }, conversation)).result).toContain('(active)')

    // Retry the failed task, finish, and the plan completes by itself.
    for (const status of ['pending', 'in_progress', 'completed']) await tool('plan_task_update', { task: 2, status }, conversation)
    await tool('plan_task_update', { task: 3, status: 'in_progress' }, conversation)
    const last = await tool('plan_task_update', { task: plan.tasks[2]!.id, status: 'completed' }, conversation)
    expect(last.result).toContain('(completed)')
    plan = await planOf(conversation)
    expect(plan.status).toBe('completed')
    expect(plan.tasks.map((t: { status: string }) => t.status)).toEqual(['completed', 'completed', 'completed'])
    expect((await tool('plan_update', { add_tasks: [{ title: 'One more' }] }, conversation)).result).toBe('Error: The plan is completed, which is final: it changes no more.')
  })

  test('plan_update edits, adds, removes and reorders pending tasks, all or nothing', async () => {
    const { conversation } = await tool('plan_create', { title: 'Trip', tasks: [{ title: 'Book train' }, { title: 'Book hotel' }, { title: 'Pack' }] })
    const changed = await tool(
      'plan_update',
      { update_tasks: [{ task: 1, title: 'Book the train' }], remove_tasks: [2], reorder: [3, 1], add_tasks: [{ title: 'Go', description: 'Friday' }] },
      conversation,
    )
    expect(changed.result).toContain('Plan updated.')
    let plan = await planOf(conversation)
    expect(plan.tasks.map((t: { title: string }) => t.title)).toEqual(['Pack', 'Book the train', 'Go'])

    // One bad part refuses the whole change.
    const refused = await tool('plan_update', { add_tasks: [{ title: 'Never added' }], remove_tasks: [9] }, conversation)
    expect(refused.result).toBe('Error: The plan has no task 9 (it has 3).')
    expect((await tool('plan_update', { reorder: [1] }, conversation)).result).toBe('Error: reorder must name every pending task once (3 of them).')
    expect((await tool('plan_update', {}, conversation)).result).toContain('say what to change')
    plan = await planOf(conversation)
    expect(plan.tasks.map((t: { title: string }) => t.title)).toEqual(['Pack', 'Book the train', 'Go'])

    // One live plan per conversation.
    expect((await tool('plan_create', { title: 'Another', tasks: [{ title: 'x' }] }, conversation)).result).toBe(
      'Error: This conversation already has a draft plan ("Trip"); finish or cancel it before making another.',
    )
    expect((await tool('plan_update', { action: 'cancel' }, conversation)).result).toContain('(cancelled)')
    expect((await tool('plan_create', { title: 'Another', tasks: [{ title: 'x' }] }, conversation)).result).toContain('Created the plan')
  })

  test('bad arguments are refused with what is wrong', async () => {
    const { conversation } = await tool('plan_create', { title: 'Bad', tasks: [{ title: 'a' }] })
    expect((await tool('plan_create', { title: '', tasks: [] }, conversation)).result).toMatch(/^Error: The input is not valid: title: .*; tasks: /)
    expect((await tool('plan_task_update', { task: 1, status: 'done' }, conversation)).result).toMatch(/^Error: The input is not valid: status: /)
    expect((await tool('plan_update', { action: 'explode' }, conversation)).result).toMatch(/^Error: The input is not valid: action: /)
  })

  test('the tools are refused where the MCP rules deny them, like any server’s', async () => {
    const member = await p.createUser({ companyId: p.root.companyId, role: 'member' })
    await p.call('POST', '/api/v1/McpPermission', { json: { user_id: member.userId, server: 'mcp-planning', tool: 'plan_create', effect: 'deny' } })
    const events = await chatTurn(p, { agent_id: agent, text: '/tool mcp-planning__plan_create {"title":"x","tasks":[{"title":"y"}]}' }, { as: member })
    expect(events.find((e) => e.type === 'tool_result')!.result).toBe('Error: There is no tool named mcp-planning__plan_create for this agent.')
  })
})

test('an agent’s own resume does not grant it new continuations; a person’s does', async () => {
  const { conversation } = await tool('plan_create', { title: 'Loop', tasks: [{ title: 'a' }] })
  await tool('plan_update', { action: 'execute' }, conversation)
  const plan = await planOf(conversation)
  await p.store.db.updateTable('plans').set({ continuations: 7 }).where('id', '=', plan.id).execute()
  await tool('plan_update', { action: 'pause' }, conversation)
  await tool('plan_update', { action: 'resume' }, conversation)
  expect((await planOf(conversation)).continuations).toBe(7)
  await p.call('POST', `/api/plans/${plan.id}/update`, { json: { action: 'pause' } })
  expect((await p.call('POST', `/api/plans/${plan.id}/update`, { json: { action: 'resume' } })).body.continuations).toBe(0)
})

test('with a service account, the plan is still the person’s, in their conversation', async () => {
  const service = await p.createUser({ companyId: p.root.companyId, role: 'member' })
  const member = await p.createUser({ companyId: p.root.companyId, role: 'member' })
  const lent = await p.call('POST', '/api/v1/AgentConfigRecord', {
    json: { name: 'lent', runner: 'echo', model: 'echo-1', plugins: { enabled: ['mcp-planning'] }, context_options: { service_account: service.userId } },
  })
  const events = await chatTurn(p, { agent_id: lent.body.id, text: '/tool mcp-planning__plan_create {"title":"Mine","tasks":[{"title":"x"}]}' }, { as: member })
  expect(events.find((e) => e.type === 'tool_result')!.result).toContain('Created the plan as a draft.')
  const plan = (await p.call('GET', `/api/chat/conversations/${events[0]!.conversation_id}/plan`, { as: member })).body
  expect((await p.call('GET', `/api/v1/Plan/${plan.id}`, { as: member })).body.created_by).toBe(member.userId)
})
