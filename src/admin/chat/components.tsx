/** @jsxImportSource hono/jsx */
import type { PlanView } from '../../plans/view.ts'
import { PlanPanel } from './plan-panel.tsx'
import { Alert } from '../components/feedback.tsx'
import type { Answer, Schema } from '../api-client.ts'
import { Time } from '../components/time.tsx'

export type Message = Schema<'WebchatMessage'>
export type Participant = Schema<'WebchatParticipant'>
/** A document as the page lists it (the fields it selects). */
export type ChatDocument = Pick<Schema<'WebchatDocument'>, 'id' | 'filename' | 'media_type' | 'size_bytes' | 'truncated'>
export type Conversation = Schema<'WebchatConversation'>
/** A conversation of the person's list, with their own standing in it. */
export type ConversationSummary = Answer<'get', '/api/chat/conversations'>['data'][number]

interface ConversationListProps {
  conversations: ConversationSummary[]
  current?: string
  /** The words the list is searched for, if any. */
  q?: string
  /** The archived conversations are listed instead of the others. */
  archived?: boolean
}

/** The list's own address, with what it shows: its refreshes keep the search and the view. */
export function listPath({ current, archived }: Pick<ConversationListProps, 'current' | 'archived'>): string {
  const query = new URLSearchParams({ ...(current ? { current } : {}), ...(archived ? { archived: 'true' } : {}) })
  return `/chat/list${query.size ? `?${query}` : ''}`
}

/** Search (Ctrl/Cmd+K from anywhere on the page), live as one types; a plain GET without scripts. */
function ConversationSearch({ current, q, archived }: Pick<ConversationListProps, 'current' | 'q' | 'archived'>) {
  return (
    <form role="search" method="get" action={current ? `/chat/${current}` : '/chat'} class="chat-search">
      <label for="chat-search">
        Search conversations <kbd>Ctrl</kbd>+<kbd>K</kbd>
      </label>
      <input
        id="chat-search"
        name="q"
        type="search"
        value={q ?? ''}
        maxlength={200}
        autocomplete="off"
        aria-keyshortcuts="Control+K Meta+K"
        aria-controls="conversation-list"
        hx-get={listPath({ current, archived })}
        hx-trigger="input changed delay:250ms, search"
        hx-target="#conversation-list"
        hx-swap="innerHTML"
      />
      {archived ? <input type="hidden" name="archived" value="true" /> : null}
    </form>
  )
}

/**
 * The people's conversations, pinned first; refreshed whenever the socket says something changed elsewhere. Live
 * panels swap their content, never themselves: a refresh htmx queued behind one in flight is dropped when the
 * element that asked for it has been replaced meanwhile, leaving the panel a change behind.
 */
export function ConversationList(props: ConversationListProps) {
  return (
    <>
      <ConversationSearch {...props} />
      <p class="list-view">
        {props.archived ? <a href="/chat">← Your conversations</a> : <a href="/chat?archived=true">Archived conversations</a>}
      </p>
      <nav id="conversation-list" aria-label={props.archived ? 'Archived conversations' : 'Conversations'} hx-get={listPath(props)} hx-include="#chat-search" hx-trigger="chat-list-stale from:body" hx-swap="innerHTML">
        <ConversationItems {...props} />
      </nav>
    </>
  )
}

