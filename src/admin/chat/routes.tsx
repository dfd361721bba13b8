/** @jsxImportSource hono/jsx */
import type { Context, Hono, MiddlewareHandler } from 'hono'
import { bodyLimit } from 'hono/body-limit'
import { isUuid } from '../../models/fields.ts'
import type { ApiClient, ApiReply } from '../api-client.ts'
import type { AdminEnv } from '../context.ts'
import { ChatPage, ConversationItems, Participants, type ChatView, type Conversation } from './components.tsx'
import { PlanContent } from './plan-panel.tsx'
import type { PlanView } from '../../plans/view.ts'

type Ctx = Context<AdminEnv>

const ASSETS = { scripts: ['/static/vendor/marked.js', '/static/vendor/purify.js', '/static/chat.js'], styles: ['/static/css/chat.css'] }

/** How many of a conversation's latest messages the page shows; the socket brings the ones after. */
const SHOWN_MESSAGES = 200

function isFragment(c: Ctx): boolean {
  return c.req.header('hx-request') === 'true' && c.req.header('hx-request-type') !== 'full'
}

function ok<T>(reply: ApiReply<T>, what: string): T {
  if (reply.status !== 200) throw new Error(`${what} answered ${reply.status}`)
  return reply.body
}

async function conversationsOf(c: Ctx, api: ApiClient) {
  return ok(await api.call(c, 'GET', '/api/chat/conversations'), 'GET /api/chat/conversations').data
}

async function participantsOf(c: Ctx, api: ApiClient, id: string) {
  return ok(await api.call(c, 'GET', `/api/v1/WebchatParticipant?conversation_id=eq.${id}&order=created_at.asc&limit=500`), 'participants').data
}

/** Everything the page shows; a conversation the user does not take part in is a 404 page. */
async function chatView(c: Ctx, api: ApiClient, id?: string, problem?: string): Promise<ChatView | undefined> {
  const agents = api.call(c, 'GET', '/api/v1/AgentConfigRecord?enabled=eq.true&select=id,name&order=name.asc&limit=500')
  const view: ChatView = { me: c.get('me').user.id, conversations: await conversationsOf(c, api), agents: (await agents).body?.data ?? [], problem }
  if (!id) return view
  const conversation = await api.call<Conversation>(c, 'GET', `/api/v1/WebchatConversation/${id}`)
  if (conversation.status === 404) return undefined
  const [messages, participants, documents, plan] = await Promise.all([
    api.call(c, 'GET', `/api/v1/WebchatMessage?conversation_id=eq.${id}&order=id.desc&limit=${SHOWN_MESSAGES}`),
    participantsOf(c, api, id),
    api.call(c, 'GET', `/api/v1/WebchatDocument?conversation_id=eq.${id}&select=id,filename,media_type,size_bytes,truncated&order=created_at.asc&limit=500`),
    planOf(c, api, id),
  ])
  return {
    ...view,
    conversation: ok(conversation, 'conversation'),
    messages: ok(messages, 'messages').data.reverse(),
    participants,
    documents: documents.body?.data ?? [],
    plan,
  }
}

/** The conversation's plan (its live one, else its latest), or none. */
async function planOf(c: Ctx, api: ApiClient, id: string): Promise<PlanView | undefined> {
  const reply = await api.call<PlanView>(c, 'GET', `/api/chat/conversations/${id}/plan`)
  return reply.status === 200 ? reply.body : undefined
}

const onlyConversationIds: MiddlewareHandler<AdminEnv> = async (c, next) => {
  if (isUuid(c.req.param('id') ?? '')) return next()
  return c.notFound()
}

/** Back to where a plain form came from; htmx gets the fragment it swaps instead. */
function backTo(c: Ctx, path: string) {
  return c.redirect(path, 303)
}

