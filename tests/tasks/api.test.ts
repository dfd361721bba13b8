import { afterAll, beforeAll, expect, test } from 'bun:test'
import { startMcpPlatform, type McpTestPlatform } from '../helpers/mcp.ts'
import type { Principal } from '../helpers/platform.ts'
import { expectProblem } from '../helpers/problem.ts'
import { until } from '../helpers/until.ts'
import { finish, SLOW_PLUGINS, started, stopped } from './helpers.ts'

// Background tasks for scripts: POST /api/tasks starts one with the caller's own MCP permissions, the generic API
// reads it (its owner only), POST /api/tasks/cancel stops it.
let p: McpTestPlatform
let member: Principal

beforeAll(async () => {
  p = await startMcpPlatform({ env: { SWITCHBOARD_PLUGIN_PATHS: SLOW_PLUGINS }, rules: [{ server: '*', tool: '*', effect: 'allow' }] })
  member = await p.createUser()
})
afterAll(() => p.close())

const key = () => `api-${crypto.randomUUID().slice(0, 8)}`
const start = (json: unknown, as: Principal | null = member) => p.call('POST', '/api/tasks', { json, as })
const cancel = (taskId: string, as: Principal = member) => p.call('POST', '/api/tasks/cancel', { json: { task_id: taskId }, as })

test('a script starts a task, follows it through the generic API, and reads its result', async () => {
  const job = key()
  const reply = await start({ tool: 'slow__wait', arguments: { key: job } })
  expect(reply.status).toBe(202)
  expect(reply.headers.get('location')).toBe(`/api/v1/BackgroundTask/${reply.body.id}`)
  expect(reply.body).toMatchObject({ user_id: member.userId, company_id: member.companyId, tool: 'slow__wait', arguments: { key: job }, status: 'running', result: null, conversation_id: null })
  await until(() => started.has(job), { what: 'the tool to start' })
  finish(job, 'all rows copied')
  const done = await until(async () => {
    const read = await p.call('GET', `/api/v1/BackgroundTask/${reply.body.id}`, { as: member })
    return read.body.status === 'completed' ? read.body : undefined
  }, { what: 'the task to complete' })
  expect(done).toMatchObject({ result: 'all rows copied', result_truncated: false, error: null })
  expect(done.finished_at).toMatch(/^\d{4}-\d\d-\d\dT/)
})

test('cancel stops the running tool; a second cancel changes nothing; a running task cannot be deleted, an ended one can', async () => {
  const job = key()
  const { body: task } = await start({ tool: 'slow__wait', arguments: { key: job } })
  await until(() => started.has(job), { what: 'the tool to start' })
  expectProblem(await p.call('DELETE', `/api/v1/BackgroundTask/${task.id}`, { as: member }), 409, 'conflict')
  const cancelled = await cancel(task.id)
  expect(cancelled.status).toBe(200)
  expect(cancelled.body).toMatchObject({ cancelled: true, task: { id: task.id, status: 'cancelled' } })
  await until(() => stopped.has(job), { what: 'the tool to be stopped' })
  expect((await cancel(task.id)).body).toMatchObject({ cancelled: false, task: { status: 'cancelled' } })
  expect((await p.call('DELETE', `/api/v1/BackgroundTask/${task.id}`, { as: member })).status).toBe(204)
})

test('people see and cancel only their own tasks: anyone else, in the company or not, gets 404', async () => {
  const job = key()
  const { body: task } = await start({ tool: 'slow__wait', arguments: { key: job } })
  const colleague = await p.createUser()
  const admin = await p.createUser({ role: 'owner' })
  const stranger = await p.createUser({ companyId: await p.createCompany(), role: 'owner' })
  for (const who of [colleague, admin, stranger]) {
    expectProblem(await p.call('GET', `/api/v1/BackgroundTask/${task.id}`, { as: who }), 404, 'not_found')
    expectProblem(await cancel(task.id, who), 404, 'not_found')
    expect((await p.call('GET', '/api/v1/BackgroundTask', { as: who })).body.data).toEqual([])
  }
  expectProblem(await cancel('01936f3e-6d2a-7c41-9b1e-000000000000'), 404, 'not_found')
  expect((await p.call('GET', `/api/v1/BackgroundTask/${task.id}`, { as: member })).body.status).toBe('running')
  finish(job, 'done')
})