/** The list's content: the page's first draw and each redraw. */
export function ConversationItems({ conversations, current, q, archived }: ConversationListProps) {
  const none = q?.trim() ? `No conversation holds “${q.trim()}”.` : archived ? 'Nothing archived.' : 'No conversations yet: choose an agent above and start one.'
  return (
    <>
      {conversations.length === 0 ? <p class="muted">{none}</p> : null}
      <ul>
        {conversations.map((c) => (
          <li class={`conversation${c.id === current ? ' current' : ''}`} data-id={c.id}>
            <a href={`/chat/${c.id}`} aria-current={c.id === current ? 'page' : undefined}>
              <span class="conversation-title">{c.title || 'New conversation'}</span>
              {c.shared ? <span class="tag">shared</span> : null}
              {c.unread > 0 && c.id !== current ? (
                <span class="badge" role="img" aria-label={`${c.unread} unread`}>
                  {c.unread > 99 ? '99+' : c.unread}
                </span>
              ) : null}
            </a>
            <form method="post" action={`/chat/${c.id}/${c.pinned_at ? 'unpin' : 'pin'}`} hx-post={`/chat/${c.id}/${c.pinned_at ? 'unpin' : 'pin'}`} hx-target="#conversation-list" hx-swap="innerHTML">
              <ListState current={current} q={q} archived={archived} />
              <button type="submit" class="pin" aria-pressed={c.pinned_at ? 'true' : 'false'} title={c.pinned_at ? 'Unpin' : 'Pin'}>
                {c.pinned_at ? '★' : '☆'}
                <span class="visually-hidden">{c.pinned_at ? `Unpin ${c.title}` : `Pin ${c.title}`}</span>
              </button>
            </form>
            <form method="post" action={`/chat/${c.id}/${archived ? 'unarchive' : 'archive'}`} hx-post={`/chat/${c.id}/${archived ? 'unarchive' : 'archive'}`} hx-target="#conversation-list" hx-swap="innerHTML">
              <ListState current={current} q={q} archived={archived} />
              <button type="submit" class="archive" title={archived ? 'Back to your conversations' : 'Archive'}>
                <span aria-hidden="true">{archived ? '↩' : '⌫'}</span>
                <span class="visually-hidden">{archived ? `Unarchive ${c.title || 'New conversation'}` : `Archive ${c.title || 'New conversation'}`}</span>
              </button>
            </form>
          </li>
        ))}
      </ul>
    </>
  )
}

/** What a list action redraws the list with: the open conversation, the search and the view. */
function ListState({ current, q, archived }: Pick<ConversationListProps, 'current' | 'q' | 'archived'>) {
  return (
    <>
      <input type="hidden" name="current" value={current ?? ''} />
      <input type="hidden" name="q" value={q ?? ''} />
      <input type="hidden" name="archived" value={archived ? 'true' : ''} />
    </>
  )
}

/** A voice note or a spoken answer, to play where it was said: served by the page's own origin. */
function VoicePlayer({ attachment, conversationId }: { attachment: Message['attachments'][number]; conversationId: string }) {
  return (
    <li class="voice">
      <audio controls preload="none" src={`/chat/${conversationId}/voice/${attachment.voice_clip_id}`} aria-label={attachment.name}></audio>
      <span class="muted">{attachment.name}</span>
    </li>
  )
}

function Attachments({ attachments, conversationId }: { attachments: Message['attachments']; conversationId: string }) {
  if (!attachments.length) return null
  return (
    <ul class="attachments">
      {attachments.map((a) => (a.voice_clip_id ? <VoicePlayer attachment={a} conversationId={conversationId} /> : <li class="chip">{a.name}</li>))}
    </ul>
  )
}

/** One stored message. An agent's answer is markdown, rendered (and sanitized) in the browser like a live one. */
export function MessageItem({ message, me }: { message: Message; me: string }) {
  const mine = message.role === 'user' && message.sender_id === me
  return (
    <li
      class={`msg msg-${message.role}${mine ? ' mine' : ''}`}
      data-id={message.id}
      data-status={message.status}
      data-group={message.role === 'agent' ? (message.version_of ?? message.id) : undefined}
      data-superseded={message.superseded_at ? '' : undefined}
    >
      <div class="who">
        {message.role === 'system' ? null : <span>{message.sender_name ?? (message.role === 'agent' ? 'Agent' : 'Someone')}</span>}
        <Time iso={message.created_at} />
      </div>
      {message.role === 'agent' ? <div class="body md" data-md="">{message.text}</div> : <div class="body text">{message.text}</div>}
      <Attachments attachments={message.attachments ?? []} conversationId={message.conversation_id} />
      {message.status === 'aborted' ? <div class="flag">Stopped before the end</div> : null}
      {message.status === 'error' ? <div class="flag">The answer failed</div> : null}
    </li>
  )
}

interface ParticipantsProps {
  conversation: Conversation
  participants: Participant[]
  me: string
  problem?: string
}

/** Who takes part, redrawn (its content, as ConversationList says why) when the socket says people changed. */
export function ParticipantsPanel(props: ParticipantsProps) {
  return (
    <section id="participants" class="panel" aria-labelledby="participants-title" hx-get={`/chat/${props.conversation.id}/participants`} hx-trigger="chat-people-stale from:body" hx-swap="innerHTML">
      <Participants {...props} />
    </section>
  )
}

