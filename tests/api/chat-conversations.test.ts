import { describe, expect, test } from 'bun:test'
import { chatTurn } from '../helpers/chat.ts'
import { usePlatform, type Principal } from '../helpers/platform.ts'
import { expectProblem } from '../helpers/problem.ts'

const p = usePlatform()

async function agent(): Promise<{ id: string; name: string }> {
  const name = `agent-${crypto.randomUUID().slice(0, 8)}`
  const created = await p().call('POST', '/api/v1/AgentConfigRecord', { json: { name } })
  return { id: created.body.id, name }
}

async function conversationOf(owner: Principal, agentId: string): Promise<string> {
  const created = await p().call('POST', '/api/v1/WebchatConversation', { json: { agent_id: agentId }, as: owner })
  expect(created.status).toBe(201)
  return created.body.id
}

async function rows(conversationId: string, as: Principal) {
  return (await p().call('GET', `/api/v1/WebchatParticipant?conversation_id=eq.${conversationId}&order=created_at.asc`, { as })).body.data as any[]
}

describe('participant rows', () => {
  test('the creator is a participant; adding someone shares the conversation, removing them makes it private again', async () => {
    const [a, b] = [await p().createUser(), await p().createUser()]
    const id = await conversationOf(a, (await agent()).id)
    const mine = await rows(id, a)
    expect(mine.map((r) => [r.user_id, r.user_name])).toEqual([[a.userId, a.username]])
    expect((await p().call('GET', `/api/v1/WebchatConversation/${id}`, { as: a })).body.shared).toBe(false)
    const added = await p().call('POST', '/api/v1/WebchatParticipant', { json: { conversation_id: id, user_id: b.userId }, as: a })
    expect(added.status).toBe(201)
    expect((await p().call('GET', `/api/v1/WebchatConversation/${id}`, { as: b })).body.shared).toBe(true)
    expect((await p().call('DELETE', `/api/v1/WebchatParticipant/${added.body.id}`, { as: a })).status).toBe(204)
    expect((await p().call('GET', `/api/v1/WebchatConversation/${id}`, { as: a })).body.shared).toBe(false)
    expectProblem(await p().call('GET', `/api/v1/WebchatConversation/${id}`, { as: b }), 404, 'not_found')
  })

  test('pins and read markers are each participant’s own: not even the creator sets someone else’s', async () => {
    const [a, b] = [await p().createUser(), await p().createUser()]
    const id = await conversationOf(a, (await agent()).id)
    const bRow = (await p().call('POST', '/api/v1/WebchatParticipant', { json: { conversation_id: id, user_id: b.userId }, as: a })).body
    const aRow = (await rows(id, a)).find((r) => r.user_id === a.userId)
    const pin = { pinned_at: '2026-11-22T10:00:00.000Z' }
    expectProblem(await p().call('PATCH', `/api/v1/WebchatParticipant/${aRow.id}`, { json: pin, as: b }), 403, 'forbidden')
    expectProblem(await p().call('PATCH', `/api/v1/WebchatParticipant/${bRow.id}`, { json: pin, as: a }), 403, 'forbidden')
    expectProblem(await p().call('PUT', `/api/v1/WebchatParticipant/${aRow.id}`, { json: { conversation_id: id, user_id: a.userId, ...pin }, as: b }), 403, 'forbidden')
    expect((await p().call('PATCH', `/api/v1/WebchatParticipant/${aRow.id}`, { json: pin, as: a })).status).toBe(200)
    expect((await rows(id, b)).find((r) => r.user_id === b.userId).pinned_at).toBeNull()
    // A row stays with its user and conversation: no taking over someone's seat, no moving one's own.
    const moved = expectProblem(await p().call('PATCH', `/api/v1/WebchatParticipant/${aRow.id}`, { json: { user_id: b.userId }, as: a }), 422, 'validation_error')
    expect(moved.errors?.[0]?.path).toBe('user_id')
  })

  test('adding someone gives them a seat, never a pin or a read marker chosen for them', async () => {
    const [a, b] = [await p().createUser(), await p().createUser()]
    const id = await conversationOf(a, (await agent()).id)
    const forged = { conversation_id: id, user_id: b.userId, pinned_at: '2099-01-01T00:00:00.000Z', last_read_at: '2099-01-01T00:00:00.000Z' }
    const refused = expectProblem(await p().call('POST', '/api/v1/WebchatParticipant', { json: forged, as: a }), 422, 'validation_error')
    expect(refused.errors?.map((e) => e.path)).toEqual(['pinned_at', 'last_read_at'])
    expect((await rows(id, a)).map((r) => r.user_id)).toEqual([a.userId])
  })

  test('a document is renamed or deleted by who uploaded it or the conversation’s creator, not by another participant', async () => {
    const [a, b, c] = [await p().createUser(), await p().createUser(), await p().createUser()]
    const id = await conversationOf(a, (await agent()).id)
    for (const who of [b, c]) await p().call('POST', '/api/v1/WebchatParticipant', { json: { conversation_id: id, user_id: who.userId }, as: a })
    const form = new FormData()
    form.set('conversation_id', id)
    form.set('file', new File(['B’s notes.'], 'b.txt', { type: 'text/plain' }))
    const uploaded = (await p().call('POST', '/api/chat/documents', { body: form, as: b })).body
    expectProblem(await p().call('PATCH', `/api/v1/WebchatDocument/${uploaded.id}`, { json: { filename: 'mine.txt' }, as: c }), 403, 'forbidden')
    expectProblem(await p().call('DELETE', `/api/v1/WebchatDocument/${uploaded.id}`, { as: c }), 403, 'forbidden')
    expect((await p().call('PATCH', `/api/v1/WebchatDocument/${uploaded.id}`, { json: { filename: 'b-notes.txt' }, as: b })).status).toBe(200)
    expect((await p().call('DELETE', `/api/v1/WebchatDocument/${uploaded.id}`, { as: a })).status).toBe(204)
  })

  test('only the creator removes others; anyone may leave; nobody removes the creator', async () => {
    const [a, b, c] = [await p().createUser(), await p().createUser(), await p().createUser()]
    const id = await conversationOf(a, (await agent()).id)
    const bRow = (await p().call('POST', '/api/v1/WebchatParticipant', { json: { conversation_id: id, user_id: b.userId }, as: a })).body
    // Any participant may add a colleague.
    const cRow = (await p().call('POST', '/api/v1/WebchatParticipant', { json: { conversation_id: id, user_id: c.userId }, as: b })).body
    expect(cRow.user_id).toBe(c.userId)
    const aRow = (await rows(id, a)).find((r) => r.user_id === a.userId)
    expectProblem(await p().call('DELETE', `/api/v1/WebchatParticipant/${aRow.id}`, { as: b }), 403, 'forbidden')
    expectProblem(await p().call('DELETE', `/api/v1/WebchatParticipant/${cRow.id}`, { as: b }), 403, 'forbidden')
    expect((await p().call('DELETE', `/api/v1/WebchatParticipant/${bRow.id}`, { as: b })).status).toBe(204)
    expect((await rows(id, a)).map((r) => r.user_id).sort()).toEqual([a.userId, c.userId].sort())
  })

  test('a participant who did not start the conversation may not rename or delete it', async () => {
    const [a, b] = [await p().createUser(), await p().createUser()]
    const id = await conversationOf(a, (await agent()).id)
    await p().call('POST', '/api/v1/WebchatParticipant', { json: { conversation_id: id, user_id: b.userId }, as: a })
    expectProblem(await p().call('PATCH', `/api/v1/WebchatConversation/${id}`, { json: { title: 'mine now' }, as: b }), 403, 'forbidden')
    expectProblem(await p().call('DELETE', `/api/v1/WebchatConversation/${id}`, { as: b }), 403, 'forbidden')
  })

  test('nobody outside the company can be added, and another company’s conversation is not there', async () => {
    const a = await p().createUser()
    const outsider = await p().createUser({ companyId: await p().createCompany() })
    const id = await conversationOf(a, (await agent()).id)
    const refused = expectProblem(await p().call('POST', '/api/v1/WebchatParticipant', { json: { conversation_id: id, user_id: outsider.userId }, as: a }), 422, 'validation_error')
    expect(refused.errors?.[0]?.path).toBe('user_id')
    const intrusion = await p().call('POST', '/api/v1/WebchatParticipant', { json: { conversation_id: id, user_id: outsider.userId }, as: outsider })
    expectProblem(intrusion, 422, 'validation_error')
  })
})

