import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { sql } from 'kysely'
import { startChatTurn, type ChatEvent } from '../helpers/chat.ts'
import { history } from '../../src/chat/messages.ts'
import { startTestPlatform, type Principal, type TestPlatform } from '../helpers/platform.ts'
import { consoleCookie } from '../helpers/console.ts'
import { expectProblem } from '../helpers/problem.ts'
import { until } from '../helpers/until.ts'
import { rowsOf } from '../helpers/typed-call.ts'

let p: TestPlatform
let demo: string

beforeAll(async () => {
  p = await startTestPlatform()
  demo = (await p.call('GET', '/api/v1/AgentConfigRecord?name=eq.demo')).body.data[0]!.id
})
afterAll(() => p.close())

type Event = ChatEvent
const startTurn = (json: Record<string, unknown>, as?: Principal) => startChatTurn(p, json, as)

async function turn(json: Record<string, unknown>, as?: Principal): Promise<Event[]> {
  const started = await startTurn(json, as)
  expect(started.response.status).toBe(200)
  expect(started.response.headers.get('content-type')).toContain('application/x-ndjson')
  return Array.fromAsync(started.events())
}

const messagesOf = async (conversation: string) =>
  rowsOf((await p.call('GET', `/api/v1/WebchatMessage?conversation_id=eq.${conversation}&select=role,text,status,sender_name`)).body)

test('a fresh install has a demo agent on the echo runner, listed among the plugins', async () => {
  expect(demo).toBeDefined()
  const plugins = (await p.call('GET', '/api/plugins')).body.data
  expect(plugins).toContainEqual(expect.objectContaining({ name: 'runner-echo', kind: 'runner' }))
})

describe('a turn', () => {
  test('streams the answer and stores both messages', async () => {
    const events = await turn({ agent_id: demo, text: 'hello there friend' })
    expect(events.map((e) => e.type)).toEqual(['conversation', 'typing', 'stream', 'stream', 'stream', 'stream', 'stream_end', 'message'])
    expect(events.filter((e) => e.type === 'stream').map((e) => e.text).join('')).toBe('Echo: hello there friend')
    expect(events.at(-1)).toMatchObject({ type: 'message', text: 'Echo: hello there friend', agent: 'demo' })
    const conversation = events[0]!.conversation_id
    expect(await messagesOf(conversation)).toEqual([
      { role: 'user', text: 'hello there friend', status: 'complete', sender_name: 'Administrator' },
      { role: 'agent', text: 'Echo: hello there friend', status: 'complete', sender_name: 'demo' },
    ])

    const next = await turn({ agent_id: demo, conversation_id: conversation, text: 'again' })
    expect(next[0]).toEqual({ type: 'conversation', conversation_id: conversation })
    expect((await messagesOf(conversation)).length).toBe(4)
  })

  test('runs the tool the model asks for and streams the call and its result', async () => {
    const events = await turn({ agent_id: demo, text: '/tool current_time {"time_zone": "UTC"}' })
    const types = events.map((e) => e.type)
    expect(types.slice(0, 4)).toEqual(['conversation', 'typing', 'tool_call', 'tool_result'])
    expect(events[2]).toEqual({ type: 'tool_call', tool: 'current_time' })
    expect(events[3]!.result).toMatch(/^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC$/)
    expect(events.at(-1)!.text).toBe(`The tool answered: ${events[3]!.result}`)
  })

  test('a tool that does not exist is reported to the model, and the turn still ends', async () => {
    const events = await turn({ agent_id: demo, text: '/tool no_such_tool' })
    expect(events.find((e) => e.type === 'tool_result')!.result).toBe('Error: There is no tool named no_such_tool for this agent.')
    expect(events.at(-1)!.type).toBe('message')
  })

  test('the model and timeout are read from the store on every turn, no reload', async () => {
    const agent = (await p.call('POST', '/api/v1/AgentConfigRecord', { json: { name: 'switcher', runner: 'echo', model: 'echo-1' } })).body
    expect((await turn({ agent_id: agent.id, text: 'one' })).at(-1)!.type).toBe('message')
    await p.call('PATCH', `/api/v1/AgentConfigRecord/${agent.id}`, { json: { model: 'echo-9' } })
    const missing = await turn({ agent_id: agent.id, text: 'two' })
    expect(missing.at(-1)).toMatchObject({ type: 'error', error_type: 'model_not_found', details: 'Models: echo-1.' })
    await p.call('PATCH', `/api/v1/AgentConfigRecord/${agent.id}`, { json: { model: 'echo-1', timeout_seconds: 1 } })
    const slow = await turn({ agent_id: agent.id, text: '/slow 300 a b c d e f' })
    expect(slow.at(-1)).toMatchObject({ type: 'error', error_type: 'timeout' })
    const stored = (await messagesOf(slow[0]!.conversation_id)).at(-1)!
    expect(stored.status).toBe('error')
    expect(String(stored.text)).toStartWith('Echo:')
  })

  test('an agent whose runner is not installed answers with an error event', async () => {
    const agent = (await p.call('POST', '/api/v1/AgentConfigRecord', { json: { name: 'orphan', runner: 'nowhere' } })).body
    const events = await turn({ agent_id: agent.id, text: 'hi' })
    expect(events.at(-1)).toMatchObject({ type: 'error', error_type: 'runner_unavailable', text: 'The agent\'s runner "nowhere" is not installed.' })
  })
})

