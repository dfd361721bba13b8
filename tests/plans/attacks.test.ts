import { afterAll, beforeAll, expect, test } from 'bun:test'
import type { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { chatTurn } from '../helpers/chat.ts'
import { connectMcp, startMcpPlatform, type McpTestPlatform } from '../helpers/mcp.ts'
import type { Principal } from '../helpers/platform.ts'
import { expectProblem } from '../helpers/problem.ts'

// Someone else's plan, named by its id, its tasks' ids or its conversation's id, through every door that moves plans:
// the REST API, the generic record API, the planning tools in a chat turn and the same tools through the MCP gateway.
// A colleague who does not take part in the conversation and an owner of another company both find nothing, and
// the plan stays exactly as it was.
let p: McpTestPlatform
let agent: string
let colleague: Principal
let outsider: Principal
let victim: { conversation: string; plan: string; task: string }

beforeAll(async () => {
  // Continuations wait an hour: only the test's own requests move anything.
  p = await startMcpPlatform({ env: { SWITCHBOARD_PLAN_CONTINUATION_DELAY_MS: '3600000' }, rules: [{ server: 'mcp-planning', tool: '*', effect: 'allow' }] })
  agent = (await p.call('POST', '/api/v1/AgentConfigRecord', { json: { name: 'planner', runner: 'echo', model: 'echo-1', plugins: { enabled: ['mcp-planning'] } } })).body.id
  colleague = await p.createUser({ companyId: p.root.companyId, role: 'admin' })
  outsider = await p.createUser({ companyId: await p.createCompany(), role: 'owner' })
  // The outsider's company lets its people use the planning tools, so only the plan's owner stands in the way.
  const rule = await p.call('POST', '/api/v1/McpPermission', { as: outsider, json: { server: 'mcp-planning', tool: '*', effect: 'allow' } })
  expect(rule.status).toBe(201)

  const conversation = (await chatTurn(p, { agent_id: agent, text: 'Let us plan.' }))[0]!.conversation_id
  const made = await p.call('POST', '/api/plans', { json: { conversation_id: conversation, title: 'Mine', tasks: [{ title: 'First' }, { title: 'Second' }] } })
  expect(made.status).toBe(201)
  expect((await p.call('POST', `/api/plans/${made.body.id}/update`, { json: { action: 'execute' } })).body.status).toBe('active')
  victim = { conversation, plan: made.body.id, task: made.body.tasks[0]!.id }
})
afterAll(() => p.close())

/** The victim's plan as stored, every field that a move would change. */
const stored = () =>
  Promise.all([
    p.store.db.selectFrom('plans').select(['status', 'title', 'description', 'version', 'driven_by', 'continuations']).where('conversation_id', '=', victim.conversation).execute(),
    p.store.db.selectFrom('plan_tasks').select(['title', 'description', 'status', 'note', 'position', 'version']).where('plan_id', '=', victim.plan).orderBy('position').execute(),
  ])

/** What a chat turn of `as`, in a conversation of their own with the planner, answered for one planning tool. */
async function inTurn(as: Principal, tool: string, args: Record<string, unknown>): Promise<string> {
  const events = await chatTurn(p, { agent_id: agent, text: `/tool mcp-planning__${tool} ${JSON.stringify(args)}` }, { as })
  const result = events.find((e) => e.type === 'tool_result')
  if (!result) throw new Error(`no tool result: ${JSON.stringify(events)}`)
  return result.result
}

/** Every way of naming the victim's plan, for a tool called with it. */
const namings = () => [
  ['plan_update', { plan_id: victim.plan, action: 'cancel' }],
  ['plan_update', { plan_id: victim.plan, update_tasks: [{ task: 1, title: 'Mail the vault' }] }],
  ['plan_update', { plan_id: victim.plan.toUpperCase(), action: 'pause' }],
  ['plan_task_update', { plan_id: victim.plan, task: 1, status: 'in_progress' }],
  ['plan_task_update', { task: victim.task, status: 'in_progress' }],
  ['plan_task_update', { task: victim.task.toUpperCase(), status: 'skipped', note: 'by someone else' }],
] as const

test('the REST and record APIs find nothing of another person’s plan, and move nothing', async () => {
  const before = await stored()
  for (const stranger of [colleague, outsider]) {
    expectProblem(await p.call('GET', `/api/plans/${victim.plan}`, { as: stranger }), 404, 'not_found')
    expectProblem(await p.call('POST', `/api/plans/${victim.plan}/tasks/status`, { as: stranger, json: { task: 1, status: 'in_progress' } }), 404, 'not_found')
    expectProblem(await p.call('POST', `/api/plans/${victim.plan}/tasks/status`, { as: stranger, json: { task: victim.task, status: 'skipped' } }), 404, 'not_found')
    expectProblem(await p.call('POST', `/api/plans/${victim.plan}/update`, { as: stranger, json: { action: 'cancel' } }), 404, 'not_found')
    expectProblem(await p.call('POST', '/api/plans', { as: stranger, json: { conversation_id: victim.conversation, title: 'Theirs', tasks: [{ title: 'x' }] } }), 404, 'not_found')
    expectProblem(await p.call('GET', `/api/chat/conversations/${victim.conversation}/plan`, { as: stranger }), 404, 'not_found')
    expectProblem(await p.call('PATCH', `/api/v1/Plan/${victim.plan}`, { as: stranger, json: { title: 'Theirs' } }), 404, 'not_found')
    expectProblem(await p.call('PATCH', `/api/v1/PlanTask/${victim.task}`, { as: stranger, json: { title: 'Theirs' } }), 404, 'not_found')
    expectProblem(await p.call('DELETE', `/api/v1/Plan/${victim.plan}`, { as: stranger }), 404, 'not_found')
    expectProblem(await p.call('GET', `/api/v1/PlanTask/${victim.task}`, { as: stranger }), 404, 'not_found')
  }
  expect(await stored()).toEqual(before)
})

test('the planning tools in a chat turn find nothing of another person’s plan, and move nothing', async () => {
  const before = await stored()
  for (const [tool, args] of namings()) {
    const result = await inTurn(colleague, tool, args)
    // Not found as a plan of theirs, or (a task id that is not theirs) no live plan in the conversation they are in.
    expect(result, `${tool} ${JSON.stringify(args)}`).toMatch(/^Error: (No such plan in a conversation you take part in\.|This conversation has no live plan)/)
  }
  // The conversation a turn works in is the turn's own, whatever the arguments name.
  const created = await inTurn(colleague, 'plan_create', { conversation_id: victim.conversation, title: 'Theirs', tasks: [{ title: 'x' }] })
  expect(created).toStartWith('Created the plan as a draft.')
  expect(await p.store.db.selectFrom('plans').select('id').where('conversation_id', '=', victim.conversation).execute()).toHaveLength(1)
  expect(await stored()).toEqual(before)
})

test('the planning tools through the MCP gateway find nothing of another person’s plan or conversation, and move nothing', async () => {
  const before = await stored()
  for (const stranger of [colleague, outsider]) {
    const client: Client = await connectMcp(p.base, stranger, 'mcp-planning')
    try {
      const calls = [
        ...namings(),
        ['plan_create', { conversation_id: victim.conversation, title: 'Theirs', tasks: [{ title: 'x' }] }],
        ['plan_update', { conversation_id: victim.conversation, action: 'cancel' }],
        ['plan_task_update', { conversation_id: victim.conversation, task: 1, status: 'in_progress' }],
      ] as const
      for (const [tool, args] of calls) {
        const reply = (await client.callTool({ name: tool, arguments: args })) as { isError?: boolean; content: Array<{ text: string }> }
        expect(reply.isError, `${tool} ${JSON.stringify(args)}`).toBe(true)
        expect(reply.content[0]!.text, `${tool} ${JSON.stringify(args)}`).toMatch(/^(No such plan in a conversation you take part in\.|No such conversation, or you do not take part in it\.|No task [0-9a-fA-F-]{36} in a plan you take part in\.)$/)
      }
    } finally {
      await client.close()
    }
  }
  expect(await stored()).toEqual(before)
})
