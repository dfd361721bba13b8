import { expect, test } from 'bun:test'
import { CLUSTER_NEEDS_POSTGRES, useCluster, type Cluster } from '../helpers/cluster.ts'
import { TEST_DATABASE_URL } from '../helpers/database.ts'
import { until } from '../helpers/until.ts'
import { assembled, openChatSocket, type Frame } from '../helpers/web-chat.ts'

// Two people on two platform processes of one PostgreSQL, each with the web chat open on their own process:
// what one says, types or gets answered reaches the other through the bus, and a socket that comes back on the
// other process mid-answer still gets the whole answer once.

const cluster = useCluster({ processes: 2 })
const kind = (type: string) => (frame: Frame) => frame.type === type

function clusterTest(name: string, body: (c: Cluster) => Promise<void>): void {
  if (!TEST_DATABASE_URL) {
    test.skip(`${name} (${CLUSTER_NEEDS_POSTGRES})`, () => {})
    return
  }
  test(name, async () => {
    try {
      await body(cluster())
    } catch (error) {
      console.error(`"${name}" failed; what the processes logged:\n${cluster().output().split('\n').slice(-60).join('\n')}`)
      throw error
    }
  }, 60_000)
}

/** A member signed in (a session cookie), who starts a conversation with a new echo agent. */
async function setUp(c: Cluster) {
  const name = `helper-${crypto.randomUUID().slice(0, 6)}`
  const agent = await c.call(c.url, 'POST', '/api/v1/AgentConfigRecord', { json: { name } })
  expect(agent.status).toBe(201)
  const [a, b] = [await c.createUser(), await c.createUser()]
  const [cookieA, cookieB] = [await c.sessionCookie(a), await c.sessionCookie(b)]
  const [p0, p1] = c.processes
  const origin = { origin: p0!.api }
  const conversation = await c.call(p0!.api, 'POST', '/api/v1/WebchatConversation', { cookie: cookieA, headers: origin, json: { agent_id: agent.body.id } })
  expect(conversation.status).toBe(201)
  return { name, a, b, cookieA, cookieB, id: conversation.body.id as string, p0: p0!, p1: p1! }
}

clusterTest('A on one process and B on the other: messages, typing, unread and the mention answer cross over', async (c) => {
  const { name, b, cookieA, cookieB, id, p0, p1 } = await setUp(c)
  const added = await c.call(p0.api, 'POST', '/api/v1/WebchatParticipant', { cookie: cookieA, headers: { origin: p0.api }, json: { conversation_id: id, user_id: b.userId } })
  expect(added.status).toBe(201)
  const sa = openChatSocket(p0.admin, cookieA, { conversationId: id })
  const sb = openChatSocket(p1.admin, cookieB, { conversationId: id })
  const bElsewhere = openChatSocket(p1.admin, cookieB)
  try {
    await Promise.all([sa.opened, sb.opened, bElsewhere.opened])
    sa.send({ type: 'user_typing', conversation_id: id })
    await sb.next(kind('user_typing'), 'A typing, at B on the other process')
    sa.send({ type: 'message', conversation_id: id, text: 'across the processes' })
    expect(await sb.next(kind('user_message'), 'A’s message at B')).toMatchObject({ text: 'across the processes' })
    expect(await bElsewhere.next(kind('unread'), 'the unread notice at B’s other page')).toMatchObject({ conversation_id: id })
    sb.send({ type: 'message', conversation_id: id, text: `@${name} answer us both` })
    const atA = await sa.next(kind('message'), 'the answer at A')
    expect(atA.text).toBe(`Echo: @${name} answer us both`)
    const atB = await sb.next(kind('message'), 'the answer at B')
    expect(atB.message_id).toBe(atA.message_id)
    // Everything arrives once: up to the next answer (a conversation's events keep their order on every process),
    // one answer on each socket.
    sa.send({ type: 'message', conversation_id: id, text: `@${name} once more` })
    for (const [socket, who] of [[sa, 'A'], [sb, 'B']] as const) {
      await socket.next((f) => f.type === 'message' && f.text === `Echo: @${name} once more`, `the next answer at ${who}`)
      expect(socket.frames.filter(kind('message')).map((f) => f.text)).toEqual([`Echo: @${name} answer us both`, `Echo: @${name} once more`])
    }
  } finally {
    for (const s of [sa, sb, bElsewhere]) s.close()
  }
})

clusterTest('a socket that comes back on the other process mid-answer gets the whole answer once', async (c) => {
  const { cookieA, id, p0, p1 } = await setUp(c)
  const first = openChatSocket(p0.admin, cookieA, { conversationId: id })
  await first.opened
  first.send({ type: 'message', conversation_id: id, text: '/slow 100 one two three four five six seven eight' })
  const said = await first.next(kind('user_message'), 'the message')
  await until(() => first.frames.filter(kind('stream')).length >= 3, { what: 'three pieces' })
  first.close()
  await first.closed
  const second = openChatSocket(p1.admin, cookieA, { conversationId: id, after: said.message_id })
  try {
    const final = await second.next(kind('message'), 'the answer on the other process')
    const text = assembled(first, second)
    expect(text).toBe('Echo: one two three four five six seven eight')
    expect(final.text).toBe(text)
    // The resume reached the process running the turn: the answer so far came from there, from the start.
    expect(second.frames.some((f) => f.type === 'stream' && f.offset === 0)).toBe(true)
  } finally {
    second.close()
  }
})
