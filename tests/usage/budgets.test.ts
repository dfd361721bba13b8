import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { openAIRunnerEnv, startFakeOpenAI } from '../helpers/fake-openai.ts'
import { chatTurn, startChatTurn } from '../helpers/chat.ts'
import { startTestPlatform, type Principal, type TestPlatform } from '../helpers/platform.ts'
import { expectProblem } from '../helpers/problem.ts'
import { fieldsOf, rowsOf } from '../helpers/typed-call.ts'
import { monthOf } from '../../src/usage/budgets.ts'
import type { ChatEvent } from '../helpers/chat.ts'

// Monthly budgets, judged before a turn or a tool call starts: told past 80 %, refused at 100 %, lifted by an admin.
const fake = startFakeOpenAI()
let p: TestPlatform
let company: string
let owner: Principal
let agent: string
// Each turn here costs 1,100 tokens and (1000 × 2 + 100 × 8) / 1e6 = US$ 0.0028.
const TURN = { text: ['Fine.'], usage: { prompt_tokens: 1000, completion_tokens: 100 } }

beforeAll(async () => {
  p = await startTestPlatform(openAIRunnerEnv(fake))
  company = await p.createCompany()
  owner = await p.createUser({ companyId: company, role: 'owner' })
  agent = fieldsOf((await p.call('POST', '/api/v1/AgentConfigRecord', { as: owner, json: { name: 'priced', runner: 'openai', model: 'fast' } })).body).id as string
})
afterAll(async () => {
  await p.close()
  fake.stop()
})

async function turn(as: Principal, conversation?: string) {
  fake.scripts.push(TURN)
  return chatTurn(p, conversation ? { conversation_id: conversation, text: 'again' } : { agent_id: agent, text: 'hello' }, { as })
}
const budget = (json: Record<string, unknown>) => budgetOf(json, owner)
const notices = (events: ChatEvent[]) => events.filter((e) => e.type === 'notice').map((e) => String(e.text))

async function budgetOf(json: Record<string, unknown>, as: Principal) {
  const made = await p.call('POST', '/api/v1/Budget', { as, json })
  expect(made.status).toBe(201)
  return fieldsOf(made.body).id as string
}

test('a person’s token budget: quiet below 80 %, a notice past it, then a clear refusal with Retry-After until the month ends', async () => {
  const person = await p.createUser({ companyId: company })
  await budget({ user_id: person.userId, metric: 'tokens', monthly_limit: 2500 })
  const first = await turn(person)
  const conversation = first[0]!.conversation_id
  expect(notices(first)).toEqual([])
  expect(notices(await turn(person, conversation))).toEqual([])
  // 2,200 of 2,500 used: told, and answered.
  const third = await turn(person, conversation)
  expect(notices(third)).toEqual(['Your monthly budget is 88 % used (2,200 tokens of 2,500 tokens).'])
  expect(third.at(-1)).toMatchObject({ type: 'message', text: 'Fine.' })

  const before = await p.store.db.selectFrom('webchat_messages').select((eb) => eb.fn.countAll<number>().as('n')).where('conversation_id', '=', conversation).executeTakeFirstOrThrow()
  const refused = await startChatTurn(p, { conversation_id: conversation, text: 'one more' }, person)
  expect(refused.response.status).toBe(429)
  const problem = await refused.response.json()
  expect(problem).toMatchObject({ code: 'budget_exceeded', title: 'Monthly budget spent' })
  expect(problem.detail).toBe(`Your monthly budget is spent: 3,300 tokens of 2,500 tokens this month. Work resumes on ${monthOf(Date.now()).end.toISOString().slice(0, 10)}, or when an admin raises or lifts the budget.`)
  const retryAfter = Number(refused.response.headers.get('retry-after'))
  expect(retryAfter).toBeGreaterThan(0)
  expect(retryAfter).toBeLessThanOrEqual(31 * 86_400)
  // Nothing of the refused message was stored, and no model was called.
  const after = await p.store.db.selectFrom('webchat_messages').select((eb) => eb.fn.countAll<number>().as('n')).where('conversation_id', '=', conversation).executeTakeFirstOrThrow()
  expect(Number(after.n)).toBe(Number(before.n))

  // Someone else in the company is not limited by this person's budget.
  const colleague = await p.createUser({ companyId: company })
  expect((await turn(colleague)).at(-1)).toMatchObject({ type: 'message' })
})