describe('GET /api/chat/conversations', () => {
  test('pinned first, then the latest; unread counts others’ messages since the read marker', async () => {
    const [a, b] = [await p().createUser(), await p().createUser()]
    const { id: agentId, name } = await agent()
    const first = await conversationOf(a, agentId)
    const second = await conversationOf(a, agentId)
    await p().call('POST', '/api/v1/WebchatParticipant', { json: { conversation_id: first, user_id: b.userId }, as: a })
    await chatTurn(p(), { conversation_id: first, text: 'no mention here' }, { as: b })
    await chatTurn(p(), { conversation_id: first, text: `@${name} now answer` }, { as: b })
    const list = (await p().call('GET', '/api/chat/conversations', { as: a })).body.data
    expect(list.map((c) => c.id)).toEqual([first, second])
    // Two messages of B and the agent's answer.
    expect(list[0]).toMatchObject({ unread: 3, shared: true, agent_name: name, title: 'no mention here' })
    expect(list[1]).toMatchObject({ unread: 0, shared: false })
    const pinned = list[1]!.participant_id
    expect((await p().call('PATCH', `/api/v1/WebchatParticipant/${pinned}`, { json: { pinned_at: new Date().toISOString() }, as: a })).status).toBe(200)
    expect((await p().call('GET', '/api/chat/conversations', { as: a })).body.data.map((c: any) => c.id)).toEqual([second, first])
    expect((await p().call('POST', `/api/chat/conversations/${first}/read`, { as: a })).status).toBe(204)
    expect((await p().call('GET', '/api/chat/conversations', { as: a })).body.data.find((c) => c.id === first)!.unread).toBe(0)
    // B's own messages are never unread for B; the agent's answer is.
    expect((await p().call('GET', '/api/chat/conversations', { as: b })).body.data.find((c) => c.id === first)!.unread).toBe(1)
  })

  test('401 without credentials, 403 when the role is below the ACL, nothing of other people or companies', async () => {
    expectProblem(await p().call('GET', '/api/chat/conversations', { as: null }), 401, 'unauthorized')
    const outsider = await p().createUser({ companyId: await p().createCompany() })
    expect((await p().call('GET', '/api/chat/conversations', { as: outsider })).body.data).toEqual([])
    const acl = await p().call('POST', '/api/v1/ModelAcl', { json: { model: 'WebchatConversation', verb: 'list', min_role: 'admin' } })
    try {
      expectProblem(await p().call('GET', '/api/chat/conversations', { as: await p().createUser() }), 403, 'forbidden')
    } finally {
      await p().call('DELETE', `/api/v1/ModelAcl/${acl.body.id}`)
    }
  })
})

