import { expect, test } from 'bun:test'
import { queuedReply } from '../helpers/outbox.ts'
import { chatTurn } from '../helpers/chat.ts'
import { usePlatform, type Principal } from '../helpers/platform.ts'
import { expectProblem } from '../helpers/problem.ts'

const p = usePlatform()

/** A reply to Telegram that failed for good, as the channel worker leaves it. */
const failedReply = (agentId: string, error: string) => queuedReply(p().store.db, agentId, 'failed', error)

async function companyWithAdmin(): Promise<{ companyId: string; admin: Principal; agentId: string }> {
  const companyId = await p().createCompany()
  const admin = await p().createUser({ companyId, role: 'admin' })
  const agent = await p().call('POST', '/api/v1/AgentConfigRecord', { json: { name: `ops-${crypto.randomUUID().slice(0, 6)}` }, as: admin })
  expect(agent.status).toBe(201)
  return { companyId, admin, agentId: agent.body.id }
}

test('an admin reads the company’s day: answers and failures, active conversations, channel failures by agent', async () => {
  const { companyId, admin, agentId } = await companyWithAdmin()
  const before = (await p().call('GET', '/api/overview', { as: admin })).body
  expect(before).toMatchObject({ turns: 0, failed_turns: 0, active_conversations: 0, channels: { waiting_inbound: 0, waiting_replies: 0, failed: 0, latest_failures: [] }, background_tasks: { running: 0, failed: 0 }, breakers_open: [] })
  const person = await p().createUser({ companyId })
  await chatTurn(p(), { agent_id: agentId, text: 'hello' }, { as: person })
  await chatTurn(p(), { agent_id: agentId, text: 'again' }, { as: person })
  await failedReply(agentId, 'Forbidden: bot was blocked by the user')
  const after = await p().call('GET', '/api/overview', { as: admin })
  expect(after.status).toBe(200)
  expect(after.body).toMatchObject({ turns: 2, failed_turns: 0, active_conversations: 2, channels: { failed: 1 } })
  expect(after.body.channels.latest_failures).toEqual([
    { agent_id: agentId, agent_name: expect.stringMatching(/^ops-/), platform: 'telegram', direction: 'reply', error: 'Forbidden: bot was blocked by the user', at: expect.any(String) },
  ])
  expect(Date.parse(after.body.since)).toBeLessThanOrEqual(Date.now())
})

test('another company’s day is not counted; members, and callers without credentials, are refused', async () => {
  const [mine, theirs] = [await companyWithAdmin(), await companyWithAdmin()]
  await failedReply(theirs.agentId, 'theirs')
  const seen = (await p().call('GET', '/api/overview', { as: mine.admin })).body
  expect(seen.channels.failed).toBe(0)
  expect(seen.channels.latest_failures).toEqual([])
  expectProblem(await p().call('GET', '/api/overview', { as: await p().createUser({ companyId: mine.companyId }) }), 403, 'forbidden')
  expectProblem(await p().call('GET', '/api/overview', { as: null }), 401, 'unauthorized')
})