test('a refused first message leaves no empty conversation behind', async () => {
  const person = await p.createUser({ companyId: company })
  await budget({ user_id: person.userId, metric: 'cost_usd', monthly_limit: 0.000001 })
  await p.store.db.insertInto('usage_records').values({ id: Bun.randomUUIDv7(), company_id: company, user_id: person.userId, source: 'rlm', runner: 'openai', model: 'fast', cost_usd: 1 }).execute()
  p.services.budgets.charged(company)
  expectProblem(await p.call('POST', '/api/chat', { as: person, json: { agent_id: agent, text: 'hello' } }), 429, 'budget_exceeded')
  const conversations = await p.store.db.selectFrom('webchat_conversations').select('id').where('created_by', '=', person.userId).execute()
  expect(conversations).toEqual([])
})

describe('the company’s budget', () => {
  let budgetId: string
  let companyB: string
  let ownerB: Principal
  let company: string
  let owner: Principal
  let agent: string
  async function turn(as: Principal) {
    fake.scripts.push(TURN)
    return chatTurn(p, { agent_id: agent, text: 'hello' }, { as })
  }
  const budget = (json: Record<string, unknown>) => budgetOf(json, owner)
  beforeAll(async () => {
    companyB = await p.createCompany()
    ownerB = await p.createUser({ companyId: companyB, role: 'owner' })
    company = await p.createCompany()
    owner = await p.createUser({ companyId: company, role: 'owner' })
    agent = fieldsOf((await p.call('POST', '/api/v1/AgentConfigRecord', { as: owner, json: { name: 'priced', runner: 'openai', model: 'fast' } })).body).id as string
  })

  test('stops everyone at 100 %; an admin lifts it and work goes on with a notice; tool calls stop too', async () => {
    // Under two turns' worth: the second starts at 56 % (no notice), and leaves US$ 0.0056 of 0.005 used.
    budgetId = await budget({ metric: 'cost_usd', monthly_limit: 0.005 })
    const person = await p.createUser({ companyId: company })
    expect((await turn(person)).at(-1)).toMatchObject({ type: 'message' })
    expect(notices(await turn(person))).toEqual([])
    const refused = expectProblem(await p.call('POST', '/api/chat', { as: person, json: { agent_id: agent, text: 'hello' } }), 429, 'budget_exceeded')
    expect(refused.detail).toStartWith('Your company’s monthly budget is spent: USD ')

    // A tool call is refused the same way, as a result the model or host reads.
    const planning = await p.services.catalog.provider(person, 'mcp-planning')
    const result = await planning!.callTool(person, { name: 'plan_get', arguments: {} })
    expect(result.isError).toBe(true)
    expect(JSON.stringify(result.content)).toContain('monthly budget is spent')

    // The budget's state, as the person reads it.
    const states = rowsOf((await p.call('GET', '/api/usage/budgets', { as: person })).body)
    expect(states).toContainEqual(expect.objectContaining({ id: budgetId, scope: 'company', metric: 'cost_usd', refusing: true }))

    // A member may not lift it; an admin may, and work goes on with a notice.
    expectProblem(await p.call('PATCH', `/api/v1/Budget/${budgetId}`, { as: person, json: { lifted_until: monthOf(Date.now()).end.toISOString() } }), 403, 'forbidden')
    expect((await p.call('PATCH', `/api/v1/Budget/${budgetId}`, { as: owner, json: { lifted_until: monthOf(Date.now()).end.toISOString() } })).status).toBe(200)
    const lifted = await turn(person)
    expect(notices(lifted)[0]).toMatch(/^Your company’s monthly budget is spent \(USD [\d.]+ of USD [\d.]+\); an admin lifted it until \d{4}-\d\d-\d\d 00:00 UTC\.$/)
    expect(lifted.at(-1)).toMatchObject({ type: 'message' })
    const after = rowsOf((await p.call('GET', '/api/usage/budgets', { as: person })).body).find((s) => s.id === budgetId)
    expect(after).toMatchObject({ refusing: false, lifted_until: monthOf(Date.now()).end.toISOString() })
    // Another company is not limited by it.
    const agentB = fieldsOf((await p.call('POST', '/api/v1/AgentConfigRecord', { as: ownerB, json: { name: 'b', runner: 'openai', model: 'fast' } })).body).id as string
    fake.scripts.push(TURN)
    expect((await chatTurn(p, { agent_id: agentB, text: 'hi' }, { as: ownerB })).at(-1)).toMatchObject({ type: 'message' })
  })

  test('one budget per scope and metric, said in words; members see the company’s and their own only; another company’s is not there', async () => {
    const twice = expectProblem(await p.call('POST', '/api/v1/Budget', { as: owner, json: { metric: 'cost_usd', monthly_limit: 5 } }), 409, 'conflict')
    expect(twice.detail).toBe('The company already has a monthly budget in USD: change that one.')
    const member = await p.createUser({ companyId: company })
    const other = await p.createUser({ companyId: company })
    const mine = await budget({ user_id: member.userId, metric: 'tokens', monthly_limit: 10_000 })
    const theirs = await budget({ user_id: other.userId, metric: 'tokens', monthly_limit: 10_000 })
    const seen = rowsOf((await p.call('GET', '/api/v1/Budget', { as: member })).body).map((b) => b.id)
    expect(seen).toContain(mine)
    expect(seen).toContain(budgetId)
    expect(seen).not.toContain(theirs)
    expectProblem(await p.call('POST', '/api/v1/Budget', { as: member, json: { metric: 'tokens', monthly_limit: 1e9 } }), 403, 'forbidden')
    expectProblem(await p.call('GET', `/api/v1/Budget/${budgetId}`, { as: ownerB }), 404, 'not_found')
    expectProblem(await p.call('POST', '/api/v1/Budget', { as: owner, json: { metric: 'tokens', monthly_limit: 0 } }), 422, 'validation_error')
    expectProblem(await p.call('POST', '/api/v1/Budget', { as: owner, json: { user_id: ownerB.userId, metric: 'tokens', monthly_limit: 5 } }), 422, 'validation_error')
  })
})