describe('POST /api/chat in a shared conversation', () => {
  test('without a mention the message is stored and the stream says why nobody answers', async () => {
    const [a, b] = [await p().createUser(), await p().createUser()]
    const { id: agentId, name } = await agent()
    const id = await conversationOf(a, agentId)
    await p().call('POST', '/api/v1/WebchatParticipant', { json: { conversation_id: id, user_id: b.userId }, as: a })
    const events = await chatTurn(p(), { conversation_id: id, text: 'hello B' }, { as: a })
    expect(events).toEqual([
      { type: 'conversation', conversation_id: id },
      { type: 'notice', text: `Stored. In a shared conversation ${name} answers only when mentioned (@${name}).` },
    ])
    const stored = (await p().call('GET', `/api/v1/WebchatMessage?conversation_id=eq.${id}`, { as: b })).body.data
    expect(stored.map((m: any) => [m.role, m.text, m.sender_id])).toEqual([['user', 'hello B', a.userId]])
  })

  test('an agent_id that is not the conversation’s, or attachments not of the conversation, are 422', async () => {
    const a = await p().createUser()
    const id = await conversationOf(a, (await agent()).id)
    const other = await agent()
    const wrongAgent = expectProblem(await p().call('POST', '/api/chat', { json: { conversation_id: id, agent_id: other.id, text: 'hi' }, as: a }), 422, 'validation_error')
    expect(wrongAgent.errors?.[0]?.path).toBe('agent_id')
    const noAgent = expectProblem(await p().call('POST', '/api/chat', { json: { text: 'hi' }, as: a }), 422, 'validation_error')
    expect(noAgent.errors?.[0]?.path).toBe('agent_id')
    const stranger = expectProblem(
      await p().call('POST', '/api/chat', { json: { conversation_id: id, text: 'see this', attachments: ['01936f3e-6d2a-7c41-9b1e-000000000000'] }, as: a }),
      422,
      'validation_error',
    )
    expect(stranger.errors?.[0]?.path).toBe('attachments')
    expect((await p().call('GET', `/api/v1/WebchatMessage?conversation_id=eq.${id}`, { as: a })).body.data).toEqual([])
  })
})