/** Any participant adds a colleague, the creator removes people, anyone may leave. */
export function Participants({ conversation, participants, me, problem }: ParticipantsProps) {
  const creator = conversation.created_by === me
  return (
    <>
      <h2 id="participants-title">
        People <span class="tag">{participants.length > 1 ? 'shared' : 'private'}</span>
      </h2>
      <ul>
        {participants.map((p) => (
          <li data-user={p.user_id}>
            <span>{p.user_name ?? 'someone'}</span>
            {p.user_id === conversation.created_by ? <span class="muted"> (started it)</span> : null}
            {(creator && p.user_id !== me) || (p.user_id === me && !creator) ? (
              <form method="post" action={`/chat/${conversation.id}/participants/${p.id}/remove`} hx-post={`/chat/${conversation.id}/participants/${p.id}/remove`} hx-target="#participants" hx-swap="innerHTML">
                <button type="submit">{p.user_id === me ? 'Leave' : 'Remove'}</button>
              </form>
            ) : null}
          </li>
        ))}
      </ul>
      <form class="add-person" method="post" action={`/chat/${conversation.id}/participants`} hx-post={`/chat/${conversation.id}/participants`} hx-target="#participants" hx-swap="innerHTML">
        <label for="person">
          Add a colleague (username or email)
          <input id="person" name="person" required autocomplete="off" />
        </label>
        <button type="submit">Add</button>
      </form>
      <Alert text={problem} />
    </>
  )
}

/** The conversation's documents, redrawn (its content, as ConversationList says why) when one is added. */
export function DocumentsPanel({ conversationId, documents }: { conversationId: string; documents: ChatDocument[] }) {
  return (
    <section id="documents" class="panel" aria-labelledby="documents-title" hx-get={`/chat/${conversationId}/documents`} hx-trigger="chat-documents-stale from:body" hx-swap="innerHTML">
      <Documents documents={documents} />
    </section>
  )
}

export function Documents({ documents }: { documents: ChatDocument[] }) {
  return (
    <>
      <h2 id="documents-title">Documents</h2>
      {documents.length === 0 ? <p class="muted">None yet. The agent reads every document of the conversation.</p> : null}
      <ul>
        {documents.map((d) => (
          <li data-id={d.id}>
            {d.filename}
            {d.truncated ? <span class="muted"> (text cut at 200 KB)</span> : null}
          </li>
        ))}
      </ul>
    </>
  )
}

/**
 * The composer: the script sends its text over the socket; Stop aborts the running turn. Where the agent hears
 * voice notes, Record takes one from the microphone; its transcript is sent as the message, the recording with it.
 */
function Composer({ conversationId, listens }: { conversationId: string; listens: boolean }) {
  return (
    <form id="composer" class="composer" data-conversation={conversationId}>
      <ul id="pending-attachments" class="attachments" aria-label="Attached to the next message"></ul>
      <progress id="upload-progress" max={1} value={0} hidden></progress>
      <label for="composer-text" class="visually-hidden">
        Message
      </label>
      <textarea id="composer-text" name="text" rows={3} placeholder="Write a message. In a shared conversation, @mention the agent to have it answer." required></textarea>
      <div class="composer-actions">
        <label class="upload">
          Attach a document (or drop or paste one)
          <input id="upload" type="file" multiple accept=".pdf,.docx,.xlsx,.txt,.csv,application/pdf,text/plain,text/csv" />
        </label>
        {listens ? (
          <button type="button" id="record" class="record" aria-pressed="false">
            Record a voice note
          </button>
        ) : null}
        <button type="button" id="stop" class="stop" hidden aria-keyshortcuts="Escape">
          Stop
        </button>
        <button type="submit" id="send">
          Send
        </button>
      </div>
      <p id="composer-hint" class="muted hint">
        Enter sends, Shift+Enter starts a new line, Esc stops the answer.
      </p>
    </form>
  )
}