describe('abort', () => {
  test('stops the running turn; the stream ends with aborted and the partial answer is marked', async () => {
    const started = await startTurn({ agent_id: demo, text: '/slow 150 one two three four five six seven eight' })
    const events: Event[] = []
    for await (const event of started.events()) {
      events.push(event)
      if (event.type === 'stream' && events.filter((e) => e.type === 'stream').length === 2) {
        const conversation = events[0]!.conversation_id
        expect((await p.call('POST', '/api/chat/abort', { json: { conversation_id: conversation.toUpperCase() } })).body).toEqual({ aborted: true })
      }
    }
    expect(events.at(-1)).toMatchObject({ type: 'aborted' })
    expect(events.filter((e) => e.type === 'stream').length).toBeLessThan(9)
    const stored = (await messagesOf(events[0]!.conversation_id)).at(-1)!
    expect(stored).toMatchObject({ role: 'agent', status: 'aborted' })
    expect(String(stored.text)).toStartWith('Echo: one')
    // Nothing left to stop.
    expect((await p.call('POST', '/api/chat/abort', { json: { conversation_id: events[0]!.conversation_id } })).body).toEqual({ aborted: false })
  })

  test('a client that stopped reading does not keep the conversation once its turn is aborted; the id may be in any case', async () => {
    const words = Array.from({ length: 400 }, (_, i) => `w${i}`).join(' ')
    const started = await startTurn({ agent_id: demo, text: `/slow 1 ${words}` })
    const { value } = await started.events().next()
    const conversation = value!.conversation_id
    // The reader goes quiet: the stream fills and the turn's writes wait on it.
    await Bun.sleep(100)
    expect((await p.call('POST', '/api/chat/abort', { json: { conversation_id: conversation.toUpperCase() } })).body).toEqual({ aborted: true })
    await until(async () => (await turn({ agent_id: demo, conversation_id: conversation, text: 'after' })).at(-1)?.type === 'message', {
      what: 'the conversation to take a new turn',
    })
    expect((await messagesOf(conversation)).map((m) => m.status)).toContain('aborted')
  })

  test('one turn at a time per conversation', async () => {
    const first = await startTurn({ agent_id: demo, text: '/slow 100 a b c d' })
    const events = first.events()
    const { value } = await events.next()
    const second = await startTurn({ agent_id: demo, conversation_id: value!.conversation_id, text: 'me too' })
    expect(second.response.status).toBe(409)
    await Array.fromAsync(events)
  })
})

describe('bad requests', () => {
  test('401, 404 for an agent or conversation the caller cannot see, 409 for a disabled agent, 422 for a bad body', async () => {
    expectProblem(await p.call('POST', '/api/chat', { as: null, json: { agent_id: demo, text: 'x' } }), 401, 'unauthorized')
    const outsider = await p.createUser({ companyId: await p.createCompany(), role: 'owner' })
    expectProblem(await p.call('POST', '/api/chat', { as: outsider, json: { agent_id: demo, text: 'x' } }), 404, 'not_found')
    const mine = await turn({ agent_id: demo, text: 'private' })
    const colleague = await p.createUser({ role: 'member' })
    expectProblem(await p.call('POST', '/api/chat', { as: colleague, json: { agent_id: demo, conversation_id: mine[0]!.conversation_id, text: 'x' } }), 404, 'not_found')
    expectProblem(await p.call('POST', '/api/chat/abort', { as: colleague, json: { conversation_id: mine[0]!.conversation_id } }), 404, 'not_found')
    const off = (await p.call('POST', '/api/v1/AgentConfigRecord', { json: { name: 'off', enabled: false } })).body
    expectProblem(await p.call('POST', '/api/chat', { json: { agent_id: off.id, text: 'x' } }), 409, 'conflict')
    for (const body of [{ agent_id: demo }, { agent_id: demo, text: '   ' }, { agent_id: 'demo', text: 'x' }, { agent_id: demo, text: 'x', extra: 1 }]) {
      expectProblem(await p.call('POST', '/api/chat', { json: body }), 422, 'validation_error')
    }
  })
})

