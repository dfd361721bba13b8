import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { maskSecrets } from '../../src/approvals/approvals.ts'
import { chatTurn, startChatTurn, type ChatEvent } from '../helpers/chat.ts'
import { CONSOLE_ORIGIN, consoleCookie } from '../helpers/console.ts'
import { ADMIN_PASSWORD, startTestPlatform, type Principal, type TestPlatform } from '../helpers/platform.ts'
import { expectProblem } from '../helpers/problem.ts'
import { until } from '../helpers/until.ts'

// An agent on the echo runner calls a planning tool (`/tool mcp-planning__plan_create …`) that an `approve` rule
// guards: the turn waits for the person's yes, and goes on with the tool's result or with word that they declined.

let p: TestPlatform
let agent: string
const CREATE = (title: string, extra: Record<string, unknown> = {}) => `/tool mcp-planning__plan_create ${JSON.stringify({ title, tasks: [{ title: 'step' }], ...extra })}`

beforeAll(async () => {
  // Continuation waits a minute after a turn, so a plan's own turns do not race the ones a test starts.
  p = await startTestPlatform({ SWITCHBOARD_PLAN_CONTINUATION_DELAY_MS: '60000' })
  const created = await p.call('POST', '/api/v1/AgentConfigRecord', { json: { name: 'careful', runner: 'echo', model: 'echo-1', plugins: { enabled: ['mcp-planning', 'mcp-tasks'] } } })
  agent = created.body.id
  expect((await p.call('POST', '/api/v1/McpPermission', { json: { user_id: null, server: 'mcp-planning', tool: '*', effect: 'allow' } })).status).toBe(201)
  expect((await p.call('POST', '/api/v1/McpPermission', { json: { user_id: null, server: 'mcp-tasks', tool: '*', effect: 'allow' } })).status).toBe(201)
  expect((await p.call('POST', '/api/v1/McpPermission', { json: { user_id: null, server: 'mcp-planning', tool: 'plan_create', effect: 'approve', approvers: 'admins' } })).status).toBe(201)
})
afterAll(() => p.close())

/** A turn started in the background, its events gathered, and the request it waits on once it is asked. */
async function waitingTurn(text: string, as: Principal = p.root, conversation?: string) {
  const started = await startChatTurn(p, conversation ? { conversation_id: conversation, text } : { agent_id: agent, text }, as)
  expect(started.response.status).toBe(200)
  const events: ChatEvent[] = []
  const done = (async () => {
    for await (const event of started.events()) events.push(event)
    return events
  })()
  const approval = await until(async () => (await p.call('GET', '/api/approvals?status=pending', { as })).body.data.find((a: { tool: string; user_id: string }) => a.user_id === as.userId), {
    what: 'the turn to ask for approval',
  })
  return { done, approval, events }
}

const planTitles = async () => (await p.store.db.selectFrom('plans').select('title').execute()).map((r) => r.title)

