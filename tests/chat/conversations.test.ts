import { beforeAll, expect, test } from 'bun:test'
import type { Actor } from '../../src/auth/actor.ts'
import { chatConversation } from '../../src/chat/conversations.ts'
import { ApiError } from '../../src/errors.ts'
import { chatTurn } from '../helpers/chat.ts'
import { usePlatform, type Principal } from '../helpers/platform.ts'
import { recordingDb } from '../helpers/recording-db.ts'

const p = usePlatform()

let owner: Principal
let guest: Principal
let outsider: Principal
let agent: string
const actorOf = (who: Principal): Actor => ({ userId: who.userId, companyId: who.companyId, role: 'member', isSuperadmin: false })

beforeAll(async () => {
  const company = await p().createCompany()
  const admin = await p().createUser({ companyId: company, role: 'admin' })
  owner = await p().createUser({ companyId: company, role: 'member' })
  guest = await p().createUser({ companyId: company, role: 'member' })
  outsider = await p().createUser({ companyId: await p().createCompany(), role: 'admin' })
  agent = (await p().call('POST', '/api/v1/AgentConfigRecord', { as: admin, json: { name: 'reader', runner: 'echo' } })).body.id
})

test('the chat reads a conversation as the record says, shared once a second person takes part, without summing its cost', async () => {
  const first = await chatTurn(p(), { agent_id: agent, text: 'hello' }, { as: owner })
  const id: string = first[0]!.conversation_id
  expect((await p().call('PATCH', `/api/v1/WebchatConversation/${id}`, { as: owner, json: { context_prompt: 'Figures are in EUR.' } })).status).toBe(200)
  const { db, recorded } = recordingDb(p().services.db)

  const alone = await chatConversation(db, actorOf(owner), id)
  expect(alone).toEqual({ id, company_id: owner.companyId!, agent_id: agent, title: 'hello', context_prompt: 'Figures are in EUR.', shared: false })
  // The record's cost is the sum of every turn's usage, which grows with the conversation; a turn has no use for it.
  expect(recorded.executed).toBe(1)
  expect(recorded.compiled).toHaveLength(1)
  expect(recorded.compiled[0]).toContain('webchat_conversations')
  expect(recorded.compiled[0]).not.toContain('usage_records')
  expect(recorded.compiled[0]).not.toContain('plans')

  const added = await p().call('POST', '/api/v1/WebchatParticipant', { as: owner, json: { conversation_id: id, user_id: guest.userId } })
  expect(added.status).toBe(201)
  expect((await chatConversation(db, actorOf(guest), id)).shared).toBe(true)
})

test('a conversation the caller takes no part in is not found, in their company or another', async () => {
  const first = await chatTurn(p(), { agent_id: agent, text: 'private' }, { as: owner })
  const id: string = first[0]!.conversation_id
  for (const who of [guest, outsider]) {
    const refused = await chatConversation(p().services.db, actorOf(who), id).catch((error: unknown) => error)
    expect(refused).toBeInstanceOf(ApiError)
    expect((refused as ApiError).code).toBe('not_found')
  }
})
