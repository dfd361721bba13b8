import { beforeAll, expect, test } from 'bun:test'
import type { KyselyPlugin } from 'kysely'
import { AgentConfigs } from '../../src/agents/configs.ts'
import { ApiError } from '../../src/errors.ts'
import { chatTurn, startChatTurn } from '../helpers/chat.ts'
import { usePlatform, type Principal } from '../helpers/platform.ts'
import { expectProblem } from '../helpers/problem.ts'

const p = usePlatform()

/** The agent_configs statements sent through the counting store. */
let agentReads = 0
const counting: KyselyPlugin = {
  transformQuery: (args) => {
    if (JSON.stringify(args.node).includes('"agent_configs"')) agentReads++
    return args.node
  },
  transformResult: async (args) => args.result,
}

let admin: Principal
let member: Principal
let stranger: Principal

beforeAll(async () => {
  const company = await p().createCompany()
  admin = await p().createUser({ companyId: company, role: 'admin' })
  member = await p().createUser({ companyId: company, role: 'member' })
  stranger = await p().createUser({ companyId: await p().createCompany(), role: 'owner' })
})

async function newAgent(name = `agent-${crypto.randomUUID().slice(0, 8)}`): Promise<string> {
  const made = await p().call('POST', '/api/v1/AgentConfigRecord', { as: admin, json: { name, runner: 'echo' } })
  expect(made.status).toBe(201)
  return made.body.id
}

function configs(): AgentConfigs {
  const { db, clock, events } = p().services
  return new AgentConfigs(db.withPlugin(counting), clock, events)
}

test('an agent is read once for every turn after it, not once per turn', async () => {
  const id = await newAgent()
  const cache = configs()
  const before = agentReads
  for (let i = 0; i < 5; i++) expect((await cache.get(member, id)).id).toBe(id)
  expect(agentReads - before).toBe(1)
})

test('a write of the agent through the API is what the very next read returns', async () => {
  const id = await newAgent('before-the-edit')
  const cache = configs()
  expect((await cache.get(member, id)).name).toBe('before-the-edit')
  const edited = await p().call('PATCH', `/api/v1/AgentConfigRecord/${id}`, { as: admin, json: { name: 'after-the-edit', personality: 'Brief.' } })
  expect(edited.status).toBe(200)
  expect(await cache.get(member, id)).toMatchObject({ name: 'after-the-edit', personality: 'Brief.' })
  expect((await p().call('DELETE', `/api/v1/AgentConfigRecord/${id}`, { as: admin })).status).toBe(204)
  await expect(cache.get(member, id)).rejects.toThrow(ApiError)
})

test('another company’s agent is not found, even while its own company’s callers have it cached', async () => {
  const id = await newAgent()
  const cache = configs()
  await cache.get(member, id)
  const refused = await cache.get(stranger, id).catch((error: unknown) => error)
  expect(refused).toBeInstanceOf(ApiError)
  expect((refused as ApiError).code).toBe('not_found')
  // The same through the chat: no turn with another company's agent, whatever this process holds.
  await chatTurn(p(), { agent_id: id, text: 'warm' }, { as: member })
  const turn = await startChatTurn(p(), { agent_id: id, text: 'borrowed' }, stranger)
  expectProblem({ response: turn.response, error: await turn.response.json() }, 404, 'not_found')
})

test('a turn right after an agent is disabled or renamed follows the write, though the agent was cached', async () => {
  const id = await newAgent('first-name')
  const first = await chatTurn(p(), { agent_id: id, text: 'hello' }, { as: member })
  expect(first.at(-1)).toMatchObject({ type: 'message', agent: 'first-name' })
  const conversation = first[0]!.conversation_id

  expect((await p().call('PATCH', `/api/v1/AgentConfigRecord/${id}`, { as: admin, json: { name: 'second-name' } })).status).toBe(200)
  const renamed = await chatTurn(p(), { conversation_id: conversation, text: 'again' }, { as: member })
  expect(renamed.at(-1)).toMatchObject({ type: 'message', agent: 'second-name' })

  expect((await p().call('PATCH', `/api/v1/AgentConfigRecord/${id}`, { as: admin, json: { enabled: false } })).status).toBe(200)
  const refused = await startChatTurn(p(), { conversation_id: conversation, text: 'and again' }, member)
  expect(refused.response.status).toBe(409)
  expect(await refused.response.json()).toMatchObject({ detail: 'The agent second-name is disabled.' })
})