export interface ChatView {
  me: string
  conversations: ConversationSummary[]
  agents: Agent[]
  /** The agent the open conversation is with, when it still exists (no starter prompts once it is not offered). */
  agent?: Agent
  conversation?: Conversation
  messages?: Message[]
  participants?: Participant[]
  documents?: ChatDocument[]
  plan?: PlanView
  /** Tool calls the open conversation's turn waits on. */
  approvals?: Array<Schema<'ToolApproval'>>
  /** The person is an admin of the company: they may answer requests whose rule lets admins. */
  admin?: boolean
  problem?: string
  q?: string
  archived?: boolean
}

type Agent = Pick<Schema<'AgentConfigRecord'>, 'id' | 'name' | 'description' | 'avatar' | 'starter_prompts'> & { voice?: Schema<'AgentConfigRecord'>['voice'] }

/** The agent's picture, or its initial on a badge; beside its name, so it says nothing to a screen reader. */
function AgentAvatar({ agent }: { agent?: Agent }) {
  if (agent?.avatar) return <img class="agent-badge" src={agent.avatar} alt="" width={40} height={40} />
  return (
    <div class="agent-badge" aria-hidden="true">
      {(agent?.name ?? '?').slice(0, 1).toUpperCase()}
    </div>
  )
}

/**
 * Whom to talk to, when no conversation is open: each agent with its picture, what it is for, and its starter
 * prompts, any of which starts a conversation and sends itself.
 */
function AgentPicker({ agents }: { agents: Agent[] }) {
  if (agents.length === 0) return <p class="muted">No agent is offered to you yet: an admin of your company sets agents up in the console.</p>
  return (
    <ul class="agent-cards" aria-label="Agents">
      {agents.map((agent) => (
        <li class="agent-card">
          <form method="post" action="/chat/new">
            <input type="hidden" name="agent_id" value={agent.id} />
            <div class="agent-card-head">
              <AgentAvatar agent={agent} />
              <h2>{agent.name}</h2>
            </div>
            {agent.description ? <p class="muted">{agent.description}</p> : null}
            {agent.starter_prompts.length > 0 ? (
              <div class="starters" role="group" aria-label={`Start with ${agent.name} by asking`}>
                {agent.starter_prompts.map((prompt, index) => (
                  <button type="submit" name="starter" value={String(index)} class="starter">
                    {prompt}
                  </button>
                ))}
              </div>
            ) : null}
            <button type="submit">Talk to {agent.name}</button>
          </form>
        </li>
      ))}
    </ul>
  )
}

/** In a conversation with no message yet: the agent's starter prompts, each sent as it is when chosen. */
function Starters({ agent }: { agent?: Agent }) {
  if (!agent || agent.starter_prompts.length === 0) return null
  return (
    <div id="starters" class="starters" role="group" aria-label="Start by asking">
      {agent.starter_prompts.map((prompt) => (
        <button type="button" class="starter" value={prompt}>
          {prompt}
        </button>
      ))}
    </div>
  )
}

function NewConversation({ agents }: { agents: ChatView['agents'] }) {
  return (
    <form method="post" action="/chat/new" class="new-chat">
      <label for="new-agent">
        Talk to
        <select id="new-agent" name="agent_id" required>
          {agents.map((a) => (
            <option value={a.id}>{a.name}</option>
          ))}
        </select>
      </label>
      <button type="submit" disabled={agents.length === 0}>
        New conversation
      </button>
    </form>
  )
}

/**
 * The open conversation's title and who it is with; its creator renames or deletes it here. Both are plain forms
 * behind a disclosure, so a deletion takes a second, deliberate click and needs no script.
 */