/** The web chat page (`/chat`): every read and write through the public API as the signed-in user. */
export function mountChatPages(app: Hono<AdminEnv>, api: ApiClient, maxDocumentBytes: number): void {
  app.get('/chat', async (c) => c.render(<ChatPage view={(await chatView(c, api, undefined, c.req.query('problem')))!} />, { title: 'Chat', assets: ASSETS }))

  app.post('/chat/new', async (c) => {
    const form = await c.req.parseBody()
    const created = await api.call(c, 'POST', '/api/v1/WebchatConversation', { agent_id: String(form.agent_id ?? '') })
    if (created.status !== 201) return backTo(c, `/chat?${new URLSearchParams({ problem: created.body?.detail ?? 'The conversation could not be started.' })}`)
    return backTo(c, `/chat/${created.body.id}`)
  })

  app.get('/chat/list', async (c) => {
    const current = c.req.query('current')
    return c.html(<ConversationItems conversations={await conversationsOf(c, api)} current={current && isUuid(current) ? current : undefined} />)
  })

  app.use('/chat/:id/*', onlyConversationIds)
  app.use('/chat/:id', onlyConversationIds)

  app.get('/chat/:id', async (c) => {
    const view = await chatView(c, api, c.req.param('id'))
    if (!view) return c.notFound()
    return c.render(<ChatPage view={view} />, { title: view.conversation!.title || 'Chat', assets: ASSETS })
  })

  // The pin is the caller's own participant row, found in their list.
  for (const action of ['pin', 'unpin'] as const) {
    app.post(`/chat/:id/${action}`, async (c) => {
      const id = c.req.param('id')!
      const mine = (await conversationsOf(c, api)).find((conversation: { id: string }) => conversation.id === id)
      if (!mine) return c.notFound()
      const reply = await api.call(c, 'PATCH', `/api/v1/WebchatParticipant/${mine.participant_id}`, { pinned_at: action === 'pin' ? new Date().toISOString() : null })
      if (reply.status !== 200) throw new Error(`pinning answered ${reply.status}`)
      const current = String((await c.req.parseBody()).current ?? '')
      if (!isFragment(c)) return backTo(c, isUuid(current) ? `/chat/${current}` : '/chat')
      return c.html(<ConversationItems conversations={await conversationsOf(c, api)} current={isUuid(current) ? current : undefined} />)
    })
  }

  async function participantsPanel(c: Ctx, id: string, problem?: string) {
    const conversation = await api.call<Conversation>(c, 'GET', `/api/v1/WebchatConversation/${id}`)
    if (conversation.status !== 200) return c.notFound()
    if (!isFragment(c)) return backTo(c, `/chat/${id}`)
    return c.html(<Participants conversation={conversation.body} participants={await participantsOf(c, api, id)} me={c.get('me').user.id} problem={problem} />)
  }

  app.get('/chat/:id/participants', (c) => participantsPanel(c, c.req.param('id')!))

  app.post('/chat/:id/participants', async (c) => {
    const id = c.req.param('id')!
    const person = String((await c.req.parseBody()).person ?? '').trim()
    const found = await api.call(c, 'GET', `/api/chat/people?${new URLSearchParams({ q: person })}`)
    // Exactly that username, or the one person with that email: a near name must not let someone else in to read.
    const people: Array<{ username: string; id: string }> = found.body?.data ?? []
    const match = people.find((p) => p.username.toLowerCase() === person.toLowerCase()) ?? (person.includes('@') && people.length === 1 ? people[0] : undefined)
    if (!person || !match) return participantsPanel(c, id, `Nobody in your company matches "${person}".`)
    const added = await api.call(c, 'POST', '/api/v1/WebchatParticipant', { conversation_id: id, user_id: match.id })
    const problem = added.status === 201 ? undefined : added.status === 409 ? `${match.username} already takes part.` : (added.body?.detail ?? `Adding failed (${added.status}).`)
    return participantsPanel(c, id, problem)
  })

  app.post('/chat/:id/participants/:participant/remove', async (c) => {
    const id = c.req.param('id')!
    const participant = c.req.param('participant')!
    if (!isUuid(participant)) return c.notFound()
    const removed = await api.call(c, 'DELETE', `/api/v1/WebchatParticipant/${participant}`)
    // Whoever left can no longer see the conversation: back to the list.
    const left = removed.status === 204 && (await api.call(c, 'GET', `/api/v1/WebchatConversation/${id}`)).status === 404
    if (left) {
      if (isFragment(c)) {
        c.header('HX-Redirect', '/chat')
        return c.body(null, 204)
      }
      return backTo(c, '/chat')
    }
    return participantsPanel(c, id, removed.status === 204 ? undefined : (removed.body?.detail ?? `Removing failed (${removed.status}).`))
  })

  async function planPanel(c: Ctx, id: string, problem?: string) {
    if (!isFragment(c)) return backTo(c, `/chat/${id}`)
    const conversation = await api.call(c, 'GET', `/api/v1/WebchatConversation/${id}?select=id`)
    if (conversation.status !== 200) return c.notFound()
    return c.html(<PlanContent conversationId={id} plan={await planOf(c, api, id)} problem={problem} />)
  }

  app.get('/chat/:id/plan', (c) => planPanel(c, c.req.param('id')!))

  app.post('/chat/:id/plan/:action{execute|pause|resume|cancel}', async (c) => {
    const id = c.req.param('id')!
    const plan = await planOf(c, api, id)
    if (!plan) return planPanel(c, id, 'This conversation has no plan.')
    const reply = await api.call(c, 'POST', `/api/plans/${plan.id}/update`, { action: c.req.param('action') })
    return planPanel(c, id, reply.status === 200 ? undefined : (reply.body?.detail ?? `The plan could not be changed (${reply.status}).`))
  })

  // The script uploads here; the document goes on to the API as it came, and the API's answer comes back as is.
  // Read whole before it goes on, so held to the document limit (and room for the form around the file) here too.
  const uploadLimit = bodyLimit({
    maxSize: maxDocumentBytes + 64 * 1024,
    onError: (c) => c.json({ detail: `The file is larger than ${Math.floor(maxDocumentBytes / 1024 / 1024)} MiB, the most a document may be.`, code: 'payload_too_large' }, 413),
  })
  app.post('/chat/:id/documents', uploadLimit, async (c) => {
    const id = c.req.param('id')!
    const incoming = await c.req.formData().catch(() => undefined)
    const file = incoming?.get('file')
    if (!(file instanceof File)) return c.json({ detail: 'Choose a file to upload.' }, 422)
    const form = new FormData()
    form.set('conversation_id', id)
    form.set('file', file, file.name)
    const response = await api.fetchAs(api.credentials(c), 'POST', '/api/chat/documents', { form })
    return new Response(response.body, { status: response.status, headers: { 'content-type': response.headers.get('content-type') ?? 'application/json' } })
  })
}
