import { beforeAll, expect, test } from 'bun:test'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { CLUSTER_NEEDS_POSTGRES, useCluster, type Cluster, type Member } from '../helpers/cluster.ts'
import { TEST_DATABASE_URL } from '../helpers/database.ts'
import { connectMcp, NOTES_PLUGIN } from '../helpers/mcp.ts'
import { expectProblem } from '../helpers/problem.ts'
import { until } from '../helpers/until.ts'
import { openChatSocket } from '../helpers/web-chat.ts'

// Three platform processes on one PostgreSQL database behind a round-robin proxy must behave as one platform:
// one rate limit, one sign-in throttle, one set of running turns, agents reloaded everywhere, permissions and MCP
// sessions that hold whichever process a request lands on.
//
// One cluster serves every test, so the tests run in this order on purpose:
// - the permission test comes before anything else touches MCP or chat on process B, so that B's copy of the
//   company's MCP rules is loaded by that test itself and is certainly still within its cache time when the rule
//   changes (else a copy loaded by an earlier test could expire in between and hide the stale cache);
// - the sign-in throttle test comes last: it empties the sign-in bucket of 127.0.0.1, the address every request
//   of these tests comes from, so nobody can sign in after it.

const API_BURST = 40
const LOGIN_BURST = 4

const cluster = useCluster({
  processes: 3,
  env: {
    // The fixture plugin `notes`: built-in MCP tools (whoami, add-note) served at /mcp/notes.
    ...NOTES_PLUGIN,
    // Buckets that hardly refill (one token per 100 s, per 10 min), so a count is exact however slow the machine.
    // The bucket is per user: the throttle test spends a user of its own, and the superadmin's setup calls here
    // stay well below the burst even once the processes share it.
    SWITCHBOARD_API_RATE_BURST: String(API_BURST),
    SWITCHBOARD_API_RATE_PER_SECOND: '0.01',
    SWITCHBOARD_LOGIN_RATE_BURST: String(LOGIN_BURST),
    SWITCHBOARD_LOGIN_RATE_PER_MINUTE: '0.1',
  },
})

let demo: string

if (TEST_DATABASE_URL) {
  beforeAll(async () => {
    const c = cluster()
    demo = (await c.call(c.url, 'GET', '/api/v1/AgentConfigRecord?name=eq.demo')).body.data[0]!.id
    // Everyone in the company may use the notes tools unless a rule of their own says otherwise.
    const allow = await c.call(c.url, 'POST', '/api/v1/McpPermission', { json: { server: 'notes', tool: '*', effect: 'allow' } })
    expect(allow.status).toBe(201)
  })
}

/** A test on the cluster; without PostgreSQL it skips, saying why. A failure also prints what the processes logged last. */
function clusterTest(name: string, body: (c: Cluster) => Promise<void>): void {
  if (!TEST_DATABASE_URL) {
    test.skip(`${name} (${CLUSTER_NEEDS_POSTGRES})`, () => {})
    return
  }
  test(
    name,
    async () => {
      try {
        await body(cluster())
      } catch (error) {
        console.error(`"${name}" failed; the last lines of each process:\n${lastLines(cluster().output(), 40)}`)
        throw error
      }
    },
    60_000,
  )
}

function lastLines(text: string, count: number): string {
  return text
    .split(/(?=--- platform process)/)
    .map((part) => {
      const lines = part.trimEnd().split('\n')
      return [lines[0], ...lines.slice(1).slice(-count)].join('\n')
    })
    .join('\n')
}

/** Which processes served the requests the proxy passed on since `mark` (a length of cluster.forwarded). */
function servedBy(c: Cluster, mark: number, which: (f: Cluster['forwarded'][number]) => boolean = () => true): number[] {
  return [...new Set(c.forwarded.slice(mark).filter(which).map((f) => f.backend))].sort()
}

type ChatEvent = Record<string, any> & { type: string }

/** POST /api/chat on one process as the superadmin; its NDJSON events are read as they arrive. `hangUp` stops reading. */
async function openTurn(c: Cluster, base: string, json: Record<string, unknown>) {
  const hangUp = new AbortController()
  const response = await fetch(`${base}/api/chat`, {
    method: 'POST',
    headers: { authorization: `Bearer ${c.admin.token}`, 'content-type': 'application/json' },
    body: JSON.stringify(json),
    signal: hangUp.signal,
  })
  if (response.status !== 200) throw new Error(`POST /api/chat answered ${response.status}: ${await response.text()}`)
  async function* read(): AsyncGenerator<ChatEvent> {
    let buffer = ''
    for await (const chunk of response.body!.pipeThrough(new TextDecoderStream())) {
      buffer += chunk
      for (let newline = buffer.indexOf('\n'); newline !== -1; newline = buffer.indexOf('\n')) {
        yield JSON.parse(buffer.slice(0, newline))
        buffer = buffer.slice(newline + 1)
      }
    }
  }
  const events = read()
  const first = await events.next()
  if (first.value?.type !== 'conversation') throw new Error(`the turn began with ${JSON.stringify(first.value)}, not its conversation`)
  // A client that hangs up stops its turn, as an abort would: a test that failed half-way leaves nothing running.
  return { conversation: first.value.conversation_id as string, events, hangUp: () => hangUp.abort() }
}

