import { describe, expect, test } from 'bun:test'
import { ActiveTurns } from '../../src/chat/active-turns.ts'
import { MemoryTurnLocks } from '../../src/chat/turn-locks.ts'
import { MemoryBus } from '../../src/events/memory.ts'
import { silentLogger } from '../../src/logger.ts'
import { chatTurn, startChatTurn } from '../helpers/chat.ts'
import { usePlatform } from '../helpers/platform.ts'

// A person who spoke in a conversation a moment ago has the conversation's lock, and their place under the cap of
// turns per person, taken beside their next turn's reads (two round trips less before the first token). The
// reservation must never outlive what it was for.

describe('ActiveTurns.reserve', () => {
  const turnsOver = (locks = new MemoryTurnLocks()) => ({ locks, turns: new ActiveTurns(locks, new MemoryBus(silentLogger)) })

  test('a reservation handed to start is the turn’s lock, freed when the turn finishes', async () => {
    const { locks, turns } = turnsOver()
    const reservation = turns.reserve('c', 'someone')
    const controller = await turns.start('c', undefined, reservation)
    expect(await locks.held('c')).toBe(true)
    await turns.unreserve(reservation) // handed over: not the reserver's to give back
    expect(await locks.held('c')).toBe(true)
    await turns.finish('c', controller)
    expect(await locks.held('c')).toBe(false)
  })

  test('a reservation given back frees the lock; one taken while a turn runs refuses the start and frees nothing', async () => {
    const { locks, turns } = turnsOver()
    await turns.unreserve(turns.reserve('c', 'someone'))
    expect(await locks.held('c')).toBe(false)

    const running = await turns.start('c')
    const late = turns.reserve('c', 'someone')
    expect(await late.taken).toBe(false)
    await expect(turns.start('c', undefined, late)).rejects.toMatchObject({ code: 'conflict' })
    await turns.unreserve(late)
    expect(await locks.held('c')).toBe(true)
    await turns.finish('c', running)
  })

  test('a reservation spent on a start that was refused cannot free the lock a later turn took', async () => {
    const locks = new MemoryTurnLocks()
    // The person's one place is taken, so their next start is refused; the lock of its conversation is not kept.
    const capped = new ActiveTurns(locks, new MemoryBus(silentLogger), 1)
    const busy = await capped.start('elsewhere', 'someone')
    const reservation = capped.reserve('c', 'someone')
    await expect(capped.start('c', 'someone', reservation)).rejects.toMatchObject({ code: 'rate_limited' })
    // Meanwhile another turn takes the conversation; giving back the spent reservation must leave it alone.
    const other = new ActiveTurns(locks, new MemoryBus(silentLogger))
    const running = await other.start('c')
    await capped.unreserve(reservation)
    expect(await locks.held('c')).toBe(true)
    await other.finish('c', running)
    await capped.finish('elsewhere', busy)
  })

  test('a reservation takes the person’s place with the lock, and gives both back', async () => {
    const locks = new MemoryTurnLocks()
    const turns = new ActiveTurns(locks, new MemoryBus(silentLogger), 1)
    const reservation = turns.reserve('c', 'someone')
    expect(await reservation.taken).toBe(true)
    expect(await locks.acquireWithPlace('probe', 'someone', 1)).toBe('full')
    await turns.unreserve(reservation)
    expect(await locks.held('c')).toBe(false)
    expect(await locks.acquireWithPlace('probe', 'someone', 1)).toBe('taken')
    await locks.release('probe')

    // Handed to a turn, the place is the turn's until it finishes.
    const handed = turns.reserve('c', 'someone')
    const controller = await turns.start('c', 'someone', handed)
    expect(await locks.acquireWithPlace('probe', 'someone', 1)).toBe('full')
    await turns.finish('c', controller)
    expect(await locks.acquireWithPlace('probe', 'someone', 1)).toBe('taken')
  })

  test('a reservation that did not get the lock never touches the place of the turn that holds it', async () => {
    const locks = new MemoryTurnLocks()
    const turns = new ActiveTurns(locks, new MemoryBus(silentLogger), 1)
    const running = await turns.start('c', 'first')
    const late = new ActiveTurns(locks, new MemoryBus(silentLogger), 1).reserve('c', 'second')
    expect(await late.taken).toBe(false)
    await turns.unreserve(late)
    expect(await locks.acquireWithPlace('probe', 'first', 1)).toBe('full')
    expect(await locks.held('c')).toBe(true)
    await turns.finish('c', running)
  })

  test('a reservation serves only a start of its own conversation', async () => {
    const { turns } = turnsOver()
    const reservation = turns.reserve('c', 'someone')
    await expect(turns.start('d', undefined, reservation)).rejects.toThrow('a reservation serves one start of its own conversation')
    await turns.unreserve(reservation)
  })
})

