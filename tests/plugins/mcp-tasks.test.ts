import { afterAll, beforeAll, expect, test } from 'bun:test'
import { history } from '../../src/chat/messages.ts'
import type { Events } from '../../src/events/bus.ts'
import { connectMcp, EVERYTHING_STDIO, startMcpPlatform, type McpTestPlatform } from '../helpers/mcp.ts'
import type { Principal } from '../helpers/platform.ts'
import { until } from '../helpers/until.ts'
import { finish, messagesOf, SLOW_PLUGINS, started, stopped, taskIdIn, toolTurn, turn } from '../tasks/helpers.ts'

// Background tasks as an agent uses them: the echo runner's `/tool` asks for mcp-tasks' tools in a chat turn, the
// task outlives the turn, and its outcome arrives in the conversation; MCP hosts use the same tools at /mcp.
let p: McpTestPlatform
let agentId: string
const feed: Array<Events['chat.event']> = []

beforeAll(async () => {
  p = await startMcpPlatform({
    env: { SWITCHBOARD_PLUGIN_PATHS: SLOW_PLUGINS, SWITCHBOARD_TASKS_PER_USER: '2' },
    servers: [EVERYTHING_STDIO],
    rules: [{ server: '*', tool: '*', effect: 'allow' }],
  })
  const agent = await p.call('POST', '/api/v1/AgentConfigRecord', { json: { name: 'batcher', runner: 'echo', plugins: { enabled: ['mcp-tasks', 'slow'] } } })
  expect(agent.status).toBe(201)
  agentId = agent.body.id
  p.services.events.subscribe('chat.event', (payload) => void feed.push(payload))
})
afterAll(() => p.close())

const key = () => `job-${crypto.randomUUID().slice(0, 8)}`

/** Asks for a tool in a turn, in `conversation` when given, as `as`. */
function ask(command: string, options: { as?: Principal; conversation?: string } = {}) {
  const json = options.conversation ? { conversation_id: options.conversation, text: `/tool ${command}` } : { agent_id: agentId, text: `/tool ${command}` }
  return toolTurn(p, (options.as ?? p.root).token, json)
}

async function runInBackground(tool: string, args: Record<string, unknown>, options: { as?: Principal; conversation?: string } = {}) {
  const started = await ask(`mcp-tasks__async_run_tool ${JSON.stringify({ tool, arguments: args })}`, options)
  return { ...started, task: taskIdIn(started.result) }
}

async function status(task: string, as: Principal = p.root) {
  const { result } = await ask(`mcp-tasks__async_task_status {"task_id":"${task}"}`, { as })
  return JSON.parse(result)
}

test('a slow tool runs while the conversation goes on; its result arrives in the conversation, for people and the model', async () => {
  const job = key()
  const { result, conversation, task, events } = await runInBackground('slow__wait', { key: job })
  expect(result).toBe(`Started background task ${task} running slow__wait. Its result will be posted in this conversation when it is done. Ask async_task_status with task_id ${task} to follow it.`)
  // The turn that started it is over, with the tool still running.
  expect(events.at(-1)).toMatchObject({ type: 'message', text: `The tool answered: ${result}` })
  await until(() => started.has(job), { what: 'the slow tool to start' })

  // The conversation goes on: another turn completes meanwhile, and the task says it is running.
  const meanwhile = await turn(p, p.root.token, { conversation_id: conversation, text: 'Anything else while we wait?' })
  expect(meanwhile.at(-1)).toMatchObject({ type: 'message', text: 'Echo: Anything else while we wait?' })
  expect(await status(task)).toMatchObject({ task_id: task, tool: 'slow__wait', status: 'running', result: null, finished_at: null })

  expect(finish(job, 'processed 1200 rows')).toBe(true)
  const notice = `Background task ${task} (slow__wait) completed:\n\nprocessed 1200 rows`
  const told = await until(async () => (await messagesOf(p.store.db, conversation)).find((m) => m.text === notice), { what: 'the result in the conversation' })
  expect(told).toEqual({ role: 'agent', text: notice, agent_id: agentId, status: 'complete' })
  // Open web chats were sent it, in the agent's name.
  expect(feed.find((f) => f.conversation_id === conversation && f.event.type === 'message' && f.event.text === notice)?.event).toMatchObject({ type: 'message', agent: 'batcher' })
  // The model reads it in later turns.
  expect((await history(p.store.db, conversation)).at(-1)).toEqual({ role: 'assistant', content: notice })
  expect(await status(task)).toMatchObject({ status: 'completed', result: 'processed 1200 rows', error: null })
})