/** A turn of the echo runner that takes about 3.3 s: 11 words, 300 ms before each. */
const SLOW_TEXT = '/slow 300 a b c d e f g h i j'

/** What calling `whoami` answers: its text, or why it was refused (an HTTP error or a tool error). */
async function whoami(client: Client): Promise<string> {
  try {
    const result = await client.callTool({ name: 'whoami', arguments: {} })
    const text = (result.content as Array<{ text?: string }>)[0]?.text ?? ''
    return result.isError ? `refused: ${text}` : text
  } catch (error) {
    return `refused: ${(error as Error).message}`
  }
}

/** A raw MCP request in a session, as a host would send it, to one process. */
function inSession(c: Cluster, base: string, as: Member, session: string) {
  return c.call(base, 'POST', '/mcp/notes', {
    as,
    headers: { accept: 'application/json, text/event-stream', 'mcp-session-id': session, 'mcp-protocol-version': '2025-06-18' },
    json: { jsonrpc: '2.0', id: 1, method: 'tools/list', params: {} },
  })
}

type LiveAgent = { agent_id: string; generation: number; started_at: string }

async function liveAgents(c: Cluster, base: string): Promise<LiveAgent[]> {
  const reply = await c.call(base, 'GET', '/api/agents')
  if (reply.status !== 200) throw new Error(`GET /api/agents answered ${reply.status}`)
  return reply.body.data
}

clusterTest('one API rate limit across the processes: a user gets the burst once, not once per process', async (c) => {
  // A user of their own: the bucket is per user, so no other test's budget is spent.
  const cookie = await c.sessionCookie(await c.createUser())
  const mark = c.forwarded.length
  // All at once: the limit must hold for concurrent requests too, not only for one after another.
  const replies = await Promise.all(
    Array.from({ length: 100 }, async () => {
      const response = await fetch(`${c.url}/api/v1/AgentConfigRecord?select=id`, { headers: { cookie } })
      await response.body?.cancel()
      return { status: response.status, retryAfter: response.headers.get('retry-after') }
    }),
  )
  expect(servedBy(c, mark)).toEqual([0, 1, 2])
  const allowed = replies.filter((r) => r.status === 200).length
  const limited = replies.filter((r) => r.status === 429)
  // Today each process keeps its own bucket, so all 100 pass (34 + 33 + 33, each under its own burst of 40).
  expect({ allowed, limited: limited.length }).toEqual({ allowed: API_BURST, limited: 100 - API_BURST })
  for (const refused of limited) expect(Number(refused.retryAfter)).toBeGreaterThan(0)
})

clusterTest('a permission revoked on one process is refused on another at once', async (c) => {
  const [a, b] = c.processes
  const member = await c.addMember()
  const client = await connectMcp(b!.api, member, 'notes')
  try {
    expect((await client.listTools()).tools.map((t) => t.name)).toContain('whoami')
    expect(await whoami(client)).toBe(`user ${member.userId} of ${member.companyId}`)

    const deny = await c.call(a!.api, 'POST', '/api/v1/McpPermission', { json: { user_id: member.userId, server: 'notes', tool: '*', effect: 'deny' } })
    expect(deny.status).toBe(201)
    // The very next call on B, no pause: a revoked permission must not outlive its revocation anywhere. Today B
    // keeps its copy of the rules for 5 s (src/mcp/directory.ts), so the call is still allowed.
    expect(await whoami(client)).toMatch(/^refused: .*may not use/)
  } finally {
    await client.close()
  }
})

