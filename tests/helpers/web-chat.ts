import { freePort } from './ports.ts'
import { startTestPlatform, useStarted, type Principal, type TestPlatform } from './platform.ts'
import { until } from './until.ts'

/** One frame from the server, as the browser's script reads it. */
export type Frame = Record<string, any> & { type: string }

/** A web chat socket as a test drives it: what it received, and its close. */
export interface ChatClient {
  frames: Frame[]
  send(message: Record<string, unknown>): void
  /** The first received frame (from now on or already received, `since` the index given) matching. */
  next(match: (frame: Frame) => boolean, what: string, since?: number): Promise<Frame>
  closed: Promise<{ code: number; reason: string }>
  opened: Promise<void>
  close(): void
}

export interface ChatPlatform extends TestPlatform {
  /** The admin port's own address: what the browser's Origin is. */
  adminUrl: string
  /** A member of the root company with a session cookie, as a browser has after signing in. */
  person(options?: { companyId?: string | null }): Promise<Principal & { cookie: string }>
  socket(cookie: string | null, options?: { conversationId?: string; after?: string; origin?: string }): ChatClient
}

/** A test platform whose admin app is really served (WebSockets need a server), with people who can sign in. */
export async function startChatPlatform(env: Record<string, string> = {}): Promise<ChatPlatform> {
  const adminPort = freePort()
  const p = await startTestPlatform({ SWITCHBOARD_ADMIN_PORT: String(adminPort), ...env })
  const server = Bun.serve({ hostname: '127.0.0.1', port: adminPort, fetch: p.admin.fetch, websocket: p.adminWebSocket, idleTimeout: 60 })
  const adminUrl = `http://127.0.0.1:${adminPort}`
  const clients = new Set<ChatClient>()
  return {
    ...p,
    adminUrl,
    async person({ companyId = p.root.companyId } = {}) {
      const password = 'chat-person-password'
      const made = await p.createUser({ companyId, password })
      return { ...made, cookie: await signIn(adminUrl, made.username, password) }
    },
    socket(cookie, options = {}) {
      const client = openChatSocket(adminUrl, cookie, options)
      clients.add(client)
      return client
    },
    async close() {
      for (const client of clients) client.close()
      await server.stop(true)
      await p.close()
    },
  }
}

/** Signs in on the console's form as a browser does; the session cookie it sets. */
export async function signIn(adminUrl: string, username: string, password: string): Promise<string> {
  const login = await fetch(`${adminUrl}/auth/login`, {
    method: 'POST',
    headers: { accept: 'application/json', 'content-type': 'application/x-www-form-urlencoded', origin: adminUrl },
    body: new URLSearchParams({ username, password }),
    redirect: 'manual',
  })
  const cookie = login.headers.getSetCookie().map((c) => c.split(';')[0]).join('; ')
  if (!cookie) throw new Error(`signing in ${username} answered ${login.status}`)
  return cookie
}

/**
 * For checks that a socket was *not* told something, instead of sleeping: publishes a notice to the conversation
 * after every event already on the bus and waits until `client` hears it. Answers how many frames came before the
 * notice, which are then all the frames those events made. Events still on their way (a call to the API under
 * way, the feed's queue of a running turn) are not covered: wait for them by what they do first.
 */
export async function heardSoFar(p: TestPlatform, client: ChatClient, conversationId: string): Promise<number> {
  const text = `barrier ${crypto.randomUUID()}`
  await p.services.events.publish('chat.event', { conversation_id: conversationId, event: { type: 'notice', text } })
  const frame = await client.next((f) => f.type === 'notice' && f.text === text, 'the barrier notice')
  return client.frames.indexOf(frame)
}

/**
 * The answer as the page's script keeps it from the `stream` frames of one socket after another: each piece placed
 * at its offset, a piece already held changing nothing.
 */
export function assembled(...sockets: ChatClient[]): string {
  let text = ''
  for (const socket of sockets) {
    for (const f of socket.frames) {
      if (f.type === 'stream' && f.offset <= text.length && f.offset + f.text.length > text.length) text = text.slice(0, f.offset) + f.text
    }
  }
  return text
}

/** A web chat socket to the admin server at `adminUrl`, as a browser signed in with `cookie` opens it. */
export function openChatSocket(adminUrl: string, cookie: string | null, { conversationId, after, origin = adminUrl }: { conversationId?: string; after?: string; origin?: string } = {}): ChatClient {
  const query = new URLSearchParams({ ...(conversationId ? { conversation_id: conversationId } : {}), ...(after ? { after } : {}) })
  const headers: Record<string, string> = { origin, ...(cookie ? { cookie } : {}) }
  const ws = new WebSocket(`${adminUrl.replace(/^http/, 'ws')}/ws/chat?${query}`, { headers } as never)
  const frames: Frame[] = []
  ws.onmessage = (message) => frames.push(JSON.parse(String(message.data)))
  const closed = new Promise<{ code: number; reason: string }>((resolve) => (ws.onclose = (e) => resolve({ code: e.code, reason: e.reason })))
  const opened = new Promise<void>((resolve, reject) => {
    ws.onopen = () => resolve()
    ws.onerror = () => reject(new Error('the socket failed to open'))
  })
  opened.catch(() => {})
  return {
    frames,
    send: (message) => ws.send(JSON.stringify(message)),
    next: async (match, what, since = 0) => {
      await until(() => frames.slice(since).some(match), { what })
      return frames.slice(since).find(match)!
    },
    closed,
    opened,
    close: () => ws.close(),
  }
}

export function useChatPlatform(env: Record<string, string> = {}): () => ChatPlatform {
  return useStarted(() => startChatPlatform(env), 'the web chat platform')
}

/** An enabled agent on the echo runner, in the root company. */
export async function echoAgent(p: TestPlatform, name = `echo-${crypto.randomUUID().slice(0, 8)}`): Promise<{ id: string; name: string }> {
  const created = await p.call('POST', '/api/v1/AgentConfigRecord', { json: { name, runner: 'echo', model: 'echo-1' } })
  if (created.status !== 201) throw new Error(`creating the agent answered ${created.status}: ${JSON.stringify(created.body)}`)
  return { id: created.body.id, name }
}
