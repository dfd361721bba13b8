import { afterEach, expect, test } from 'bun:test'
import type { Store } from '../../src/db/connect.ts'
import { freshStore, TEST_DATABASE_URL } from '../helpers/database.ts'
import { until } from '../helpers/until.ts'
import { bootOn, finish, messagesOf, request, rootWithAgent, started, stopped, taskIdIn, toolTurn, type Booted } from './helpers.ts'

// A restart in the middle of a task: the platform is closed and started again on the same store. Nothing is lost
// silently: the task ends interrupted, and its conversation is told.
const cleanup: Array<() => Promise<void>> = []
afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step()
})

async function storeForTest(): Promise<Store> {
  const store = await freshStore()
  cleanup.push(() => store.close())
  return store
}

async function boot(store: Store): Promise<Booted> {
  const platform = await bootOn(store)
  let closed = false
  cleanup.push(async () => {
    if (!closed) await platform.stop()
  })
  return {
    ...platform,
    async stop() {
      closed = true
      await platform.stop()
    },
  }
}

const INTERRUPTED = 'was interrupted. The server running it stopped before the tool finished (a restart, a deployment or a crash), so its result is lost. Start it again if it is still needed.'

async function startSlowTask(platform: Booted, store: Store) {
  const root = await rootWithAgent(store, platform)
  const job = `restart-${crypto.randomUUID().slice(0, 8)}`
  const { result, conversation } = await toolTurn(platform, root.token, { agent_id: root.agentId, text: `/tool mcp-tasks__async_run_tool {"tool":"slow__wait","arguments":{"key":"${job}"}}` })
  await until(() => started.has(job), { what: 'the slow tool to start' })
  return { root, job, conversation, task: taskIdIn(result) }
}

test('a restart in the middle marks the task interrupted, tells the conversation, and stops the tool', async () => {
  const store = await storeForTest()
  const first = await boot(store)
  const { root, job, conversation, task } = await startSlowTask(first, store)
  await first.stop()

  // The stopping server settled it: nothing is left looking as if it still ran.
  await until(() => stopped.has(job), { what: 'the tool to be stopped' })
  const second = await boot(store)
  const read = await request(second, root.token, 'GET', `/api/v1/BackgroundTask/${task}`)
  expect(read.body).toMatchObject({ status: 'interrupted', result: null, error: expect.stringContaining('stopped before the tool finished') })
  expect(read.body.finished_at).not.toBeNull()
  const told = (await messagesOf(store.db, conversation)).filter((m) => m.text.startsWith(`Background task ${task}`))
  expect(told).toEqual([{ role: 'agent', text: `Background task ${task} (slow__wait) ${INTERRUPTED}`, agent_id: root.agentId, status: 'complete' }])
  // The conversation goes on after the restart, with the notice in its history.
  const next = await toolTurn(second, root.token, { conversation_id: conversation, text: `/tool mcp-tasks__async_task_status {"task_id":"${task}"}` })
  expect(JSON.parse(next.result)).toMatchObject({ status: 'interrupted' })
})

const embeddedOnly = TEST_DATABASE_URL ? test.skip : test

embeddedOnly('after a crash, the embedded store’s next boot marks what was running interrupted; a late answer changes nothing', async () => {
  const store = await storeForTest()
  const crashed = await boot(store)
  const { root, job, conversation, task } = await startSlowTask(crashed, store)
  // The first run never closes (as after a crash); the next boot on the store finds the task still running.
  const next = await boot(store)
  const read = await request(next, root.token, 'GET', `/api/v1/BackgroundTask/${task}`)
  expect(read.body).toMatchObject({ status: 'interrupted' })
  expect((await messagesOf(store.db, conversation)).map((m) => m.text)).toContain(`Background task ${task} (slow__wait) ${INTERRUPTED}`)

  // Whatever the lost run still does cannot revive it: its answer is not stored, nor told.
  finish(job, 'too late')
  await crashed.stop()
  expect((await request(next, root.token, 'GET', `/api/v1/BackgroundTask/${task}`)).body).toMatchObject({ status: 'interrupted', result: null })
  expect((await messagesOf(store.db, conversation)).filter((m) => m.text.startsWith(`Background task ${task}`))).toHaveLength(1)
})