clusterTest('an MCP session spread over the processes by round robin works, and its end is seen by all of them', async (c) => {
  const member = await c.addMember()
  const mark = c.forwarded.length
  const transport = new StreamableHTTPClientTransport(new URL(`${c.url}/mcp/notes`), { requestInit: { headers: { authorization: `Bearer ${member.token}` } } })
  const client = new Client({ name: 'scale-out-host', version: '1.0.0' })
  try {
    // initialize lands on one process; notifications/initialized and the rest land on the others in turn. Today
    // the second request already reaches a process that does not know the session and answers 404.
    await client.connect(transport)
    const session = transport.sessionId!
    expect(session).toBeString()
    for (let i = 0; i < 3; i++) {
      expect((await client.listTools()).tools.map((t) => t.name).sort()).toEqual(['add-note', 'whoami'])
      expect(await whoami(client)).toBe(`user ${member.userId} of ${member.companyId}`)
    }
    // Every process served some of the session's requests, and every one of its POSTs succeeded.
    const ofSession = (f: Cluster['forwarded'][number]) => f.session === session && f.method === 'POST'
    expect(servedBy(c, mark, ofSession)).toEqual([0, 1, 2])
    expect(c.forwarded.slice(mark).filter((f) => ofSession(f) && f.status !== 200 && f.status !== 202)).toEqual([])

    // DELETE ends the session; no process may serve it afterwards.
    await transport.terminateSession()
    for (const p of c.processes) {
      expectProblem(await inSession(c, p.api, member, session), 404, 'not_found')
    }
  } finally {
    await client.close()
  }
})

clusterTest('a turn running on one process is aborted from another', async (c) => {
  const [a, b] = c.processes
  const turn = await openTurn(c, a!.api, { agent_id: demo, text: SLOW_TEXT })
  try {
    const abortedAt = performance.now()
    const abort = await c.call(b!.api, 'POST', '/api/chat/abort', { json: { conversation_id: turn.conversation } })
    expect(abort.status).toBe(200)
    // Today B knows only its own turns, so it answers false and the turn on A runs on.
    expect(abort.body).toEqual({ aborted: true })
    const rest = await Array.fromAsync(turn.events)
    expect(rest.at(-1)).toMatchObject({ type: 'aborted' })
    // Stopped, not finished: the whole answer would take about 3.3 s more.
    expect(performance.now() - abortedAt).toBeLessThan(2_000)
    expect(rest.filter((e) => e.type === 'stream').length).toBeLessThan(11)
  } finally {
    turn.hangUp()
  }
})

clusterTest('one turn at a time per conversation, whichever process the second one reaches', async (c) => {
  const [a, b] = c.processes
  const turn = await openTurn(c, a!.api, { agent_id: demo, text: SLOW_TEXT })
  try {
    const second = await c.call(b!.api, 'POST', '/api/chat', { json: { agent_id: demo, conversation_id: turn.conversation, text: 'me too' } })
    // Today B sees no turn running there and starts a second one (200 and a stream).
    expect(second.status).toBe(409)
    expectProblem(second, 409, 'conflict')
  } finally {
    turn.hangUp()
  }
})

clusterTest('a reload on one process reloads the agent on every process', async (c) => {
  const [a, b] = c.processes
  const before = (await liveAgents(c, b!.api)).find((i) => i.agent_id === demo)
  expect(before).toBeDefined()
  const reloaded = await c.call(a!.api, 'POST', `/api/agents/${demo}/reload`)
  expect(reloaded.status).toBe(200)
  // Generations count per process, so "another instance" is all that can be compared. Today B keeps its old one.
  await until(
    async () => {
      const now = (await liveAgents(c, b!.api)).find((i) => i.agent_id === demo)
      return now !== undefined && (now.generation !== before!.generation || now.started_at !== before!.started_at)
    },
    { what: 'process B to run a new instance of the demo agent after the reload on A', timeoutMs: 2_000 },
  )
})

clusterTest('an agent disabled on one process stops on every process, and takes no turn there from that moment', async (c) => {
  const [a, b] = c.processes
  const made = await c.call(a!.api, 'POST', '/api/v1/AgentConfigRecord', { json: { name: `scale-out-${crypto.randomUUID().slice(0, 8)}` } })
  expect(made.status).toBe(201)
  const id: string = made.body.id
  // Live on B (an agent made after boot starts where it is first reloaded or talked to).
  expect((await c.call(b!.api, 'POST', `/api/agents/${id}/reload`)).status).toBe(200)
  expect((await liveAgents(c, b!.api)).some((i) => i.agent_id === id)).toBe(true)
  // A turn on B, so B holds the agent as turns read it.
  expect((await c.call(b!.api, 'POST', '/api/chat', { json: { agent_id: id, text: 'hello' } })).status).toBe(200)

  const disabled = await c.call(a!.api, 'PATCH', `/api/v1/AgentConfigRecord/${id}`, { json: { enabled: false } })
  expect(disabled.status).toBe(200)
  // The very next turn on B, no pause: the write answered once every process had dropped its copy.
  const refused = await c.call(b!.api, 'POST', '/api/chat', { json: { agent_id: id, text: 'still there?' } })
  expect(refused.status).toBe(409)
  expectProblem(refused, 409, 'conflict')
  // Today B's instance stays until someone reloads it there.
  await until(async () => !(await liveAgents(c, b!.api)).some((i) => i.agent_id === id), {
    what: 'the disabled agent to vanish from process B’s live agents',
    timeoutMs: 2_000,
  })
})

