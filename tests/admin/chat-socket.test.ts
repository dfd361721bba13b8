import { describe, expect, test } from 'bun:test'
import { assembled, echoAgent, useChatPlatform, type ChatClient, type Frame } from '../helpers/web-chat.ts'
import { until } from '../helpers/until.ts'

const p = useChatPlatform()

const kind = (type: string) => (frame: Frame) => frame.type === type

/** A conversation of `owner` with an echo agent, made through the API. */
async function conversation(owner: { token: string } & Record<string, any>, agentId: string): Promise<string> {
  const created = await p().call('POST', '/api/v1/WebchatConversation', { json: { agent_id: agentId }, as: owner as never })
  expect(created.status).toBe(201)
  return created.body.id
}

async function share(owner: any, conversationId: string, userId: string): Promise<string> {
  const added = await p().call('POST', '/api/v1/WebchatParticipant', { json: { conversation_id: conversationId, user_id: userId }, as: owner })
  expect(added.status).toBe(201)
  return added.body.id
}

describe('the handshake', () => {
  test('without a session the socket is closed with 4001', async () => {
    const closed = await p().socket(null).closed
    expect(closed.code).toBe(4001)
    const forged = await p().socket('switchboard_session_token=forged').closed
    expect(forged.code).toBe(4001)
  })

  test('a page of another site is refused with 4003, before anything is said', async () => {
    const a = await p().person()
    const client = p().socket(a.cookie, { origin: 'https://evil.example' })
    expect((await client.closed).code).toBe(4003)
    expect(client.frames).toEqual([])
  })

  test('a conversation the user does not take part in, or of another company, is refused with 4003', async () => {
    const agent = await echoAgent(p())
    const [a, b] = [await p().person(), await p().person()]
    const id = await conversation(a, agent.id)
    expect((await p().socket(b.cookie, { conversationId: id }).closed).code).toBe(4003)
    const other = await p().person({ companyId: await p().createCompany() })
    expect((await p().socket(other.cookie, { conversationId: id }).closed).code).toBe(4003)
    expect((await p().socket(a.cookie, { conversationId: 'not-a-uuid' }).closed).code).toBe(4003)
  })

  test('a message that is not JSON, or of no known type, answers an error and keeps the socket', async () => {
    const a = await p().person()
    const client = p().socket(a.cookie)
    await client.opened
    client.send({ type: 'launch' })
    const error = await client.next(kind('error'), 'an error frame')
    expect(error).toMatchObject({ error_type: 'bad_request', text: 'That message could not be understood.' })
  })
})

describe('after the handshake', () => {
  test('a socket whose session ends (sign-out) is closed with 4001 at once', async () => {
    const a = await p().person()
    const client = p().socket(a.cookie)
    await client.opened
    const out = await fetch(`${p().adminUrl}/auth/logout`, { method: 'POST', headers: { cookie: a.cookie, origin: p().adminUrl, accept: 'application/json' } })
    expect(out.status).toBeLessThan(400)
    expect((await client.closed).code).toBe(4001)
  })

  test('a person may have at most 20 chat pages open on a process', async () => {
    const a = await p().person()
    const clients = Array.from({ length: 20 }, () => p().socket(a.cookie))
    await Promise.all(clients.map((c) => c.opened))
    const extra = p().socket(a.cookie)
    expect((await extra.closed).code).toBe(4029)
    clients[0]!.close()
    await clients[0]!.closed
    const again = p().socket(a.cookie)
    await again.opened
    // A barrier: a frame the server cannot read is answered on this socket after anything its opening said.
    again.send({ type: 'nonsense' })
    await again.next((f) => f.type === 'error' && f.error_type === 'bad_request', 'the answer to a frame after the opening')
    expect(again.frames.filter((f) => f.type === 'error').map((f) => f.error_type)).toEqual(['bad_request'])
    for (const c of clients) c.close()
    again.close()
  })
})