describe('GET /api/usage', () => {
  test('the company’s usage by day, agent, person and model adds up to its totals; a person reads their own', async () => {
    const person = await p.createUser({ companyId: company })
    await turn(person)
    const company_ = async (by: string) => fieldsOf((await p.call('GET', `/api/usage?scope=company&by=${by}`, { as: owner })).body) as any
    const totals = (await company_('day')).totals
    expect(totals.turns).toBeGreaterThan(0)
    for (const by of ['day', 'agent', 'user', 'model']) {
      const summary = await company_(by)
      const sum = summary.data.reduce((n: number, row: { cost_usd: number }) => n + row.cost_usd, 0)
      expect(sum).toBeCloseTo(totals.cost_usd, 9)
      expect(summary.data.reduce((n: number, row: { turns: number }) => n + row.turns, 0)).toBe(totals.turns)
    }
    expect((await company_('agent')).data).toContainEqual(expect.objectContaining({ key: agent, label: 'priced' }))
    expect((await company_('model')).data).toContainEqual(expect.objectContaining({ key: 'openai/fast' }))
    const mine = fieldsOf((await p.call('GET', '/api/usage', { as: person })).body) as any
    expect(mine).toMatchObject({ scope: 'mine', by: 'day', totals: { turns: 1, input_tokens: 1000, output_tokens: 100 } })
    expect(mine.totals.cost_usd).toBeCloseTo(0.0028, 12)
  })

  test('bad periods and groupings are 400; a member may not read the company’s; another company reads none of this', async () => {
    const member = await p.createUser({ companyId: company })
    expectProblem(await p.call('GET', '/api/usage?scope=company', { as: member }), 403, 'forbidden')
    for (const from of ['2026-02-30', '2026-13-45', 'yesterday']) expectProblem(await p.call('GET', `/api/usage?from=${from}`, { as: member }), 400, 'bad_request')
    expectProblem(await p.call('GET', '/api/usage?from=2026-05-02&to=2026-05-01', { as: member }), 400, 'bad_request')
    expectProblem(await p.call('GET', '/api/usage?from=2020-01-01&to=2026-01-01', { as: member }), 400, 'bad_request')
    expectProblem(await p.call('GET', '/api/usage?by=user', { as: member }), 400, 'bad_request')
    expectProblem(await p.call('GET', '/api/usage?by=everything', { as: member }), 400, 'bad_request')
    expectProblem(await p.call('GET', '/api/usage', { as: null }), 401, 'unauthorized')
    const other = await p.createUser({ companyId: await p.createCompany(), role: 'owner' })
    expect(fieldsOf((await p.call('GET', '/api/usage?scope=company', { as: other })).body)).toMatchObject({ data: [], totals: { turns: 0, cost_usd: 0 } })
  })
})