clusterTest('someone removed from a conversation on one process loses it at once on another: the socket closes, frames are refused', async (c) => {
  const [a, b] = c.processes
  const owner = await c.addMember()
  const guest = await c.addMember()
  const made = await c.call(a!.api, 'POST', '/api/v1/WebchatConversation', { as: owner, json: { agent_id: demo } })
  expect(made.status).toBe(201)
  const conversation: string = made.body.id
  const added = await c.call(a!.api, 'POST', '/api/v1/WebchatParticipant', { as: owner, json: { conversation_id: conversation, user_id: guest.userId } })
  expect(added.status).toBe(201)

  const cookie = await c.sessionCookie(guest)
  const watching = openChatSocket(b!.admin, cookie, { conversationId: conversation })
  const listing = openChatSocket(b!.admin, cookie)
  try {
    await Promise.all([watching.opened, listing.opened])
    expect((await c.call(a!.api, 'DELETE', `/api/v1/WebchatParticipant/${added.body.id}`, { as: owner })).status).toBe(204)
    const closedAt = performance.now()
    expect((await watching.closed).code).toBe(4003)
    // At once: the removal travels on the bus, not on the next periodic check of the socket.
    expect(performance.now() - closedAt).toBeLessThan(2_000)
    // The socket of the list page stays, and what it sends about that conversation is refused.
    listing.send({ type: 'user_typing', conversation_id: conversation })
    listing.send({ type: 'message', conversation_id: conversation, text: 'still here?' })
    await listing.next((f) => listing.frames.filter((e) => e.type === 'error').length === 2 && f.type === 'error', 'both frames refused')
    expect(listing.frames.filter((f) => f.type === 'error').map((f) => f.error_type)).toEqual(['not_found', 'not_found'])
    const messages = await c.call(a!.api, 'GET', `/api/v1/WebchatMessage?conversation_id=eq.${conversation}`, { as: owner })
    expect(messages.body.data).toEqual([])
  } finally {
    watching.close()
    listing.close()
  }
})

// Last: it empties the sign-in bucket of 127.0.0.1 (see the top of the file).
clusterTest('someone SCIM deactivates on one process is signed out on every process at once: their session and token stop working', async (c) => {
  const member = await c.addMember()
  const cookie = await c.sessionCookie(member)
  const scim = (await c.call(c.processes[0]!.api, 'POST', '/api/v1/ScimToken', { json: { name: 'cluster' } })).body as { token: string }
  // Every process has the person's credentials in its cache.
  for (const process of c.processes) {
    expect((await c.call(process.api, 'GET', '/api/me', { as: member })).status).toBe(200)
    expect((await c.call(process.api, 'GET', '/api/me', { as: null, cookie })).status).toBe(200)
  }
  const off = await fetch(`${c.processes[0]!.api}/scim/v2/Users/${member.userId}`, {
    method: 'PATCH',
    headers: { authorization: `Bearer ${scim.token}`, 'content-type': 'application/scim+json', accept: 'application/scim+json' },
    body: JSON.stringify({ schemas: ['urn:ietf:params:scim:api:messages:2.0:PatchOp'], Operations: [{ op: 'replace', path: 'active', value: false }] }),
  })
  expect(off.status).toBe(200)
  // The very next request on each of the others, no pause.
  for (const process of c.processes.slice(1)) {
    expect((await c.call(process.api, 'GET', '/api/me', { as: member })).status).toBe(401)
    expect((await c.call(process.api, 'GET', '/api/me', { as: null, cookie })).status).toBe(401)
  }
})

clusterTest('the sign-in throttle holds across the processes, not per process', async (c) => {
  // An account that never signed in, so both of its buckets count (per address and per account); the address's,
  // SWITCHBOARD_LOGIN_RATE_BURST, is the smaller.
  const target = await c.createUser()
  const mark = c.forwarded.length
  // One after another: the spread over the processes is then exactly even, and the count depends on no race.
  const attempts: Array<{ status: number; retryAfter: string | null }> = []
  for (let i = 0; i < 3 * LOGIN_BURST; i++) {
    const response = await c.signIn(c.url, target.username, 'not the password')
    await response.body?.cancel()
    attempts.push({ status: response.status, retryAfter: response.headers.get('retry-after') })
  }
  expect(servedBy(c, mark)).toEqual([0, 1, 2])
  const checked = attempts.filter((r) => r.status === 401).length
  const throttled = attempts.filter((r) => r.status === 429)
  // Today each process allows its own burst: all 3 × 4 passwords are checked (401), none throttled.
  expect({ checked, throttled: throttled.length }).toEqual({ checked: LOGIN_BURST, throttled: 2 * LOGIN_BURST })
  for (const refused of throttled) expect(Number(refused.retryAfter)).toBeGreaterThan(0)
})
