import { afterAll, beforeAll, expect, test } from 'bun:test'
import type { Actor } from '../../src/auth/actor.ts'
import { chatTurn } from '../helpers/chat.ts'
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts'

// Plans write in a write scope: alone, each change is its own transaction; given the caller's scope, it joins the
// caller's transaction, and the conversation hears of it only once that commits (never, when it rolls back).
let p: TestPlatform
let conversation: string
let actor: Actor
/** The plan events the conversation's feed carried, in order. */
const heard: Array<{ type: string; title: string }> = []

beforeAll(async () => {
  p = await startTestPlatform({ SWITCHBOARD_PLAN_CONTINUATION_DELAY_MS: '3600000' })
  const agent = (await p.call('POST', '/api/v1/AgentConfigRecord', { json: { name: 'planner', runner: 'echo', model: 'echo-1' } })).body.id
  conversation = (await chatTurn(p, { agent_id: agent, text: 'Let us plan.' }))[0]!.conversation_id
  actor = { userId: p.root.userId, companyId: p.root.companyId, role: 'owner', isSuperadmin: true }
  p.services.events.subscribe('chat.event', ({ conversation_id, event }) => {
    if (conversation_id === conversation && event.type.startsWith('plan_')) heard.push({ type: event.type, title: (event as { plan: { title: string } }).plan.title })
  })
})
afterAll(() => p.close())

const plansIn = () => p.store.db.selectFrom('plans').select(['title', 'status']).where('conversation_id', '=', conversation).orderBy('id').execute()

test('a plan made in the caller’s transaction is heard when the caller commits, and not before', async () => {
  const user = { userId: p.root.userId, companyId: p.root.companyId }
  let heardInside: number | undefined
  const plan = await p.services.writes.transaction(actor, async (scope) => {
    const made = await p.services.plans.create(user, conversation, { title: 'Joined', tasks: [{ title: 'One' }] }, scope)
    await p.services.plans.update(user, made.id, { action: 'execute' }, { within: scope })
    heardInside = heard.length
    return made
  })
  expect(heardInside).toBe(0)
  expect(heard).toEqual([
    { type: 'plan_created', title: 'Joined' },
    { type: 'plan_updated', title: 'Joined' },
  ])
  expect(await plansIn()).toEqual([{ title: 'Joined', status: 'active' }])
  await p.services.plans.update(user, plan.id, { action: 'cancel' })
  expect(heard.at(-1)).toEqual({ type: 'plan_updated', title: 'Joined' })
})

test('when the caller’s transaction rolls back, the plan was never made and nobody heard of it', async () => {
  const user = { userId: p.root.userId, companyId: p.root.companyId }
  const before = heard.length
  await expect(
    p.services.writes.transaction(actor, async (scope) => {
      await p.services.plans.create(user, conversation, { title: 'Undone', tasks: [{ title: 'One' }] }, scope)
      throw new Error('the caller failed')
    }),
  ).rejects.toThrow('the caller failed')
  expect(heard.length).toBe(before)
  expect((await plansIn()).map((plan) => plan.title)).not.toContain('Undone')
})

test('alone, each change commits and is heard at once', async () => {
  const user = { userId: p.root.userId, companyId: p.root.companyId }
  const before = heard.length
  const made = await p.services.plans.create(user, conversation, { title: 'Alone', tasks: [{ title: 'One' }] })
  expect(heard.slice(before)).toEqual([{ type: 'plan_created', title: 'Alone' }])
  await p.services.plans.update(user, made.id, { action: 'cancel' })
  expect(heard.slice(before).map((event) => event.type)).toEqual(['plan_created', 'plan_updated'])
})
