/** @jsxImportSource hono/jsx */
import type { Context, Hono, MiddlewareHandler } from 'hono'
import { bodyLimit } from 'hono/body-limit'
import { isUuid } from '../../models/fields.ts'
import { problemOf, problemText, type ApiClient } from '../api-client.ts'
import type { AdminEnv } from '../context.ts'
import { ChatPage, ConversationItems, Documents, Participants, type ChatView } from './components.tsx'
import { PlanContent } from './plan-panel.tsx'
import type { PlanView } from '../../plans/view.ts'
import { standing } from '../components/layout.tsx'

type Ctx = Context<AdminEnv>

const ASSETS = { scripts: ['/static/vendor/marked.js', '/static/vendor/purify.js', '/static/vendor/highlight.js', '/static/chat.js'], styles: ['/static/css/chat.css'] }

/** How many of a conversation's latest messages the page shows; the socket brings the ones after. */
const SHOWN_MESSAGES = 200

function isFragment(c: Ctx): boolean {
  return c.req.header('hx-request') === 'true' && c.req.header('hx-request-type') !== 'full'
}

/** What a read the page cannot do without answered; anything else is the page's failure, with the status. */
function ok<T>({ data, response }: { data?: T; response: Response }, what: string): T {
  if (data === undefined) throw new Error(`${what} answered ${response.status}`)
  return data
}

/** What the list shows: the search and the view, from the query (a page, a refresh) or a list action's form. */
interface ListView {
  q?: string
  archived?: boolean
}

function listViewOf(values: Record<string, unknown>): ListView {
  const q = typeof values.q === 'string' ? values.q.trim().slice(0, 200) : ''
  return { q: q || undefined, archived: values.archived === 'true' }
}

async function conversationsOf(c: Ctx, api: ApiClient, { q, archived }: ListView = {}) {
  const query = { ...(q ? { q } : {}), archived: archived ? ('true' as const) : ('false' as const) }
  return ok(await api.as(c).GET('/api/chat/conversations', { params: { query } }), 'GET /api/chat/conversations').data
}

async function participantsOf(c: Ctx, api: ApiClient, id: string) {
  const query = { conversation_id: `eq.${id}`, order: 'created_at.asc', limit: '500' }
  return ok(await api.as(c).GET('/api/v1/WebchatParticipant', { params: { query } }), 'participants').data
}

/** Everything the page shows; a conversation the user does not take part in is a 404 page. */
async function chatView(c: Ctx, api: ApiClient, id?: string, problem?: string, list: ListView = listViewOf(c.req.query())): Promise<ChatView | undefined> {
  const agents = api.as(c).GET('/api/v1/AgentConfigRecord', { params: { query: { enabled: 'eq.true', select: 'id,name,description,channels,avatar,starter_prompts,voice', order: 'name.asc', limit: '500' } } })
  // An agent whose web chat channel is off is not offered here (the API refuses it too).
  const offered = ((await agents).data?.data ?? []).filter((agent) => agent.channels?.webchat?.enabled !== false).map(({ id, name, description, avatar, starter_prompts, voice }) => ({ id, name, description, avatar, starter_prompts, voice }))
  const view: ChatView = { me: c.get('me').user.id, conversations: await conversationsOf(c, api, list), agents: offered, problem, ...list }
  if (!id) return view
  const conversation = await api.as(c).GET('/api/v1/WebchatConversation/{id}', { params: { path: { id } } })
  if (conversation.response.status === 404) return undefined
  const agentId = conversation.data?.agent_id
  const [messages, participants, documents, plan, agent, approvals] = await Promise.all([
    api.as(c).GET('/api/v1/WebchatMessage', { params: { query: { conversation_id: `eq.${id}`, order: 'id.desc', limit: String(SHOWN_MESSAGES) } } }),
    participantsOf(c, api, id),
    api.as(c).GET('/api/v1/WebchatDocument', {
      params: { query: { conversation_id: `eq.${id}`, select: 'id,filename,media_type,size_bytes,truncated', order: 'created_at.asc', limit: '500' } },
    }),
    planOf(c, api, id),
    // Said even when it is no longer offered (switched off since): the conversation is still with it.
    offered.find((a) => a.id === agentId) ??
      (agentId ? api.as(c).GET('/api/v1/AgentConfigRecord/{id}', { params: { path: { id: agentId } } }).then(({ data }) => data && { id: data.id, name: data.name, description: data.description, avatar: data.avatar, starter_prompts: [], voice: data.voice }) : undefined),
    // Tool calls the conversation's turn waits on: their cards are drawn with the page, then kept up by the socket.
    api.as(c).GET('/api/approvals', { params: { query: { conversation_id: id, status: 'pending', limit: 100 } } }),
  ])
  return {
    ...view,
    agent,
    conversation: ok(conversation, 'conversation'),
    messages: ok(messages, 'messages').data.reverse(),
    participants,
    documents: documents.data?.data ?? [],
    plan,
    approvals: (approvals.data?.data ?? []).reverse(),
    admin: standing(c.get('me')) !== 'member',
  }
}