function ConversationHeader({ conversation, agent, me, problem }: { conversation: Conversation; agent?: ChatView['agent']; me: string; problem?: string }) {
  const title = conversation.title || 'New conversation'
  return (
    <header class="conversation-header">
      <AgentAvatar agent={agent} />
      <div class="conversation-heading">
        <h1 id="chat-title">{title}</h1>
        <p id="conversation-agent" class="muted">
          {agent ? (
            <>
              With <strong>{agent.name}</strong>
              {agent.description ? ` — ${agent.description}` : ''}
            </>
          ) : (
            'Its agent has been removed.'
          )}
        </p>
      </div>
      <div class="conversation-tools">
        <details class="export">
          <summary>Export</summary>
          <ul>
            <li>
              <a href={`/chat/${conversation.id}/export?format=markdown`} download="">
                Markdown, to read
              </a>
            </li>
            <li>
              <a href={`/chat/${conversation.id}/export?format=json`} download="">
                JSON, to process
              </a>
            </li>
          </ul>
        </details>
      </div>
      {conversation.created_by === me ? (
        <div class="conversation-tools">
          <details class="rename">
            <summary>Rename</summary>
            <form method="post" action={`/chat/${conversation.id}/rename`}>
              <label for="conversation-title-input">
                Title
                <input id="conversation-title-input" name="title" value={conversation.title} maxlength={300} required />
              </label>
              <button type="submit">Save</button>
            </form>
          </details>
          <details class="delete">
            <summary>Delete</summary>
            <form method="post" action={`/chat/${conversation.id}/delete`}>
              <p>Delete “{title}” and all its messages and documents, for everyone in it? This cannot be undone.</p>
              <button type="submit" class="danger">
                Delete the conversation
              </button>
            </form>
          </details>
        </div>
      ) : null}
      <Alert text={problem} />
    </header>
  )
}

/** The chat page: the list, the open conversation with its composer, and its people and documents. */
export function ChatPage({ view }: { view: ChatView }) {
  const { conversation, me } = view
  const messages = view.messages ?? []
  return (
    <div class={`chat${conversation ? '' : ' list-open'}`} data-me={me} data-admin={view.admin ? 'true' : undefined} data-agent={view.agent?.name ?? ''} data-conversation={conversation?.id ?? ''} data-after={messages.at(-1)?.id ?? ''}>
      {/* On a phone the list is a drawer this opens and closes (see chat.css); wider, both are always shown. */}
      <button type="button" id="list-toggle" class="list-toggle" aria-expanded={conversation ? 'false' : 'true'} aria-controls="chat-side">
        Conversations
      </button>
      <aside id="chat-side" class="chat-side" aria-label="Your conversations">
        <NewConversation agents={view.agents} />
        <ConversationList conversations={view.conversations} current={conversation?.id} q={view.q} archived={view.archived} />
      </aside>
      {conversation ? (
        <section class="chat-main" aria-labelledby="chat-title">
          <ConversationHeader conversation={conversation} agent={view.agent} me={me} problem={view.problem} />
          <p id="conversation-cost" class="muted">
            {conversation.cost_usd > 0 ? `This conversation has cost USD ${conversation.cost_usd.toFixed(conversation.cost_usd < 0.01 ? 4 : 2)} so far.` : 'This conversation has cost nothing yet.'}{' '}
            <a href="/me/usage">Your usage</a>
          </p>
          <p id="connection" class="muted" role="status"></p>
          <div class="messages-frame">
            <ol id="messages" aria-live="polite" hx-ignore="" tabindex={0} aria-label="Messages">
              {messages.map((m) => (
                <MessageItem message={m} me={me} />
              ))}
            </ol>
            <button type="button" id="jump-latest" class="jump-latest" hidden>
              Jump to latest ↓
            </button>
          </div>
          {/* Data for the page's script, which draws the cards as it draws the live ones; `<` escaped, so no text ends the element. */}
          <script type="application/json" id="approvals-data" dangerouslySetInnerHTML={{ __html: JSON.stringify(view.approvals ?? []).replaceAll('<', '\\u003c') }} />
          <p id="typing" class="muted" aria-live="polite"></p>
          {messages.length === 0 ? <Starters agent={view.agent} /> : null}
          <Composer conversationId={conversation.id} listens={view.agent?.voice?.enabled === true} />
        </section>
      ) : (
        <section class="chat-main">
          <h1>Chat</h1>
          <Alert text={view.problem} />
          <p class="muted">Choose a conversation, or start one with an agent:</p>
          <AgentPicker agents={view.agents} />
        </section>
      )}
      {conversation ? (
        <aside class="chat-aside" aria-label="About this conversation">
          <PlanPanel conversationId={conversation.id} plan={view.plan} />
          <ParticipantsPanel conversation={conversation} participants={view.participants ?? []} me={me} />
          <DocumentsPanel conversationId={conversation.id} documents={view.documents ?? []} />
        </aside>
      ) : null}
    </div>
  )
}
