import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { chatTurn } from '../helpers/chat.ts'
import { CLUSTER_NEEDS_POSTGRES, startCluster } from '../helpers/cluster.ts'
import { TEST_DATABASE_URL } from '../helpers/database.ts'
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts'
import { until } from '../helpers/until.ts'

/**
 * Auto-continuation with the echo agent, which answers every continuation and never moves a task: so each of its
 * turns ends whole and another continuation follows, until the limit or a pause stops them.
 */
let p: TestPlatform
let agent: string

beforeAll(async () => {
  p = await startTestPlatform({ SWITCHBOARD_PLAN_CONTINUATION_DELAY_MS: '20' })
  agent = (await p.call('POST', '/api/v1/AgentConfigRecord', { json: { name: 'worker', runner: 'echo', model: 'echo-1' } })).body.id
})
afterAll(() => p.close())

/** A conversation with the agent and a draft plan in it. */
async function planned(): Promise<{ conversation: string; plan: string }> {
  const events = await chatTurn(p, { agent_id: agent, text: 'Let us plan.' })
  const conversation = events[0]!.conversation_id
  const created = await p.call('POST', '/api/plans', { json: { conversation_id: conversation, title: 'Long job', tasks: [{ title: 'Step one' }, { title: 'Step two' }] } })
  expect(created.status).toBe(201)
  return { conversation, plan: created.body.id }
}

const continuations = async (conversation: string) =>
  (await p.call('GET', `/api/v1/WebchatMessage?conversation_id=eq.${conversation}&role=eq.system&order=id&limit=100`)).body.data.map((m: { text: string }) => m.text)
const planOf = async (plan: string) => (await p.call('GET', `/api/plans/${plan}`)).body
const settled = (conversation: string) => p.services.chat.abort({ userId: p.root.userId, companyId: p.root.companyId, role: 'owner', isSuperadmin: true }, conversation).then((running) => !running)

describe('auto-continuation', () => {
  test('sends continuation messages while the plan is active, and pauses it after 20', async () => {
    const { conversation, plan } = await planned()
    const executed = await p.call('POST', `/api/plans/${plan}/update`, { json: { action: 'execute' } })
    expect(executed.body).toMatchObject({ status: 'active', continuations: 0 })
    const paused = await until(async () => ((await planOf(plan)).status === 'paused' ? planOf(plan) : undefined), { what: 'the plan to pause at the limit', timeoutMs: 20_000 })
    expect(paused.continuations).toBe(20)
    const sent = await continuations(conversation)
    const messages = sent.filter((t: string) => t.startsWith('Continue with the plan'))
    expect(messages.length).toBe(20)
    expect(messages[0]).toContain('(continuation 1 of 20). Next is task 1 ("Step one"): mark it in_progress with plan_task_update')
    expect(messages[0]).toContain('1. [pending] Step one')
    expect(messages[19]).toContain('(continuation 20 of 20)')
    expect(sent.at(-1)).toBe('The plan "Long job" was paused after 20 continuation messages; resume it to let the agent go on.')
    // The agent answered each one (the model read it as the user's turn).
    const answers = (await p.call('GET', `/api/v1/WebchatMessage?conversation_id=eq.${conversation}&role=eq.agent&limit=100`)).body.data
    expect(answers.filter((m: { text: string }) => m.text.startsWith('Echo: Continue with the plan')).length).toBe(20)

    // Resuming starts a new execution with its own 20.
    const resumed = await p.call('POST', `/api/plans/${plan}/update`, { json: { action: 'resume' } })
    expect(resumed.body).toMatchObject({ status: 'active', continuations: 0 })
    await until(async () => (await planOf(plan)).continuations >= 1, { what: 'a continuation after resuming' })
    await p.call('POST', `/api/plans/${plan}/update`, { json: { action: 'cancel' } })
    await until(() => settled(conversation), { what: 'the last turn to end' })
  })

  test('each continuation counted is announced, so the plan panel’s count keeps up on every page', async () => {
    const { conversation, plan } = await planned()
    const counted: number[] = []
    const stop = p.services.writes.on((write) => {
      if (write.type === 'plan' && write.plan.id === plan && write.change === 'plan_updated') counted.push(write.plan.continuations)
    })
    try {
      await p.call('POST', `/api/plans/${plan}/update`, { json: { action: 'execute' } })
      await until(async () => (await planOf(plan)).continuations >= 3, { what: 'three continuations' })
      await p.call('POST', `/api/plans/${plan}/update`, { json: { action: 'pause' } })
      await until(() => settled(conversation), { what: 'the last turn to end' })
      const final = (await planOf(plan)).continuations
      // 0 is the execute; then one announcement per continuation, in order, up to the last; the pause repeats it.
      expect(counted.slice(0, final + 1)).toEqual(Array.from({ length: final + 1 }, (_, i) => i))
    } finally {
      stop()
    }
  })

  test('a pause stops it before the next continuation', async () => {
    const { conversation, plan } = await planned()
    await p.call('POST', `/api/plans/${plan}/update`, { json: { action: 'execute' } })
    await until(async () => (await planOf(plan)).continuations >= 2, { what: 'two continuations' })
    const paused = await p.call('POST', `/api/plans/${plan}/update`, { json: { action: 'pause' } })
    expect(paused.body.status).toBe('paused')
    // Counted only while active, in the same statement that reads the status: none can follow the pause.
    const atPause = paused.body.continuations
    expect(atPause).toBeLessThan(20)
    await until(() => settled(conversation), { what: 'the running turn to end' })
    // Whatever that turn's end set going has happened, or found nothing to do.
    await p.services.continuation.idle()
    expect((await planOf(plan)).continuations).toBe(atPause)
    expect((await continuations(conversation)).filter((t: string) => t.startsWith('Continue with the plan')).length).toBe(atPause)
  })

  test('resumes racing each other start one execution: one wins, and it sends 20 continuations, not more', async () => {
    const { conversation, plan } = await planned()
    await p.call('POST', `/api/plans/${plan}/update`, { json: { action: 'execute' } })
    await until(async () => (await planOf(plan)).continuations >= 2, { what: 'two continuations' })
    const atPause = (await p.call('POST', `/api/plans/${plan}/update`, { json: { action: 'pause' } })).body.continuations
    await until(() => settled(conversation), { what: 'the running turn to end' })
    // A participant and the plan's driver resume at once, many times over.
    const participant = await p.createUser({ companyId: p.root.companyId, role: 'member' })
    expect((await p.call('POST', '/api/v1/WebchatParticipant', { json: { conversation_id: conversation, user_id: participant.userId } })).status).toBe(201)
    const resumes = await Promise.all(Array.from({ length: 8 }, (_, i) => p.call('POST', `/api/plans/${plan}/update`, { as: i % 2 ? participant : p.root, json: { action: 'resume' } })))
    expect(resumes.map((r) => r.status).sort()).toEqual([200, 409, 409, 409, 409, 409, 409, 409])
    const paused = await until(async () => ((await planOf(plan)).status === 'paused' ? planOf(plan) : undefined), { what: 'the plan to pause at the limit', timeoutMs: 20_000 })
    expect(paused.continuations).toBe(20)
    await until(() => settled(conversation), { what: 'the last turn to end' })
    const sent = (await continuations(conversation)).filter((t: string) => t.startsWith('Continue with the plan'))
    expect(sent.length).toBe(atPause + 20)
  })

  test('nothing is sent while the plan is a draft', async () => {
    const { conversation, plan } = await planned()
    await chatTurn(p, { conversation_id: conversation, text: 'more talk' })
    await p.services.continuation.idle()
    expect(await continuations(conversation)).toEqual([])
    expect((await planOf(plan)).continuations).toBe(0)
  })
})