describe('typing, read markers and colleagues', () => {
  test('each answers 204 for a participant, 404 otherwise (another company’s too), 401 without credentials, 422 for a bad body', async () => {
    const [a, b] = [await p().createUser(), await p().createUser()]
    const outsider = await p().createUser({ companyId: await p().createCompany() })
    const id = await conversationOf(a, (await agent()).id)
    expect((await p().call('POST', '/api/chat/typing', { json: { conversation_id: id }, as: a })).status).toBe(204)
    expect((await p().call('POST', `/api/chat/conversations/${id}/read`, { as: a })).status).toBe(204)
    for (const who of [b, outsider]) {
      expectProblem(await p().call('POST', '/api/chat/typing', { json: { conversation_id: id }, as: who }), 404, 'not_found')
      expectProblem(await p().call('POST', `/api/chat/conversations/${id}/read`, { as: who }), 404, 'not_found')
    }
    expectProblem(await p().call('POST', '/api/chat/typing', { json: { conversation_id: id }, as: null }), 401, 'unauthorized')
    expectProblem(await p().call('POST', '/api/chat/typing', { json: { conversation: id }, as: a }), 422, 'validation_error')
  })

  test('colleagues are members of the caller’s company only', async () => {
    const a = await p().createUser()
    const colleague = await p().createUser()
    const outsider = await p().createUser({ companyId: await p().createCompany() })
    const found = (await p().call('GET', `/api/chat/people?q=${colleague.username}`, { as: a })).body.data
    expect(found).toEqual([{ id: colleague.userId, username: colleague.username, display_name: '' }])
    expect((await p().call('GET', `/api/chat/people?q=${outsider.username}`, { as: a })).body.data).toEqual([])
    // An email address is matched whole only: a part of one would reveal it letter by letter.
    const email = `${colleague.username}@example.com`
    expect((await p().call('GET', `/api/chat/people?q=${encodeURIComponent(email)}`, { as: a })).body.data.map((u: any) => u.id)).toEqual([colleague.userId])
    expect((await p().call('GET', `/api/chat/people?q=${encodeURIComponent(email.slice(0, -3))}`, { as: a })).body.data).toEqual([])
    // A pattern character is matched as itself.
    expect((await p().call('GET', '/api/chat/people?q=%25', { as: a })).body.data).toEqual([])
    expectProblem(await p().call('GET', '/api/chat/people', { as: null }), 401, 'unauthorized')
  })
})