test('a long result is kept up to 100,000 characters, and the conversation gets the first 4,000, saying it is cut', async () => {
  const job = key()
  const { task, conversation } = await runInBackground('slow__wait', { key: job })
  await until(() => started.has(job), { what: 'the slow tool to start' })
  finish(job, 'r'.repeat(150_000))
  const told = await until(async () => (await messagesOf(p.store.db, conversation)).find((m) => m.text.startsWith(`Background task ${task} (slow__wait) completed`)), {
    what: 'the result in the conversation',
  })
  expect(told.text).toBe(
    `Background task ${task} (slow__wait) completed:\n\n${'r'.repeat(4_000)}\n\n[The result is cut here (and was cut when stored, too): async_task_status shows what the task kept.]`,
  )
  const record = await p.call('GET', `/api/v1/BackgroundTask/${task}`)
  expect(record.body.result).toHaveLength(100_000)
  expect(record.body.result_truncated).toBe(true)
  expect((await status(task)).result_truncated).toBe(true)
})

test('progress notifications of an upstream tool are kept, and the result stored', async () => {
  const { task, conversation } = await runInBackground('everything__trigger-long-running-operation', { duration: 3, steps: 3 })
  const midway = await until(
    async () => {
      const now = await status(task)
      return now.status === 'running' && now.progress?.progress >= 1 ? now : undefined
    },
    { what: 'progress while the tool runs', timeoutMs: 10_000 },
  )
  expect(midway.progress).toMatchObject({ total: 3 })
  const done = await until(async () => ((await status(task)).status === 'completed' ? status(task) : undefined), { what: 'the long operation to finish', timeoutMs: 15_000 })
  expect(done).toMatchObject({ progress: { total: 3 }, result: 'Long running operation completed. Duration: 3 seconds, Steps: 3.' })
  // The MCP client drops a progress notification that arrives together with the result, so the last step may not
  // be seen; what was seen is kept.
  expect(done.progress.progress).toBeGreaterThanOrEqual(midway.progress.progress)
  await until(async () => (await messagesOf(p.store.db, conversation)).some((m) => m.text.startsWith(`Background task ${task} (everything__trigger-long-running-operation) completed`)), {
    what: 'the result in the conversation',
  })
})

test('a tool that fails ends the task failed, and the conversation is told why', async () => {
  const { task, conversation } = await runInBackground('slow__fail', {})
  const notice = `Background task ${task} (slow__fail) failed: the batch source is unreachable`
  await until(async () => (await messagesOf(p.store.db, conversation)).some((m) => m.text === notice), { what: 'the failure in the conversation' })
  expect(await status(task)).toMatchObject({ status: 'failed', error: 'the batch source is unreachable', result: null })
})

test('each person may have two tasks running here; a third is refused naming the limit, others are not held back', async () => {
  const someone = await p.createUser()
  const jobs = [key(), key()]
  const tasks = [] as string[]
  for (const job of jobs) tasks.push((await runInBackground('slow__wait', { key: job }, { as: someone })).task)
  const third = await ask(`mcp-tasks__async_run_tool ${JSON.stringify({ tool: 'slow__wait', arguments: { key: key() } })}`, { as: someone })
  expect(third.result).toBe('Error: You already have 2 background tasks running, and 2 at once is the limit per person: wait for one to finish, or cancel one.')
  // Someone else's count is their own.
  const other = await p.createUser()
  const theirs = await runInBackground('slow__wait', { key: key() }, { as: other })
  expect((await status(theirs.task, other)).status).toBe('running')

  // Once one ends, there is room again.
  finish(jobs[0]!, 'done')
  await until(async () => (await status(tasks[0]!, someone)).status === 'completed', { what: 'the first task to end' })
  const fourth = await runInBackground('slow__wait', { key: key() }, { as: someone })
  expect((await status(fourth.task, someone)).status).toBe('running')
  await ask(`mcp-tasks__async_task_cancel {"task_id":"${fourth.task}"}`, { as: someone })
  await ask(`mcp-tasks__async_task_cancel {"task_id":"${tasks[1]}"}`, { as: someone })
  await ask(`mcp-tasks__async_task_cancel {"task_id":"${theirs.task}"}`, { as: other })
})