/** The conversation's plan (its live one, else its latest), or none. */
async function planOf(c: Ctx, api: ApiClient, id: string): Promise<PlanView | undefined> {
  return (await api.as(c).GET('/api/chat/conversations/{id}/plan', { params: { path: { id } } })).data
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
export function mountChatPages(app: Hono<AdminEnv>, api: ApiClient, maxDocumentBytes: number, voice: { maxBytes: number }): void {
  app.get('/chat', async (c) => c.render(<ChatPage view={(await chatView(c, api, undefined, c.req.query('problem')))!} />, { title: 'Chat', assets: ASSETS }))

  app.post('/chat/new', async (c) => {
    const form = await c.req.parseBody()
    const { data, error } = await api.as(c).POST('/api/v1/WebchatConversation', { body: { agent_id: String(form.agent_id ?? '') } })
    if (!data) return backTo(c, `/chat?${new URLSearchParams({ problem: problemOf(error).detail ?? 'The conversation could not be started.' })}`)
    // A starter prompt chosen with the agent: the page sends it once connected. Only its number travels, so a link
    // can make nobody say anything but what the agent's own settings offer, in a conversation just made.
    const starter = /^[0-5]$/.test(String(form.starter ?? '')) ? `?starter=${form.starter}` : ''
    return backTo(c, `/chat/${data.id}${starter}`)
  })

  app.get('/chat/list', async (c) => {
    const current = c.req.query('current')
    const list = listViewOf(c.req.query())
    return c.html(<ConversationItems conversations={await conversationsOf(c, api, list)} current={current && isUuid(current) ? current : undefined} {...list} />)
  })

  // `/chat/:id/*` names `/chat/:id` too.
  app.use('/chat/:id/*', onlyConversationIds)

  app.get('/chat/:id', async (c) => {
    const view = await chatView(c, api, c.req.param('id'), c.req.query('problem'))
    if (!view) return c.notFound()
    return c.render(<ChatPage view={view} />, { title: view.conversation!.title || 'Chat', assets: ASSETS })
  })

  // The pin and the archive mark are the caller's own participant row, found in the list they were shown.
  const marks = { pin: { pinned_at: true }, unpin: { pinned_at: false }, archive: { archived_at: true }, unarchive: { archived_at: false } } as const
  for (const [action, mark] of Object.entries(marks)) {
    app.post(`/chat/:id/${action}`, async (c) => {
      const id = c.req.param('id')!
      const form = await c.req.parseBody()
      const list = listViewOf(form)
      const mine = (await conversationsOf(c, api, { archived: list.archived })).find((conversation) => conversation.id === id)
      if (!mine) return c.notFound()
      const [field, on] = Object.entries(mark)[0] as ['pinned_at' | 'archived_at', boolean]
      const marked = await api.as(c).PATCH('/api/v1/WebchatParticipant/{id}', { params: { path: { id: mine.participant_id } }, body: { [field]: on ? new Date().toISOString() : null } })
      ok(marked, action)
      const current = String(form.current ?? '')
      if (!isFragment(c)) return backTo(c, isUuid(current) ? `/chat/${current}` : '/chat')
      return c.html(<ConversationItems conversations={await conversationsOf(c, api, list)} current={isUuid(current) ? current : undefined} {...list} />)
    })
  }

  // The export is the API's, passed on with its file name; the browser saves it.
  app.get('/chat/:id/export', async (c) => {
    const format = c.req.query('format') === 'json' ? 'json' : 'markdown'
    const response = await api.fetchAs(api.credentials(c), 'GET', `/api/chat/conversations/${c.req.param('id')}/export?format=${format}`)
    if (response.status === 404) return c.notFound()
    const headers = new Headers({ 'content-type': response.headers.get('content-type') ?? 'application/octet-stream' })
    const disposition = response.headers.get('content-disposition')
    if (disposition) headers.set('content-disposition', disposition)
    return new Response(response.body, { status: response.status, headers })
  })

  // Renaming and deleting are the creator's (the API says so for anyone else); a refusal comes back in words.
  app.post('/chat/:id/rename', async (c) => {
    const id = c.req.param('id')!
    const title = String((await c.req.parseBody()).title ?? '').trim()
    const renamed = await api.as(c).PATCH('/api/v1/WebchatConversation/{id}', { params: { path: { id } }, body: { title } })
    if (renamed.response.status === 404) return c.notFound()
    return backTo(c, renamed.data ? `/chat/${id}` : `/chat/${id}?${new URLSearchParams({ problem: problemText(renamed, 'Renaming') })}`)
  })

  app.post('/chat/:id/delete', async (c) => {
    const id = c.req.param('id')!
    const deleted = await api.as(c).DELETE('/api/v1/WebchatConversation/{id}', { params: { path: { id } } })
    if (deleted.response.status === 404) return c.notFound()
    if (deleted.response.status !== 204) return backTo(c, `/chat/${id}?${new URLSearchParams({ problem: problemText(deleted, 'Deleting') })}`)
    return backTo(c, '/chat')
  })

  app.get('/chat/:id/documents', async (c) => {
    const id = c.req.param('id')!
    if (!isFragment(c)) return backTo(c, `/chat/${id}`)
    const query = { conversation_id: `eq.${id}`, select: 'id,filename,media_type,size_bytes,truncated', order: 'created_at.asc', limit: '500' }
    const documents = await api.as(c).GET('/api/v1/WebchatDocument', { params: { query } })
    return c.html(<Documents documents={ok(documents, 'documents').data} />)
  })

  async function participantsPanel(c: Ctx, id: string, problem?: string) {
    const conversation = (await api.as(c).GET('/api/v1/WebchatConversation/{id}', { params: { path: { id } } })).data
    if (!conversation) return c.notFound()
    if (!isFragment(c)) return backTo(c, `/chat/${id}`)
    return c.html(<Participants conversation={conversation} participants={await participantsOf(c, api, id)} me={c.get('me').user.id} problem={problem} />)
  }

  app.get('/chat/:id/participants', (c) => participantsPanel(c, c.req.param('id')!))

  app.post('/chat/:id/participants', async (c) => {
    const id = c.req.param('id')!
    const person = String((await c.req.parseBody()).person ?? '').trim()
    const found = await api.as(c).GET('/api/chat/people', { params: { query: { q: person } } })
    // Exactly that username, or the one person with that email: a near name must not let someone else in to read.
    const people = found.data?.data ?? []
    const match = people.find((p) => p.username.toLowerCase() === person.toLowerCase()) ?? (person.includes('@') && people.length === 1 ? people[0] : undefined)
    if (!person || !match) return participantsPanel(c, id, `Nobody in your company matches "${person}".`)
    const added = await api.as(c).POST('/api/v1/WebchatParticipant', { body: { conversation_id: id, user_id: match.id } })
    const status = added.response.status
    const problem = status === 201 ? undefined : status === 409 ? `${match.username} already takes part.` : problemText(added, 'Adding')
    return participantsPanel(c, id, problem)
  })

  app.post('/chat/:id/participants/:participant/remove', async (c) => {
    const id = c.req.param('id')!
    const participant = c.req.param('participant')!
    if (!isUuid(participant)) return c.notFound()
    const removed = await api.as(c).DELETE('/api/v1/WebchatParticipant/{id}', { params: { path: { id: participant } } })
    // Whoever left can no longer see the conversation: back to the list.
    const left = removed.response.status === 204 && (await api.as(c).GET('/api/v1/WebchatConversation/{id}', { params: { path: { id } } })).response.status === 404
    if (left) {
      if (isFragment(c)) {
        c.header('HX-Redirect', '/chat')
        return c.body(null, 204)
      }
      return backTo(c, '/chat')
    }
    return participantsPanel(c, id, removed.response.status === 204 ? undefined : problemText(removed, 'Removing'))
  })

  async function planPanel(c: Ctx, id: string, problem?: string) {
    if (!isFragment(c)) return backTo(c, `/chat/${id}`)
    const conversation = await api.as(c).GET('/api/v1/WebchatConversation/{id}', { params: { path: { id } } })
    if (!conversation.data) return c.notFound()
    return c.html(<PlanContent conversationId={id} plan={await planOf(c, api, id)} problem={problem} />)
  }

  app.get('/chat/:id/plan', (c) => planPanel(c, c.req.param('id')!))

  app.post('/chat/:id/plan/:action{execute|pause|resume|cancel}', async (c) => {
    const id = c.req.param('id')!
    const plan = await planOf(c, api, id)
    if (!plan) return planPanel(c, id, 'This conversation has no plan.')
    const action = c.req.param('action') as 'execute' | 'pause' | 'resume' | 'cancel'
    const { data, error, response } = await api.as(c).POST('/api/plans/{id}/update', { params: { path: { id: plan.id } }, body: { action } })
    return planPanel(c, id, data ? undefined : (problemOf(error).detail ?? `The plan could not be changed (${response.status}).`))
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

  // A recording from the microphone goes on to the API to be heard; its transcript comes back for the script to send.
  const voiceLimit = bodyLimit({
    maxSize: voice.maxBytes + 16 * 1024,
    onError: (c) => c.json({ detail: `The recording is larger than ${Math.floor(voice.maxBytes / 1024 / 1024)} MiB, the most a voice note may be.`, code: 'payload_too_large' }, 413),
  })
  app.post('/chat/:id/voice', voiceLimit, async (c) => {
    const incoming = await c.req.formData().catch(() => undefined)
    const file = incoming?.get('file')
    if (!(file instanceof File)) return c.json({ detail: 'Nothing was recorded.' }, 422)
    const form = new FormData()
    form.set('conversation_id', c.req.param('id')!)
    form.set('file', file, file.name || 'recording')
    const response = await api.fetchAs(api.credentials(c), 'POST', '/api/chat/voice', { form })
    return new Response(response.body, { status: response.status, headers: { 'content-type': response.headers.get('content-type') ?? 'application/json' } })
  })

  // The page's players load the audio from the page's own origin, as whoever is signed in.
  app.get('/chat/:id/voice/:clip', async (c) => {
    const clip = c.req.param('clip')
    if (!isUuid(clip)) return c.notFound()
    const response = await api.fetchAs(api.credentials(c), 'GET', `/api/chat/voice/${clip}`)
    if (response.status !== 200) return c.notFound()
    const headers: Record<string, string> = {}
    for (const name of ['content-type', 'cache-control', 'x-content-type-options', 'content-security-policy']) {
      const value = response.headers.get(name)
      if (value !== null) headers[name] = value
    }
    return new Response(response.body, { status: 200, headers })
  })
}