describe('finding, archiving and exporting conversations', () => {
  async function say(as: Principal, conversationId: string, text: string) {
    expect((await p().call('POST', '/api/v1/WebchatMessage', { json: { conversation_id: conversationId, text }, as })).status).toBe(201)
  }
  const idsOf = async (as: Principal, query: string) => (((await p().call("GET", `/api/chat/conversations${query}`, { as })).body as any).data as any[]).map((c) => c.id)

  test('q finds conversations by the beginnings of words in their titles or any message, every word given', async () => {
    const [a, b] = [await p().createUser(), await p().createUser()]
    const { id: agentId } = await agent()
    const [launch, budget, other] = [await conversationOf(a, agentId), await conversationOf(a, agentId), await conversationOf(a, agentId)]
    await p().call('PATCH', `/api/v1/WebchatConversation/${budget}`, { json: { title: 'Budget for 2027' }, as: a })
    await say(a, launch, 'The rocket launches on Tuesday from the northern pad.')
    await say(a, other, 'Nothing to see here.')
    expect(await idsOf(a, '?q=launch')).toEqual([launch])
    expect(await idsOf(a, '?q=LAUNC%20tues')).toEqual([launch])
    expect(await idsOf(a, '?q=launch%20wednesday')).toEqual([])
    expect(await idsOf(a, '?q=budg')).toEqual([budget])
    // Punctuation and query syntax are words or nothing, never an error.
    expect(await idsOf(a, `?q=${encodeURIComponent("launch & !(tues:* | ') \\")}`)).toEqual([launch])
    expect((await idsOf(a, `?q=${encodeURIComponent('&|!()')}`)).sort()).toEqual([launch, budget, other].sort())
    // Someone else's conversations are not searched.
    expect(await idsOf(b, '?q=launch')).toEqual([])
    expectProblem(await p().call('GET', `/api/chat/conversations?q=${'x'.repeat(201)}`, { as: a }), 400, 'bad_request')
  })

  test('archiving is each participant’s own: out of their list, listed among the archived, found there by q', async () => {
    const [a, b] = [await p().createUser(), await p().createUser()]
    const id = await conversationOf(a, (await agent()).id)
    await p().call('POST', '/api/v1/WebchatParticipant', { json: { conversation_id: id, user_id: b.userId }, as: a })
    await say(a, id, 'quarterly numbers')
    const mine = (await rows(id, a)).find((r) => r.user_id === a.userId)
    const theirs = (await rows(id, a)).find((r) => r.user_id === b.userId)
    expectProblem(await p().call('PATCH', `/api/v1/WebchatParticipant/${theirs.id}`, { json: { archived_at: new Date().toISOString() }, as: a }), 403, 'forbidden')
    expect((await p().call('PATCH', `/api/v1/WebchatParticipant/${mine.id}`, { json: { archived_at: new Date().toISOString() }, as: a })).status).toBe(200)
    expect(await idsOf(a, '')).not.toContain(id)
    expect(await idsOf(a, '?archived=true')).toEqual([id])
    expect(await idsOf(a, '?archived=true&q=quarter')).toEqual([id])
    expect(await idsOf(b, '')).toContain(id)
    expectProblem(await p().call('GET', '/api/chat/conversations?archived=maybe', { as: a }), 400, 'bad_request')
  })

  test('export: the whole conversation as Markdown or JSON, to its participants only', async () => {
    const [a, outsider] = [await p().createUser(), await p().createUser({ companyId: await p().createCompany() })]
    const { id: agentId, name } = await agent()
    const id = await conversationOf(a, agentId)
    await p().call('PATCH', `/api/v1/WebchatConversation/${id}`, { json: { title: 'Café plans: Q3/Q4' }, as: a })
    await say(a, id, 'first line\n\n# not a heading of the export')
    await chatTurn(p(), { conversation_id: id, text: 'and an answer' }, { as: a })
    const md = await p().call('GET', `/api/chat/conversations/${id}/export`, { as: a })
    expect(md.status).toBe(200)
    expect(md.headers.get('content-type')).toBe('text/markdown; charset=utf-8')
    expect(md.headers.get('content-disposition')).toBe('attachment; filename="Cafe-plans-Q3-Q4.md"')
    const text = md.body as unknown as string
    expect(text.startsWith(`# Café plans: Q3/Q4\n\nA conversation with ${name}.`)).toBe(true)
    expect(text).toContain(`**${a.username}** · `)
    expect(text).toContain('first line\n\n# not a heading of the export')
    expect(text).toContain(`**${name}** · `)
    const json = await p().call('GET', `/api/chat/conversations/${id}/export?format=json`, { as: a })
    expect(json.headers.get('content-disposition')).toBe('attachment; filename="Cafe-plans-Q3-Q4.json"')
    expect(json.body.conversation).toMatchObject({ id, title: 'Café plans: Q3/Q4', agent_name: name })
    expect(json.body.messages.map((m: any) => m.role)).toEqual(['user', 'user', 'agent'])
    expect(json.body.messages[0]).toMatchObject({ sender_name: a.username, text: 'first line\n\n# not a heading of the export', status: 'complete' })
    expectProblem(await p().call('GET', `/api/chat/conversations/${id}/export`, { as: outsider }), 404, 'not_found')
    expectProblem(await p().call('GET', `/api/chat/conversations/${id}/export`, { as: await p().createUser() }), 404, 'not_found')
    expectProblem(await p().call('GET', `/api/chat/conversations/${id}/export`, { as: null }), 401, 'unauthorized')
    expectProblem(await p().call('GET', `/api/chat/conversations/${id}/export?format=pdf`, { as: a }), 400, 'bad_request')
    expectProblem(await p().call('GET', `/api/chat/conversations/${crypto.randomUUID()}/export`, { as: a }), 404, 'not_found')
  })
})
