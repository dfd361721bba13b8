import { beforeAll, expect, test } from 'bun:test'
import { AgentConfigs } from '../../src/agents/configs.ts'
import type { Actor } from '../../src/auth/actor.ts'
import { ApiError } from '../../src/errors.ts'
import { AgentConfigRecord } from '../../src/models/agent-config.ts'
import { chatTurn, startChatTurn } from '../helpers/chat.ts'
import { usePlatform, type Principal } from '../helpers/platform.ts'
import { expectProblem } from '../helpers/problem.ts'
import { recordingDb, type Recorded } from '../helpers/recording-db.ts'

const p = usePlatform()

let admin: Principal
let member: Principal
let stranger: Principal
/** The member and the stranger as the kernel knows callers. */
let memberActor: Actor
let strangerActor: Actor

beforeAll(async () => {
  const company = await p().createCompany()
  admin = await p().createUser({ companyId: company, role: 'admin' })
  member = await p().createUser({ companyId: company, role: 'member' })
  stranger = await p().createUser({ companyId: await p().createCompany(), role: 'owner' })
  memberActor = { userId: member.userId, companyId: member.companyId, role: 'member', isSuperadmin: false }
  strangerActor = { userId: stranger.userId, companyId: stranger.companyId, role: 'owner', isSuperadmin: false }
})

async function newAgent(name = `agent-${crypto.randomUUID().slice(0, 8)}`): Promise<string> {
  const made = await p().call('POST', '/api/v1/AgentConfigRecord', { as: admin, json: { name, runner: 'echo' } })
  expect(made.status).toBe(201)
  return made.body.id
}

/** A cache of its own on a store that counts what it is asked. */
function configs(): { cache: AgentConfigs; recorded: Recorded } {
  const { db, clock, events } = p().services
  const recording = recordingDb(db)
  return { cache: new AgentConfigs(recording.db, clock, events), recorded: recording.recorded }
}

test('an agent is read once for every turn after it, not once per turn', async () => {
  const id = await newAgent()
  const { cache, recorded } = configs()
  for (let i = 0; i < 5; i++) expect((await cache.get(memberActor, id)).id).toBe(id)
  expect(recorded.executed).toBe(1)
})

test('a write of the agent through the API is what the very next read returns', async () => {
  const id = await newAgent('before-the-edit')
  const { cache } = configs()
  expect((await cache.get(memberActor, id)).name).toBe('before-the-edit')
  const edited = await p().call('PATCH', `/api/v1/AgentConfigRecord/${id}`, { as: admin, json: { name: 'after-the-edit', personality: 'Brief.' } })
  expect(edited.status).toBe(200)
  expect(await cache.get(memberActor, id)).toMatchObject({ name: 'after-the-edit', personality: 'Brief.' })
  expect((await p().call('DELETE', `/api/v1/AgentConfigRecord/${id}`, { as: admin })).status).toBe(204)
  await expect(cache.get(memberActor, id)).rejects.toThrow(ApiError)
})

test('an agent’s scope is its company alone, which is what the cache is keyed by: no rule narrows it to some of its people', () => {
  expect(AgentConfigRecord.tenantColumn).toBe('company_id')
  expect(AgentConfigRecord.recordRule).toBeUndefined()
})

test('a reload after a change behind the API’s back is what the next read returns', async () => {
  const id = await newAgent('written-by-hand')
  const { cache } = configs()
  expect((await cache.get(memberActor, id)).timeout_seconds).toBe(900)
  await p().services.db.updateTable('agent_configs').set({ timeout_seconds: 5 }).where('id', '=', id).execute()
  expect((await cache.get(memberActor, id)).timeout_seconds).toBe(900)
  expect((await p().call('POST', `/api/agents/${id}/reload`, { as: admin })).status).toBe(200)
  expect((await cache.get(memberActor, id)).timeout_seconds).toBe(5)
})

test('another company’s agent is not found, even while its own company’s callers have it cached', async () => {
  const id = await newAgent()
  const { cache } = configs()
  await cache.get(memberActor, id)
  const refused = await cache.get(strangerActor, id).catch((error: unknown) => error)
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