test('cancel stops the tool itself, says so in the conversation, and a late answer changes nothing', async () => {
  const job = key()
  const { task, conversation } = await runInBackground('slow__wait', { key: job })
  await until(() => started.has(job), { what: 'the slow tool to start' })
  const cancel = await ask(`mcp-tasks__async_task_cancel {"task_id":"${task}"}`, { conversation })
  expect(cancel.result).toBe(`Background task ${task} is cancelled.`)
  await until(() => stopped.has(job), { what: 'the tool to be stopped by its signal' })
  expect(await status(task)).toMatchObject({ status: 'cancelled', result: null })
  expect((await messagesOf(p.store.db, conversation)).filter((m) => m.text.startsWith(`Background task ${task}`)).map((m) => m.text)).toEqual([`Background task ${task} (slow__wait) was cancelled.`])

  const again = await ask(`mcp-tasks__async_task_cancel {"task_id":"${task}"}`, { conversation })
  expect(again.result).toBe(`Background task ${task} had already ended (cancelled); nothing to cancel.`)
  // The tool is no longer waiting for an answer; nothing can complete the task now.
  expect(finish(job, 'too late')).toBe(false)
  expect((await status(task)).status).toBe('cancelled')
})

test('a tool the person may not use is refused, as are the task tools themselves and names that are not server__tool', async () => {
  const barred = await p.createUser()
  expect((await p.call('POST', '/api/v1/McpPermission', { json: { user_id: barred.userId, server: 'slow', tool: 'wait', effect: 'deny' } })).status).toBe(201)
  const before = await p.store.db.selectFrom('background_tasks').select((eb) => eb.fn.countAll<number>().as('n')).where('user_id', '=', barred.userId).executeTakeFirstOrThrow()
  const refused = await ask(`mcp-tasks__async_run_tool {"tool":"slow__wait","arguments":{"key":"x"}}`, { as: barred })
  expect(refused.result).toBe('Error: You may not use the tool wait on slow.')
  // A server nobody has sounds the same: its existence is not the person's to learn.
  expect((await ask(`mcp-tasks__async_run_tool {"tool":"nowhere__thing"}`, { as: barred })).result).toBe('Error: You may not use the tool thing on nowhere.')
  expect((await ask(`mcp-tasks__async_run_tool {"tool":"mcp-tasks__async_run_tool","arguments":{"tool":"slow__wait"}}`)).result).toBe(
    'Error: mcp-tasks__async_run_tool cannot itself run in the background.',
  )
  expect((await ask(`mcp-tasks__async_run_tool {"tool":"wait"}`)).result).toBe('Error: Name the tool as server__tool.')
  expect((await ask(`mcp-tasks__async_run_tool {"tool":"slow__wait","arguments":[1]}`)).result).toBe('Error: The input is not valid: arguments: must be an object.')
  const after = await p.store.db.selectFrom('background_tasks').select((eb) => eb.fn.countAll<number>().as('n')).where('user_id', '=', barred.userId).executeTakeFirstOrThrow()
  expect(Number(after.n)).toBe(Number(before.n))
})