describe('a tool call that needs approval', () => {
  test('waits for the yes, then runs the tool; the request shows what it will do', async () => {
    const { done, approval, events } = await waitingTurn(CREATE('Approved plan'))
    expect(approval).toMatchObject({ server: 'mcp-planning', tool: 'plan_create', status: 'pending', approvers: 'admins', user_id: p.root.userId })
    expect(approval.arguments).toEqual({ title: 'Approved plan', tasks: [{ title: 'step' }] })
    expect(approval.rule).toStartWith('permission rule ')
    // Nothing ran yet: the turn waits.
    expect(await planTitles()).not.toContain('Approved plan')
    expect(events.some((e) => e.type === 'message')).toBe(false)

    const decided = await p.call('POST', `/api/approvals/${approval.id}/decision`, { json: { approve: true } })
    expect(decided.status).toBe(200)
    expect(decided.body).toMatchObject({ status: 'approved', decided_by: p.root.userId })
    await done
    expect(events.find((e) => e.type === 'tool_result')!.result).toContain('Created the plan')
    expect(await planTitles()).toContain('Approved plan')
    // The trail has the request and the answer, with how long it waited.
    const trail = await p.store.db.selectFrom('audit_events').select(['action', 'changes']).where('record_id', '=', approval.id).orderBy('created_at').execute()
    expect(trail.map((t) => t.action)).toEqual(['approval_request', 'approval_decision'])
    expect(trail[1]!.changes).toMatchObject({ status: 'approved', tool: 'plan_create' })
  })

  test('a no lets the agent carry on without the tool, told why; what looks like a secret is never shown or kept', async () => {
    const { done, approval } = await waitingTurn(CREATE('Declined plan', { api_key: 'sk-live-secret' }))
    expect(approval.arguments.api_key).toBe('•••• (hidden)')
    expect((await p.call('POST', `/api/approvals/${approval.id}/decision`, { json: { approve: false } })).status).toBe(200)
    const events = await done
    expect(events.find((e) => e.type === 'tool_result')!.result).toBe('The person declined the call of mcp-planning/plan_create; it was not made. Carry on without it, or ask them what they would rather do.')
    expect(events.at(-1)!.type).toBe('message')
    expect(await planTitles()).not.toContain('Declined plan')
    const kept = await p.store.db.selectFrom('tool_approvals').select('arguments').where('id', '=', approval.id).executeTakeFirstOrThrow()
    const trail = await p.store.db.selectFrom('audit_events').select('changes').where('record_id', '=', approval.id).execute()
    expect(JSON.stringify([kept, trail])).not.toContain('sk-live-secret')
  })

  test('two answers at once: exactly one stands, the other hears how it ended', async () => {
    const { done, approval } = await waitingTurn(CREATE('Raced plan'))
    const answers = await Promise.all([
      p.call('POST', `/api/approvals/${approval.id}/decision`, { json: { approve: true } }),
      p.call('POST', `/api/approvals/${approval.id}/decision`, { json: { approve: false } }),
      p.call('POST', `/api/approvals/${approval.id}/decision`, { json: { approve: true } }),
    ])
    expect(answers.map((a) => a.status).sort()).toEqual([200, 409, 409])
    const late = expectProblem(answers.find((a) => a.status === 409)!, 409, 'conflict')
    expect(late.detail).toMatch(/already answered: (approved|denied)/)
    await done
    const row = await p.store.db.selectFrom('tool_approvals').select(['status', 'decided_by']).where('id', '=', approval.id).executeTakeFirstOrThrow()
    expect(row.status).toBe(answers.find((a) => a.status === 200)!.body.status)
    const decisions = await p.store.db.selectFrom('audit_events').select('id').where('record_id', '=', approval.id).where('action', '=', 'approval_decision').execute()
    expect(decisions).toHaveLength(1)
  })

  test('stopping the turn while it waits ends the request; nothing runs', async () => {
    const { done, approval, events } = await waitingTurn(CREATE('Stopped plan'))
    const conversation = events[0]!.conversation_id
    expect((await p.call('POST', '/api/chat/abort', { json: { conversation_id: conversation } })).status).toBe(200)
    await done
    await until(async () => (await p.store.db.selectFrom('tool_approvals').select('status').where('id', '=', approval.id).executeTakeFirstOrThrow()).status === 'cancelled', { what: 'the request to be cancelled' })
    expect(await planTitles()).not.toContain('Stopped plan')
    expectProblem(await p.call('POST', `/api/approvals/${approval.id}/decision`, { json: { approve: true } }), 409, 'conflict')
  })
})

/** A conversation with the agent and an active plan of one task in it. */
async function activePlan(title: string) {
  const events = await chatTurn(p, { agent_id: agent, text: 'Let us plan.' })
  const conversation = events[0]!.conversation_id!
  const created = await p.call('POST', '/api/plans', { json: { conversation_id: conversation, title, tasks: [{ title: 'Send it' }] } })
  expect(created.status).toBe(201)
  const plan = (await p.call('POST', `/api/plans/${created.body.id}/update`, { json: { action: 'execute' } })).body
  expect(plan.status).toBe('active')
  return { conversation, plan }
}