describe('a private conversation', () => {
  test('the answer streams to the socket and is stored; the title comes from the first message', async () => {
    const agent = await echoAgent(p())
    const a = await p().person()
    const id = await conversation(a, agent.id)
    const client = p().socket(a.cookie, { conversationId: id })
    await client.opened
    client.send({ type: 'message', conversation_id: id, text: 'Hello there, agent' })
    const answer = await client.next(kind('message'), 'the answer')
    expect(answer).toMatchObject({ text: 'Echo: Hello there, agent', agent: agent.name, conversation_id: id })
    const types = client.frames.map((f) => f.type)
    expect(types).toContain('user_message')
    expect(types).toContain('typing')
    expect(types).toContain('stream_end')
    const streamed = client.frames.filter(kind('stream'))
    expect(streamed.map((f) => f.text).join('')).toBe('Echo: Hello there, agent')
    expect(streamed.every((f, i) => f.offset === streamed.slice(0, i).reduce((n, g) => n + g.text.length, 0))).toBe(true)
    expect(await client.next(kind('conversation_update'), 'the title')).toMatchObject({ title: 'Hello there, agent' })
    const stored = await p().call('GET', `/api/v1/WebchatMessage?conversation_id=eq.${id}&order=id.asc`, { as: a })
    expect(stored.body.data.map((m: any) => [m.role, m.text, m.status])).toEqual([
      ['user', 'Hello there, agent', 'complete'],
      ['agent', 'Echo: Hello there, agent', 'complete'],
    ])
  })

  test('a rename through the API reaches the open page as conversation_update', async () => {
    const agent = await echoAgent(p())
    const a = await p().person()
    const id = await conversation(a, agent.id)
    const client = p().socket(a.cookie, { conversationId: id })
    await client.opened
    expect((await p().call('PATCH', `/api/v1/WebchatConversation/${id}`, { json: { title: 'Budget 2027' }, as: a })).status).toBe(200)
    expect(await client.next(kind('conversation_update'), 'the new title')).toMatchObject({ conversation_id: id, title: 'Budget 2027' })
  })

  test('an error shows its text, details and type', async () => {
    const agent = await echoAgent(p())
    const a = await p().person()
    const id = await conversation(a, agent.id)
    const client = p().socket(a.cookie, { conversationId: id })
    await client.opened
    client.send({ type: 'message', conversation_id: id, text: '/tool missing_tool {not json}' })
    const error = await client.next(kind('error'), 'the error')
    expect(error).toMatchObject({ text: 'The tool arguments are not JSON.', details: '{not json}', error_type: 'bad_request' })
  })

  test('a second message while the agent answers is refused with the reason, to that socket', async () => {
    const agent = await echoAgent(p())
    const a = await p().person()
    const id = await conversation(a, agent.id)
    const client = p().socket(a.cookie, { conversationId: id })
    await client.opened
    client.send({ type: 'message', conversation_id: id, text: '/slow 100 one two three four' })
    await client.next(kind('stream'), 'the first piece')
    client.send({ type: 'message', conversation_id: id, text: 'and another thing' })
    const refused = await client.next((f) => f.type === 'error' && f.error_type === 'conflict', 'the refusal')
    expect(refused.text).toContain('A turn is already running')
    client.send({ type: 'stop', conversation_id: id })
    await client.next(kind('aborted'), 'the stop')
  })
})

describe('the stop button', () => {
  test('stops the runner; the partial answer is kept, marked aborted', async () => {
    const agent = await echoAgent(p())
    const a = await p().person()
    const id = await conversation(a, agent.id)
    const client = p().socket(a.cookie, { conversationId: id })
    await client.opened
    client.send({ type: 'message', conversation_id: id, text: '/slow 150 alpha beta gamma delta epsilon zeta eta theta' })
    await until(() => client.frames.filter(kind('stream')).length >= 2, { what: 'two pieces' })
    client.send({ type: 'stop', conversation_id: id })
    const aborted = await client.next(kind('aborted'), 'the aborted frame')
    const seen = client.frames.length
    // The runner stopped: nothing streams after the abort, up to the next message (which could not start while the
    // stopped turn still ran: one turn at a time per conversation).
    client.send({ type: 'message', conversation_id: id, text: 'after the stop' })
    const next = await client.next((f) => f.type === 'user_message' && f.text === 'after the stop', 'the next message', seen)
    expect(client.frames.slice(seen, client.frames.indexOf(next)).filter(kind('stream'))).toEqual([])
    const stored = await p().call('GET', `/api/v1/WebchatMessage/${aborted.message_id}`, { as: a })
    expect(stored.body.status).toBe('aborted')
    expect(stored.body.text.startsWith('Echo: alpha')).toBe(true)
    expect(stored.body.text).not.toContain('theta')
  })
})