test('in a chat turn a task runs only the agent’s own tools: one the person may use elsewhere is refused before it starts', async () => {
  // The agent offers its task tools and no other: the everything server, and slow's `fail`, are not its to call.
  const narrow = await p.call('POST', '/api/v1/AgentConfigRecord', {
    json: { name: 'narrow', runner: 'echo', plugins: { enabled: ['mcp-tasks', 'slow'] }, mcp_permissions: { servers: { 'mcp-tasks': {}, slow: { deny: ['fail'] } } } },
  })
  expect(narrow.status).toBe(201)
  const before = await p.store.db.selectFrom('background_tasks').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()
  for (const [tool, server, name] of [['everything__echo', 'everything', 'echo'], ['slow__fail', 'slow', 'fail']]) {
    const { result } = await toolTurn(p, p.root.token, { agent_id: narrow.body.id, text: `/tool mcp-tasks__async_run_tool ${JSON.stringify({ tool, arguments: { message: 'x' } })}` })
    expect(result).toBe(`Error: You may not use the tool ${name} on ${server}.`)
  }
  const after = await p.store.db.selectFrom('background_tasks').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()
  expect(Number(after.n)).toBe(Number(before.n))
})

test('another person’s task id is not found, in the same company or another', async () => {
  const job = key()
  const { task } = await runInBackground('slow__wait', { key: job })
  const colleague = await p.createUser()
  const stranger = await p.createUser({ companyId: await p.createCompany() })
  // The stranger's company lets its people use every tool, so only the task's owner stands in the way.
  expect((await p.call('POST', '/api/v1/McpPermission', { json: { server: '*', tool: '*', effect: 'allow' }, headers: { 'x-switchboard-company': stranger.companyId! } })).status).toBe(201)
  expect((await ask(`mcp-tasks__async_task_status {"task_id":"${task}"}`, { as: colleague })).result).toBe(`Error: No BackgroundTask with id ${task}.`)
  expect((await ask(`mcp-tasks__async_task_cancel {"task_id":"${task}"}`, { as: colleague })).result).toBe(`Error: No BackgroundTask with id ${task}.`)
  // Through the gateway, as someone of another company.
  const client = await connectMcp(p.base, stranger, 'mcp-tasks')
  try {
    expect(await client.callTool({ name: 'async_task_status', arguments: { task_id: task } })).toMatchObject({ isError: true, content: [{ text: `No BackgroundTask with id ${task}.` }] })
    expect(await client.callTool({ name: 'async_task_cancel', arguments: { task_id: task } })).toMatchObject({ isError: true, content: [{ text: `No BackgroundTask with id ${task}.` }] })
    expect(await client.callTool({ name: 'async_task_status', arguments: { task_id: 'not-an-id' } })).toMatchObject({ isError: true, content: [{ text: 'No BackgroundTask with id not-an-id.' }] })
  } finally {
    await client.close()
  }
  expect((await status(task)).status).toBe('running')
  finish(job, 'mine')
})

test('MCP hosts run tasks through the gateway with the person’s own permissions; there is no conversation to tell', async () => {
  const client = await connectMcp(p.base, p.root, 'mcp-tasks')
  try {
    expect((await client.listTools()).tools.map((t) => t.name).sort()).toEqual(['async_run_tool', 'async_task_cancel', 'async_task_status'])
    const started = await client.callTool({ name: 'async_run_tool', arguments: { tool: 'everything__echo', arguments: { message: 'via the gateway' } } })
    const text = (started.content as Array<{ text: string }>)[0]!.text
    const task = taskIdIn(text)
    expect(text).toBe(`Started background task ${task} running everything__echo. Ask async_task_status with task_id ${task} to follow it.`)
    const done = await until(
      async () => {
        const reply = await client.callTool({ name: 'async_task_status', arguments: { task_id: task } })
        const now = JSON.parse((reply.content as Array<{ text: string }>)[0]!.text)
        return now.status === 'completed' ? now : undefined
      },
      { what: 'the task to complete' },
    )
    expect(done).toMatchObject({ result: 'Echo: via the gateway', error: null })
    const record = await p.call('GET', `/api/v1/BackgroundTask/${task}`)
    expect(record.body).toMatchObject({ conversation_id: null, agent_id: null, user_id: p.root.userId, arguments: { message: 'via the gateway' } })
  } finally {
    await client.close()
  }
})