test('a plan whose work waits for a yes is paused meanwhile, and goes on with the answer', async () => {
  const { conversation, plan } = await activePlan('Waiting plan')
  const rule = await p.call('POST', '/api/v1/McpPermission', { json: { user_id: p.root.userId, server: 'mcp-planning', tool: 'plan_task_update', effect: 'approve' } })
  expect(rule.status).toBe(201)
  try {
    const started = await startChatTurn(p, { conversation_id: conversation, text: `/tool mcp-planning__plan_task_update ${JSON.stringify({ task: 1, status: 'in_progress' })}` })
    const done = (async () => {
      const events: ChatEvent[] = []
      for await (const event of started.events()) events.push(event)
      return events
    })()
    const approval = await until(async () => (await p.call('GET', `/api/approvals?status=pending&conversation_id=${conversation}`)).body.data[0], { what: 'the turn to ask' })
    const waiting = (await p.call('GET', `/api/plans/${plan.id}`)).body
    expect(waiting).toMatchObject({ status: 'paused', awaiting_approval_id: approval.id })
    // Its readers see why: the panel says what it waits for.
    const panel = await p.admin.request(`/chat/${conversation}/plan`, { headers: { cookie: await consoleCookie(p), 'hx-request': 'true', 'hx-request-type': 'partial' } })
    expect(await panel.text()).toContain('Paused while a tool call waits for approval')

    expect((await p.call('POST', `/api/approvals/${approval.id}/decision`, { json: { approve: true } })).status).toBe(200)
    const events = await done
    // Active again before the tool ran: a task moves only in an active plan.
    expect(events.find((e) => e.type === 'tool_result')!.result).not.toContain('Tasks move only while their plan is active')
    const after = (await p.call('GET', `/api/plans/${plan.id}`)).body
    expect(after).toMatchObject({ status: 'active', awaiting_approval_id: null })
    expect(after.tasks[0]!.status).toBe('in_progress')
  } finally {
    await p.call('DELETE', `/api/v1/McpPermission/${rule.body.id}`)
    await p.call('POST', `/api/plans/${plan.id}/update`, { json: { action: 'cancel' } })
  }
})

test('a plan a person resumed while its work waited stays theirs: the answer leaves it alone', async () => {
  const { conversation, plan } = await activePlan('Resumed plan')
  try {
    const { done, approval } = await waitingTurn(CREATE('Second plan'), p.root, conversation)
    expect((await p.call('GET', `/api/plans/${plan.id}`)).body).toMatchObject({ status: 'paused', awaiting_approval_id: approval.id })
    expect((await p.call('POST', `/api/plans/${plan.id}/update`, { json: { action: 'resume' } })).body).toMatchObject({ status: 'active', awaiting_approval_id: null })
    expect((await p.call('POST', `/api/plans/${plan.id}/update`, { json: { action: 'pause' } })).body.status).toBe('paused')
    expect((await p.call('POST', `/api/approvals/${approval.id}/decision`, { json: { approve: false } })).status).toBe(200)
    await done
    expect((await p.call('GET', `/api/plans/${plan.id}`)).body.status).toBe('paused')
  } finally {
    await p.call('POST', `/api/plans/${plan.id}/update`, { json: { action: 'cancel' } })
  }
})