describe('through POST /api/chat', () => {
  const p = usePlatform()

  async function sharedConversation() {
    const [a, b] = [await p().createUser(), await p().createUser()]
    const agent = (await p().call('POST', '/api/v1/AgentConfigRecord', { json: { name: `agent-${crypto.randomUUID().slice(0, 8)}` } })).body
    const first = await chatTurn(p(), { agent_id: agent.id, text: 'hello' }, { as: a })
    const conversation = first[0]!.conversation_id as string
    const added = await p().call('POST', '/api/v1/WebchatParticipant', { json: { conversation_id: conversation, user_id: b.userId }, as: a })
    expect(added.status).toBe(201)
    return { a, b, agent, conversation, participant: added.body.id }
  }

  test('a participant who spoke and was then removed is refused, and leaves the conversation free for the others', async () => {
    const { a, b, agent, conversation, participant } = await sharedConversation()
    // B speaks (so B's next turn would reserve early), then is removed.
    expect((await chatTurn(p(), { conversation_id: conversation, text: `@${agent.name} hi` }, { as: b })).at(-1)!.type).toBe('message')
    expect((await p().call('DELETE', `/api/v1/WebchatParticipant/${participant}`, { as: a })).status).toBe(204)
    for (let i = 0; i < 3; i++) {
      const refused = await startChatTurn(p(), { conversation_id: conversation, text: `@${agent.name} still here?` }, b)
      expect(refused.response.status).toBe(404)
      // The next turn of someone who may speak is admitted: no lock was left behind.
      expect((await chatTurn(p(), { conversation_id: conversation, text: `@${agent.name} go on` }, { as: a })).at(-1)!.type).toBe('message')
    }
  })

  test('a request refused after its reads (the wrong agent named) gives back the lock its sender reserved', async () => {
    const { a, b, agent, conversation } = await sharedConversation()
    expect((await chatTurn(p(), { conversation_id: conversation, text: `@${agent.name} one` }, { as: b })).at(-1)!.type).toBe('message')
    const other = (await p().call('POST', '/api/v1/AgentConfigRecord', { json: { name: `other-${crypto.randomUUID().slice(0, 8)}` } })).body
    const wrong = await startChatTurn(p(), { conversation_id: conversation, agent_id: other.id, text: 'hi' }, b)
    expect(wrong.response.status).toBe(422)
    expect((await chatTurn(p(), { conversation_id: conversation, text: `@${agent.name} two` }, { as: a })).at(-1)!.type).toBe('message')
  })

  test('a message the agent is not asked to answer gives back the lock its sender reserved', async () => {
    const { a, b, agent, conversation } = await sharedConversation()
    expect((await chatTurn(p(), { conversation_id: conversation, text: `@${agent.name} one` }, { as: b })).at(-1)!.type).toBe('message')
    const quiet = await chatTurn(p(), { conversation_id: conversation, text: 'just between us' }, { as: b })
    expect(quiet.map((e) => e.type)).toEqual(['conversation', 'notice'])
    expect((await chatTurn(p(), { conversation_id: conversation, text: `@${agent.name} two` }, { as: a })).at(-1)!.type).toBe('message')
  })

  test('two turns at once by one person who spoke lately: one runs, the other is refused, and the next is admitted', async () => {
    const { a, agent, conversation } = await sharedConversation()
    const slow = await startChatTurn(p(), { conversation_id: conversation, text: `@${agent.name} /slow 50 a b c d e f` }, a)
    expect(slow.response.status).toBe(200)
    const events = slow.events()
    expect((await events.next()).value?.type).toBe('conversation')
    const second = await startChatTurn(p(), { conversation_id: conversation, text: `@${agent.name} me too` }, a)
    expect(second.response.status).toBe(409)
    expect(await second.response.json()).toMatchObject({ code: 'conflict' })
    for await (const _ of events);
    expect((await chatTurn(p(), { conversation_id: conversation, text: `@${agent.name} after` }, { as: a })).at(-1)!.type).toBe('message')
  })
})