test('refusals: no credentials 401, a denied tool 403, bad bodies 422, and the generic create 405', async () => {
  expectProblem(await start({ tool: 'slow__wait' }, null), 401, 'unauthorized')
  expectProblem(await p.call('POST', '/api/tasks/cancel', { json: { task_id: '01936f3e-6d2a-7c41-9b1e-000000000000' }, as: null }), 401, 'unauthorized')
  const barred = await p.createUser()
  await p.call('POST', '/api/v1/McpPermission', { json: { user_id: barred.userId, server: 'slow', tool: '*', effect: 'deny' } })
  const denied = expectProblem(await start({ tool: 'slow__wait', arguments: { key: 'x' } }, barred), 403, 'forbidden')
  expect(denied.detail).toBe('You may not use the tool wait on slow.')
  expectProblem(await start({ arguments: {} }), 422, 'validation_error')
  expectProblem(await start({ tool: 'slow__wait', extra: true }), 422, 'validation_error')
  expectProblem(await start({ tool: 'slow__wait', arguments: [1] }), 422, 'validation_error')
  expect(expectProblem(await start({ tool: 'mcp-tasks__async_task_status', arguments: {} }), 422, 'validation_error').detail).toBe('async_task_status cannot itself run in the background.')
  expectProblem(await p.call('POST', '/api/tasks/cancel', { json: { task_id: 'nope' }, as: member }), 422, 'validation_error')
  expectProblem(await p.call('POST', '/api/v1/BackgroundTask', { json: {}, as: member }), 405, 'method_not_allowed')
  // A user of no company has no tools to run.
  const loner = await p.createUser({ companyId: null })
  expectProblem(await start({ tool: 'slow__wait' }, loner), 403, 'forbidden')
})

test('over the limit per person (3 by default) a start answers 409 naming it', async () => {
  const busy = await p.createUser()
  const jobs = [key(), key(), key()]
  const ids: string[] = []
  for (const job of jobs) ids.push((await start({ tool: 'slow__wait', arguments: { key: job } }, busy)).body.id)
  const refused = expectProblem(await start({ tool: 'slow__wait', arguments: { key: key() } }, busy), 409, 'conflict')
  expect(refused.detail).toBe('You already have 3 background tasks running, and 3 at once is the limit per person: wait for one to finish, or cancel one.')
  // Starting several at once cannot slip past it either.
  await cancel(ids[0]!, busy)
  const together = await Promise.all([key(), key(), key()].map((job) => start({ tool: 'slow__wait', arguments: { key: job } }, busy)))
  expect(together.map((r) => r.status).sort()).toEqual([202, 409, 409])
  const running = await p.call('GET', '/api/v1/BackgroundTask?status=eq.running&count=exact', { as: busy })
  expect(running.body.count).toBe(3)
  for (const task of running.body.data) await cancel(task.id, busy)
})

test('a task started in the caller’s transaction runs only once that commits, and never when it rolls back', async () => {
  const actor = { userId: member.userId, companyId: member.companyId, role: 'member' as const, isSuperadmin: false }
  const user = { userId: member.userId, companyId: member.companyId }
  const [undone, kept] = [key(), key()]
  let undoneId = ''
  await expect(
    p.services.writes.transaction(actor, async (scope) => {
      undoneId = (await p.services.tasks.run({ user, tool: 'slow__wait', arguments: { key: undone } }, scope)).id
      throw new Error('the caller failed')
    }),
  ).rejects.toThrow('the caller failed')
  expect(await p.store.db.selectFrom('background_tasks').select('id').where('id', '=', undoneId).executeTakeFirst()).toBeUndefined()

  const task = await p.services.writes.transaction(actor, async (scope) => {
    const running = await p.services.tasks.run({ user, tool: 'slow__wait', arguments: { key: kept } }, scope)
    // Written, not committed: the tool has not been started.
    expect(started.has(kept)).toBe(false)
    return running
  })
  await until(() => started.has(kept), { what: 'the tool to start once the caller committed' })
  finish(kept, 'done')
  await until(async () => (await p.call('GET', `/api/v1/BackgroundTask/${task.id}`, { as: member })).body.status === 'completed', { what: 'the task to complete' })
  // The rolled-back one never ran: its key was never seen by the tool.
  expect(started.has(undone)).toBe(false)
})