describe('who may answer', () => {
  test('the person whose turn it is; an admin where the rule says so; nobody else, and no other company', async () => {
    const person = await p.createUser({ role: 'member' })
    const colleague = await p.createUser({ role: 'member' })
    const { done, approval } = await waitingTurn(CREATE('Member plan'), person)
    // A colleague cannot even see it; the list shows a member only their own.
    expectProblem(await p.call('POST', `/api/approvals/${approval.id}/decision`, { json: { approve: true }, as: colleague }), 404, 'not_found')
    expect((await p.call('GET', '/api/approvals', { as: colleague })).body.data.map((a: { id: string }) => a.id)).not.toContain(approval.id)
    const otherCompany = await p.createCompany()
    const stranger = await p.createUser({ companyId: otherCompany, role: 'owner' })
    expectProblem(await p.call('POST', `/api/approvals/${approval.id}/decision`, { json: { approve: true }, as: stranger }), 404, 'not_found')
    expectProblem(await p.call('POST', `/api/approvals/${approval.id}/decision`, { json: { approve: true }, as: null }), 401, 'unauthorized')
    expectProblem(await p.call('POST', `/api/approvals/${approval.id}/decision`, { json: { approve: 'yes' } }), 422, 'validation_error')
    expectProblem(await p.call('POST', '/api/approvals/not-an-id/decision', { json: { approve: true } }), 404, 'not_found')
    // The rule lets admins answer: the root admin does, for the member.
    expect((await p.call('POST', `/api/approvals/${approval.id}/decision`, { json: { approve: true } })).status).toBe(200)
    await done
    expect(await planTitles()).toContain('Member plan')
  })

  test('with approvers self, an admin may see the request but not answer it', async () => {
    const person = await p.createUser({ role: 'member' })
    const own = await p.call('POST', '/api/v1/McpPermission', { json: { user_id: person.userId, server: 'mcp-planning', tool: '*', effect: 'approve', approval_timeout_seconds: 60 } })
    expect(own.status).toBe(201)
    const { done, approval } = await waitingTurn(CREATE('Self plan'), person)
    expect(approval.approvers).toBe('self')
    expectProblem(await p.call('POST', `/api/approvals/${approval.id}/decision`, { json: { approve: true } }), 403, 'forbidden')
    expect((await p.call('POST', `/api/approvals/${approval.id}/decision`, { json: { approve: false }, as: person })).status).toBe(200)
    await done
  })
})

test('nobody answering in time is a no, and the agent is told so', async () => {
  const person = await p.createUser({ role: 'member' })
  expect((await p.call('POST', '/api/v1/McpPermission', { json: { user_id: person.userId, server: 'mcp-planning', tool: '*', effect: 'approve', approval_timeout_seconds: 10 } })).status).toBe(201)
  const { done } = await waitingTurn(CREATE('Late plan'), person)
  const events = await done
  expect(events.find((e) => e.type === 'tool_result')!.result).toBe('Nobody answered the request to call mcp-planning/plan_create within 10 seconds, so it was not made. Carry on without it, or ask again later.')
  expect(await planTitles()).not.toContain('Late plan')
}, 30_000)

test('a background task of a tool behind a yes asks the same way before the tool starts; outside a conversation it is refused, saying why', async () => {
  const call = JSON.stringify({ tool: 'mcp-planning__plan_create', arguments: { title: 'Background plan', tasks: [{ title: 'later' }] } })
  const { done, approval } = await waitingTurn(`/tool mcp-tasks__async_run_tool ${call}`)
  // The task itself was started: the turn ends, the tool waits for the answer.
  const events = await done
  expect(events.find((e) => e.type === 'tool_result')!.result).toContain('running')
  expect(await planTitles()).not.toContain('Background plan')
  expect((await p.call('POST', `/api/approvals/${approval.id}/decision`, { json: { approve: true } })).status).toBe(200)
  await until(async () => (await planTitles()).includes('Background plan'), { what: 'the task’s tool to run once approved' })

  const direct = expectProblem(await p.call('POST', '/api/tasks', { json: { tool: 'mcp-planning__plan_create', arguments: { title: 'x', tasks: [{ title: 'y' }] } } }), 403, 'forbidden')
  expect(direct.detail).toContain('needs a person’s approval before each call, which a task started outside a conversation cannot ask for')
})