describe('a shared conversation', () => {
  async function pair() {
    const agent = await echoAgent(p(), `helper-${crypto.randomUUID().slice(0, 6)}`)
    const [a, b] = [await p().person(), await p().person()]
    const id = await conversation(a, agent.id)
    const participant = await share(a, id, b.userId)
    return { agent, a, b, id, participant }
  }

  test('the agent answers only when mentioned; everyone sees what is said', async () => {
    const { agent, a, b, id } = await pair()
    const [sa, sb] = [p().socket(a.cookie, { conversationId: id }), p().socket(b.cookie, { conversationId: id })]
    await Promise.all([sa.opened, sb.opened])
    sa.send({ type: 'message', conversation_id: id, text: 'just between us' })
    const heard = await sb.next(kind('user_message'), 'A’s message at B')
    expect(heard).toMatchObject({ text: 'just between us', sender: a.userId, conversation_id: id })
    expect(heard.display_name).toBe(a.username)
    sa.send({ type: 'message', conversation_id: id, text: `@${agent.name} please answer` })
    const mention = await sb.next((f) => f.type === 'user_message' && f.text === `@${agent.name} please answer`, 'the mention at B')
    // Up to the mention, the agent did not so much as start to answer.
    expect(sb.frames.slice(0, sb.frames.indexOf(mention)).some(kind('typing'))).toBe(false)
    const answer = await sb.next(kind('message'), 'the agent’s answer at B')
    expect(answer.text).toBe(`Echo: @${agent.name} please answer`)
    await sa.next(kind('message'), 'the agent’s answer at A')
  })

  test('B sees A typing; A does not hear their own typing', async () => {
    const { a, b, id } = await pair()
    const [sa, sb] = [p().socket(a.cookie, { conversationId: id }), p().socket(b.cookie, { conversationId: id })]
    await Promise.all([sa.opened, sb.opened])
    sa.send({ type: 'user_typing', conversation_id: id })
    expect(await sb.next(kind('user_typing'), 'A typing at B')).toMatchObject({ sender: a.userId, display_name: a.username })
    // A barrier: B types after A; had A heard their own typing, it would have come first.
    sb.send({ type: 'user_typing', conversation_id: id })
    await sa.next((f) => f.type === 'user_typing' && f.sender === b.userId, 'B typing at A')
    expect(sa.frames.filter(kind('user_typing')).map((f) => f.sender)).toEqual([b.userId])
  })

  test('B, on another page, gets an unread notice and the list counts it', async () => {
    const { a, b, id } = await pair()
    const sa = p().socket(a.cookie, { conversationId: id })
    const sb = p().socket(b.cookie)
    await Promise.all([sa.opened, sb.opened])
    sa.send({ type: 'message', conversation_id: id, text: 'news for you' })
    expect(await sb.next(kind('unread'), 'the unread notice')).toMatchObject({ conversation_id: id })
    const list = await p().call('GET', '/api/chat/conversations', { as: b })
    expect(list.body.data.find((c: any) => c.id === id)).toMatchObject({ unread: 1, shared: true })
    const mine = await p().call('GET', '/api/chat/conversations', { as: a })
    expect(mine.body.data.find((c) => c.id === id)!.unread).toBe(0)
    sb.send({ type: 'read', conversation_id: id })
    await until(async () => (await p().call('GET', '/api/chat/conversations', { as: b })).body.data.find((c) => c.id === id)!.unread === 0, { what: 'B’s read marker' })
  })

  test('removing B makes it private again: B’s socket closes with 4003 and the API answers 404', async () => {
    const { a, b, id, participant } = await pair()
    const sb: ChatClient = p().socket(b.cookie, { conversationId: id })
    await sb.opened
    expect((await p().call('GET', `/api/v1/WebchatConversation/${id}`, { as: a })).body.shared).toBe(true)
    expect((await p().call('DELETE', `/api/v1/WebchatParticipant/${participant}`, { as: a })).status).toBe(204)
    expect((await sb.closed).code).toBe(4003)
    expect((await p().call('GET', `/api/v1/WebchatConversation/${id}`, { as: b })).status).toBe(404)
    expect((await p().call('GET', `/api/v1/WebchatConversation/${id}`, { as: a })).body.shared).toBe(false)
  })
})

describe('resuming', () => {
  test('a socket that comes back mid-answer gets the whole answer, once', async () => {
    const agent = await echoAgent(p())
    const a = await p().person()
    const id = await conversation(a, agent.id)
    const first = p().socket(a.cookie, { conversationId: id })
    await first.opened
    first.send({ type: 'message', conversation_id: id, text: '/slow 80 one two three four five six seven eight' })
    const said = await first.next(kind('user_message'), 'the user message')
    await until(() => first.frames.filter(kind('stream')).length >= 3, { what: 'three pieces' })
    first.close()
    await first.closed
    const second = p().socket(a.cookie, { conversationId: id, after: said.message_id })
    const final = await second.next(kind('message'), 'the answer after the reconnect', 0)
    // What the client keeps: pieces placed at their offsets, as the page's script does.
    const text = assembled(first, second)
    expect(text).toBe('Echo: one two three four five six seven eight')
    expect(final.text).toBe(text)
    // A barrier: the next answer comes after anything more of the first.
    second.send({ type: 'message', conversation_id: id, text: 'and now?' })
    await second.next((f) => f.type === 'message' && f.text === 'Echo: and now?', 'the next answer')
    expect(second.frames.filter(kind('message')).map((f) => f.text)).toEqual([text, 'Echo: and now?'])
  })

  test('the answer so far goes to the socket that came back, not to everyone again', async () => {
    const agent = await echoAgent(p())
    const a = await p().person()
    const id = await conversation(a, agent.id)
    const watching = p().socket(a.cookie, { conversationId: id })
    await watching.opened
    watching.send({ type: 'message', conversation_id: id, text: '/slow 80 one two three four five six' })
    await until(() => watching.frames.filter(kind('stream')).length >= 2, { what: 'two pieces' })
    const late = p().socket(a.cookie, { conversationId: id })
    await late.next((f) => f.type === 'stream' && f.offset === 0 && f.text.length > 5, 'the answer so far at the late socket')
    await watching.next(kind('message'), 'the end of the answer')
    // The watcher got each piece once, at its own offset: no second copy from the start.
    const pieces = watching.frames.filter(kind('stream'))
    expect(pieces.filter((f) => f.offset === 0)).toHaveLength(1)
    expect(pieces.map((f) => f.text).join('')).toBe('Echo: one two three four five six')
    late.close()
  })
})