describe('across processes', () => {
  if (!TEST_DATABASE_URL) {
    test.skip(`a pause made on one process stops the continuations another sends (${CLUSTER_NEEDS_POSTGRES})`, () => {})
    return
  }
  test('a pause made on one process stops the continuations another sends', async () => {
    const c = await startCluster({ processes: 2, env: { SWITCHBOARD_PLAN_CONTINUATION_DELAY_MS: '50' } })
    try {
      const [one, two] = c.processes as unknown as [{ api: string }, { api: string }]
      const worker = (await c.call(one.api, 'POST', '/api/v1/AgentConfigRecord', { json: { name: 'worker', runner: 'echo', model: 'echo-1' } })).body.id
      const started = await c.call(one.api, 'POST', '/api/chat', { json: { agent_id: worker, text: 'Let us plan.' } })
      expect(started.status).toBe(200)
      const conversation = String(started.body).split('\n')[0] ? JSON.parse(String(started.body).split('\n')[0]!).conversation_id : undefined
      const plan = (await c.call(one.api, 'POST', '/api/plans', { json: { conversation_id: conversation, title: 'Shared', tasks: [{ title: 'a' }] } })).body.id
      await c.call(one.api, 'POST', `/api/plans/${plan}/update`, { json: { action: 'execute' } })
      await until(async () => (await c.call(two.api, 'GET', `/api/plans/${plan}`)).body.continuations >= 2, { what: 'continuations sent by the first process', timeoutMs: 15_000 })
      const paused = await c.call(two.api, 'POST', `/api/plans/${plan}/update`, { json: { action: 'pause' } })
      expect(paused.body.status).toBe('paused')
      await Bun.sleep(1_000)
      expect((await c.call(one.api, 'GET', `/api/plans/${plan}`)).body.continuations).toBe(paused.body.continuations)

      // Resumes racing on both processes start one execution, and it stops at 20 continuations.
      const resumes = await Promise.all(Array.from({ length: 6 }, (_, i) => c.call(i % 2 ? two.api : one.api, 'POST', `/api/plans/${plan}/update`, { json: { action: 'resume' } })))
      expect(resumes.map((r) => r.status).sort()).toEqual([200, 409, 409, 409, 409, 409])
      const limit = await until(async () => ((await c.call(one.api, 'GET', `/api/plans/${plan}`)).body.status === 'paused' ? (await c.call(one.api, 'GET', `/api/plans/${plan}`)).body : undefined), {
        what: 'the plan to pause at the limit',
        timeoutMs: 30_000,
      })
      expect(limit.continuations).toBe(20)
      const messages = (await c.call(two.api, 'GET', `/api/v1/WebchatMessage?conversation_id=eq.${conversation}&role=eq.system&order=id&limit=100`)).body.data
      expect(messages.filter((m: { text: string }) => m.text.startsWith('Continue with the plan')).length).toBe(paused.body.continuations + 20)
    } finally {
      await c.stop()
    }
  }, 60_000)
})