describe('session expiry', () => {
  test('after session_ttl_minutes of silence the next answer comes after a notice, and the model starts afresh', async () => {
    const agent = (await p.call('POST', '/api/v1/AgentConfigRecord', { json: { name: 'forgetful', context_options: { session_ttl_minutes: 5 } } })).body
    const first = await turn({ agent_id: agent.id, text: 'remember this' })
    const conversation = first[0]!.conversation_id
    // Six minutes pass, as far as the store can tell.
    await p.store.db
      .updateTable('webchat_messages')
      .set({ created_at: sql`created_at - interval '6 minutes'` })
      .where('conversation_id', '=', conversation)
      .execute()
    const second = await turn({ agent_id: agent.id, conversation_id: conversation, text: 'still there?' })
    const notice = 'The previous session ended after 5 minutes without activity, so this conversation starts afresh.'
    expect(second.map((e) => e.type).slice(0, 3)).toEqual(['conversation', 'typing', 'notice'])
    expect(second.find((e) => e.type === 'notice')!.text).toBe(notice)
    expect(second.at(-1)!.text).toBe('Echo: still there?')
    // The notice is the platform's, kept for the people in the conversation; the agent's reply is its own.
    const stored = await p.store.db.selectFrom('webchat_messages').select(['role', 'text']).where('conversation_id', '=', conversation).orderBy('id').execute()
    expect(stored.slice(2)).toEqual([
      { role: 'user', text: 'still there?' },
      { role: 'system', text: notice },
      { role: 'agent', text: 'Echo: still there?' },
    ])
    // …and the model never reads it back as something it said.
    expect(await history(p.store.db, conversation)).toEqual([
      { role: 'user', content: 'remember this' },
      { role: 'assistant', content: 'Echo: remember this' },
      { role: 'user', content: 'still there?' },
      { role: 'assistant', content: 'Echo: still there?' },
    ])
    const third = await turn({ agent_id: agent.id, conversation_id: conversation, text: 'and now?' })
    expect(third.at(-1)!.text).toBe('Echo: and now?')
  })
})

describe('an agent whose web chat channel is switched off', () => {
  test('takes no conversation through the API or the web chat, is not offered on /chat, and takes them again once on', async () => {
    const agent = (await p.call('POST', '/api/v1/AgentConfigRecord', { json: { name: 'phone-only', channels: { webchat: { enabled: false } } } })).body
    const refused = expectProblem(await p.call('POST', '/api/chat', { json: { agent_id: agent.id, text: 'hello' } }), 409, 'conflict')
    expect(refused.detail).toBe('phone-only does not take conversations in the web chat (its web chat channel is switched off).')
    // Nothing was started or stored for the refused message.
    expect(rowsOf((await p.call('GET', `/api/v1/WebchatConversation?agent_id=eq.${agent.id}`)).body)).toEqual([])
    // A conversation begun while it was on cannot go on either.
    await p.call('PATCH', `/api/v1/AgentConfigRecord/${agent.id}`, { json: { channels: { webchat: { enabled: true } } } })
    const events = await turn({ agent_id: agent.id, text: 'while on' })
    expect(events.at(-1)).toMatchObject({ type: 'message', text: 'Echo: while on' })
    const conversation = events[0]!.conversation_id
    await p.call('PATCH', `/api/v1/AgentConfigRecord/${agent.id}`, { json: { channels: { webchat: { enabled: false } } } })
    expectProblem(await p.call('POST', '/api/chat', { json: { conversation_id: conversation, text: 'and now?' } }), 409, 'conflict')

    const page = await (await p.admin.request('/chat', { headers: { cookie: await consoleCookie(p) } })).text()
    expect(page).toContain('>demo<')
    expect(page).not.toContain('phone-only')
  })
})