test('the console’s Tool approvals page lists what waits, answers it through the API, and says when it was answered already', async () => {
  const cookie = await consoleCookie(p, 'admin', ADMIN_PASSWORD)
  const page = async (path: string, post?: Record<string, string>) => {
    const headers: Record<string, string> = { cookie, origin: CONSOLE_ORIGIN, 'hx-request': 'true', 'hx-request-type': 'partial', ...(post ? { 'content-type': 'application/x-www-form-urlencoded' } : {}) }
    const response = await p.admin.request(path, { method: post ? 'POST' : 'GET', headers, body: post ? new URLSearchParams(post) : undefined })
    return { status: response.status, text: await response.text() }
  }
  const { done, approval } = await waitingTurn(CREATE('Console plan'))
  const listed = await page('/approvals')
  expect(listed.text).toContain(`<tr id="approval-${approval.id}">`)
  expect(listed.text).toContain(`action="/approvals/${approval.id}"`)
  const answered = await page(`/approvals/${approval.id}`, { approve: 'yes' })
  expect(answered.status).toBe(200)
  expect(answered.text).toContain('Approved: mcp-planning/plan_create.')
  await done
  expect(await planTitles()).toContain('Console plan')
  const again = await page(`/approvals/${approval.id}`, { approve: 'no' })
  expect(again.status).toBe(409)
  expect(again.text).toMatch(/already answered: approved by /)
  // Past requests, with how each ended; nothing left to answer on them.
  const past = await page('/approvals?status=approved')
  expect(past.text).toContain(`<tr id="approval-${approval.id}">`)
  expect(past.text).not.toContain(`action="/approvals/${approval.id}"`)
})

test('a request past its time is a no even when no process closed it (the one that waited is gone)', async () => {
  const id = Bun.randomUUIDv7()
  await p.store.db
    .insertInto('tool_approvals')
    .values({ id, company_id: p.root.companyId!, conversation_id: null, agent_id: agent, user_id: p.root.userId, server: 'mcp-planning', tool: 'plan_create', rule: 'a rule', approvers: 'self', expires_at: new Date(Date.now() - 1000) })
    .execute()
  const late = expectProblem(await p.call('POST', `/api/approvals/${id}/decision`, { json: { approve: true } }), 409, 'conflict')
  expect(late.detail).toContain('already answered: expired')
  expect((await p.store.db.selectFrom('tool_approvals').select('status').where('id', '=', id).executeTakeFirstOrThrow()).status).toBe('expired')
})

test('an approve rule is a rule like the others: specificity, then deny over approve over allow', async () => {
  const { toolVerdict } = await import('../../src/mcp/permissions.ts')
  const rule = (tool: string, effect: 'allow' | 'deny' | 'approve', server = 'files') => ({ user_id: null, server, tool, effect })
  expect(toolVerdict([rule('*', 'allow'), rule('delete_*', 'approve')], 'u', 'files', 'delete_all').decision).toBe('approve')
  expect(toolVerdict([rule('*', 'allow'), rule('delete_*', 'approve')], 'u', 'files', 'read').decision).toBe('allow')
  expect(toolVerdict([rule('delete_all', 'approve'), rule('delete_all', 'allow')], 'u', 'files', 'delete_all').decision).toBe('approve')
  expect(toolVerdict([rule('delete_all', 'approve'), rule('delete_all', 'deny')], 'u', 'files', 'delete_all').decision).toBe('deny')
  expect(toolVerdict([rule('*', 'approve', '*'), rule('read', 'allow')], 'u', 'files', 'read').decision).toBe('allow')
  expect(maskSecrets({ user: 'ada', Password: 'x', nested: [{ access_token: 'y', note: 'z' }] })).toEqual({ user: 'ada', Password: '•••• (hidden)', nested: [{ access_token: '•••• (hidden)', note: 'z' }] })
})
