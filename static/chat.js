// The web chat's socket: sends what the person writes, shows what everyone in the conversation says, live.
// Answers are markdown, rendered with marked and sanitized with DOMPurify before they touch the page.
;(() => {
  const root = document.querySelector('.chat')
  if (!root) return
  const me = root.dataset.me
  const conversationId = root.dataset.conversation || null
  const messages = document.getElementById('messages')
  const composer = document.getElementById('composer')
  const text = document.getElementById('composer-text')
  const stopButton = document.getElementById('stop')
  const sendButton = document.getElementById('send')
  const jumpButton = document.getElementById('jump-latest')
  const typingLine = document.getElementById('typing')
  const status = document.getElementById('connection')
  const pending = document.getElementById('pending-attachments')
  const upload = document.getElementById('upload')

  // ---- markdown, sanitized -------------------------------------------------------------------------------------
  // No data-* attributes: htmx acts on `data-hx-*`, so an answer could otherwise make the reader's browser send
  // requests as them. The message list also carries hx-ignore, in case an attribute slips through some day.
  const PURIFY = {
    FORBID_TAGS: ['style', 'svg', 'math', 'form', 'input', 'button', 'textarea', 'select', 'iframe', 'object', 'embed'],
    FORBID_ATTR: ['style'],
    ALLOW_DATA_ATTR: false,
  }
  DOMPurify.addHook('afterSanitizeAttributes', (node) => {
    if (node.tagName === 'A') {
      node.setAttribute('rel', 'noopener noreferrer nofollow')
      node.setAttribute('target', '_blank')
    }
  })
  function renderMarkdown(el, source) {
    el.innerHTML = DOMPurify.sanitize(marked.parse(source, { gfm: true, breaks: true }), PURIFY)
  }

  // ---- a finished answer: highlighted code, copy buttons ----------------------------------------------------------
  // Done once the answer is whole, never per streamed piece. The buttons are added after sanitizing, by this script.
  // Classes, not data-* attributes: the answer's markup is checked to carry none (htmx reads data-hx-*).
  function copyButton(label, what) {
    const button = document.createElement('button')
    button.type = 'button'
    button.className = `copy copy-${what}`
    button.textContent = 'Copy'
    button.setAttribute('aria-label', label)
    return button
  }
  function finish(li, body, source) {
    li.source = source
    for (const code of body.querySelectorAll('pre > code')) {
      if (window.hljs) {
        window.hljs.highlightElement(code)
        code.removeAttribute('data-highlighted')
      }
      const pre = code.parentElement
      pre.classList.add('code-block')
      pre.append(copyButton('Copy the code', 'code'))
    }
    if (!li.querySelector(':scope > .msg-actions')) {
      const actions = document.createElement('div')
      actions.className = 'msg-actions'
      actions.append(copyButton('Copy the answer', 'answer'))
      li.append(actions)
    }
  }
  if (window.hljs) window.hljs.configure({ ignoreUnescapedHTML: true })
  for (const el of document.querySelectorAll('[data-md]')) {
    const source = el.textContent
    renderMarkdown(el, source)
    if (el.closest('li.msg-agent')) finish(el.closest('li'), el, source)
  }

  // ---- times: said in the reader's locale and zone by the page's own script (page.js) --------------------------------
  function timeElement(iso) {
    const el = document.createElement('time')
    el.setAttribute('datetime', iso)
    window.showTime?.(el)
    return el
  }

  // ---- on a phone, the list is a drawer -------------------------------------------------------------------------
  const listToggle = document.getElementById('list-toggle')
  listToggle?.addEventListener('click', () => {
    const open = root.classList.toggle('list-open')
    listToggle.setAttribute('aria-expanded', String(open))
    if (open) document.getElementById('chat-search')?.focus()
  })

  // ---- Ctrl/Cmd+K searches the conversations, from anywhere on the page ------------------------------------------
  document.addEventListener('keydown', (event) => {
    if (event.key.toLowerCase() !== 'k' || !(event.ctrlKey || event.metaKey) || event.altKey || event.shiftKey) return
    const search = document.getElementById('chat-search')
    if (!search) return
    event.preventDefault()
    if (!root.classList.contains('list-open')) listToggle?.click()
    search.focus()
    search.select()
  })

  // ---- the list, kept fresh on every chat page -----------------------------------------------------------------
  let staleTimer
  function listStale() {
    clearTimeout(staleTimer)
    staleTimer = setTimeout(() => document.body.dispatchEvent(new CustomEvent('chat-list-stale')), 150)
  }
  const socketUrl = (query) => `${location.protocol === 'https:' ? 'wss' : 'ws'}://${location.host}/ws/chat${query ? `?${query}` : ''}`

  if (!conversationId) {
    // With no conversation open the socket only says which conversations changed elsewhere: the list refreshes.
    let retries = 0
    const watch = () => {
      const ws = new WebSocket(socketUrl(''))
      ws.onopen = () => (retries = 0)
      ws.onmessage = (message) => {
        const type = JSON.parse(message.data).type
        if (type === 'unread' || type === 'participants' || type === 'conversation_update') listStale()
      }
      ws.onclose = (closed) => {
        if (closed.code !== 4001 && closed.code !== 4003 && closed.code !== 4029) setTimeout(watch, Math.min(5000, 250 * 2 ** retries++))
      }
    }
    watch()
    return
  }

  // ---- what the page holds -------------------------------------------------------------------------------------
  let after = root.dataset.after || ''
  let socket
  let retry = 0
  let lastTyped = 0
  let attachments = []
  /** What was last sent, given back to the composer if the server refuses it. */
  let lastSent = null
  /** The answer being streamed: its element and text so far. */
  let streaming = null
  /** Whether a turn runs: Send waits for it to end. */
  let running = false

  // ---- following the conversation ------------------------------------------------------------------------------
  // The view follows new messages and a streaming answer while the reader is at the bottom; once they scroll up to
  // read, it stays where they are and offers a way back instead.
  let following = true
  messages.addEventListener('scroll', () => {
    following = messages.scrollHeight - messages.scrollTop - messages.clientHeight < 48
    if (following) jumpButton.hidden = true
  })
  function scrollDown(force = false) {
    if (force) following = true
    if (following) {
      messages.scrollTop = messages.scrollHeight
      jumpButton.hidden = true
    } else jumpButton.hidden = false
  }
  jumpButton.addEventListener('click', () => {
    scrollDown(true)
    text.focus()
  })
  const byId = (id) => (id ? messages.querySelector(`li[data-id="${CSS.escape(id)}"]`) : null)

  function item(role, { id, who, status: state, mine, time } = {}) {
    const li = document.createElement('li')
    li.className = `msg msg-${role}${mine ? ' mine' : ''}`
    if (id) li.dataset.id = id
    if (state) li.dataset.status = state
    const header = document.createElement('div')
    header.className = 'who'
    if (who) {
      const name = document.createElement('span')
      name.textContent = who
      header.append(name)
    }
    header.append(timeElement(time || new Date().toISOString()))
    li.append(header)
    const body = document.createElement('div')
    body.className = role === 'agent' ? 'body md' : 'body text'
    li.append(body)
    messages.append(li)
    // The conversation has begun: what was offered to begin it goes.
    document.getElementById('starters')?.remove()
    return { li, body }
  }

  // A voice note or a spoken answer plays where it was said; documents are named.
  function voicePlayer(a) {
    const item = document.createElement('li')
    item.className = 'voice'
    const audio = document.createElement('audio')
    audio.controls = true
    audio.preload = 'none'
    audio.src = `/chat/${conversationId}/voice/${encodeURIComponent(a.voice_clip_id)}`
    audio.setAttribute('aria-label', a.name)
    const name = document.createElement('span')
    name.className = 'muted'
    name.textContent = a.name
    item.append(audio, name)
    return item
  }
  function chips(li, list) {
    if (!list?.length) return
    const ul = document.createElement('ul')
    ul.className = 'attachments'
    for (const a of list) {
      if (a.voice_clip_id) {
        ul.append(voicePlayer(a))
        continue
      }
      const chip = document.createElement('li')
      chip.className = 'chip'
      chip.textContent = a.name
      ul.append(chip)
    }
    li.append(ul)
  }

  function flag(li, words) {
    const note = document.createElement('div')
    note.className = 'flag'
    note.textContent = words
    li.append(note)
  }

  function notice(words) {
    const { body } = item('system')
    body.textContent = words
    scrollDown()
  }

  function showStored(m) {
    if (byId(m.id)) return
    if (m.role === 'agent' && streaming) {
      finishStream(m.id, m.text, m.status)
      return
    }
    const { li, body } = item(m.role, { id: m.id, who: m.role === 'system' ? '' : m.sender_name, status: m.status, mine: m.sender_id === me, time: m.created_at })
    if (m.role === 'agent') {
      li.dataset.group = m.version_of || m.id
      if (m.superseded_at) li.dataset.superseded = ''
      renderMarkdown(body, m.text)
      finish(li, body, m.text)
    } else body.textContent = m.text
    chips(li, m.attachments)
    if (m.status === 'aborted') flag(li, 'Stopped before the end')
    if (m.status === 'error') flag(li, 'The answer failed')
  }

  // ---- the answer as it streams --------------------------------------------------------------------------------
  let renderQueued = false
  function ensureStream(agent) {
    if (!streaming) {
      const { li, body } = item('agent', { who: agent || root.dataset.agent || 'Agent' })
      li.classList.add('streaming')
      streaming = { li, body, text: '' }
    }
    return streaming
  }
  function renderStream() {
    renderQueued = false
    if (streaming) renderMarkdown(streaming.body, streaming.text)
    scrollDown()
  }
  /** A piece at `offset`: a piece seen before (a resume re-sends from the start) changes nothing. */
  function streamPiece(piece, offset) {
    const s = ensureStream()
    if (offset > s.text.length) return
    if (offset + piece.length > s.text.length) s.text = s.text.slice(0, offset) + piece
    if (!renderQueued) {
      renderQueued = true
      requestAnimationFrame(renderStream)
    }
  }
  function finishStream(id, full, state) {
    const s = streaming
    streaming = null
    if (!s) return
    s.li.classList.remove('streaming')
    if (id) {
      if (byId(id)) return s.li.remove()
      s.li.dataset.id = id
    }
    s.li.dataset.status = state
    if (full !== undefined) s.text = full
    renderMarkdown(s.body, s.text)
    finish(s.li, s.body, s.text)
    if (state === 'aborted') flag(s.li, 'Stopped before the end')
    if (state === 'error') flag(s.li, 'The answer failed')
  }

  // ---- typing, busy ----------------------------------------------------------------------------------------------
  let typingTimer
  function typingNote(words, ms = 4000) {
    typingLine.textContent = words
    clearTimeout(typingTimer)
    if (ms) typingTimer = setTimeout(() => (typingLine.textContent = ''), ms)
  }
  function busy(on) {
    // Called on every streamed piece: what depends on the turn's state is redone only when it changes.
    const changed = running !== on
    running = on
    stopButton.hidden = !on
    // One turn at a time per conversation: Send waits for this one (what is typed stays typed meanwhile).
    sendButton.disabled = on
    sendButton.title = on ? 'Wait for the answer, or stop it' : ''
    if (changed) offerActions()
    // A screen reader announces the answer once it is whole, not every streamed piece of it.
    messages.setAttribute('aria-busy', on ? 'true' : 'false')
    if (!on) typingNote('', 0)
  }

  // ---- read markers ----------------------------------------------------------------------------------------
  let readTimer
  function markRead() {
    clearTimeout(readTimer)
    readTimer = setTimeout(() => {
      if (document.visibilityState === 'visible') send({ type: 'read', conversation_id: conversationId })
    }, 500)
  }

  // ---- versions of an answer, and answering again -------------------------------------------------------------------
  // A regenerated answer is a version of the group's first (data-group); the latest shows, with a pager to flip back.
  function arrangeVersions() {
    const groups = new Map()
    for (const li of messages.querySelectorAll('li.msg-agent[data-group]')) {
      if (!groups.has(li.dataset.group)) groups.set(li.dataset.group, [])
      groups.get(li.dataset.group).push(li)
    }
    for (const versions of groups.values()) {
      const current = versions.find((li) => !('superseded' in li.dataset)) ?? versions.at(-1)
      for (const li of versions) {
        li.hidden = li !== current
        li.versions = versions
        pager(li)
      }
    }
  }
  function pager(li) {
    li.querySelector(':scope > .msg-actions .versions')?.remove()
    const versions = li.versions
    if (!versions || versions.length < 2) return
    const at = versions.indexOf(li)
    const box = document.createElement('span')
    box.className = 'versions'
    const step = (by, label, symbol) => {
      const button = document.createElement('button')
      button.type = 'button'
      button.textContent = symbol
      button.setAttribute('aria-label', label)
      button.disabled = !versions[at + by]
      button.addEventListener('click', () => {
        const other = versions[at + by]
        li.hidden = true
        other.hidden = false
        other.querySelector('.versions button:not(:disabled)')?.focus()
      })
      return button
    }
    const where = document.createElement('span')
    where.textContent = `${at + 1} / ${versions.length}`
    where.setAttribute('aria-label', `version ${at + 1} of ${versions.length}`)
    box.append(step(-1, 'Earlier version', '‹'), where, step(1, 'Later version', '›'))
    li.querySelector(':scope > .msg-actions')?.prepend(box)
  }
  /** The conversation's last question and answer, when the question is this person's: what may be edited or answered again. */
  function lastExchange() {
    const shown = [...messages.querySelectorAll('li.msg-user, li.msg-agent')].filter((li) => !li.hidden && li.dataset.id)
    const [question, answer] = shown.slice(-2)
    return question?.classList.contains('mine') && answer?.classList.contains('msg-agent') ? { question, answer } : undefined
  }
  function offerActions() {
    for (const el of messages.querySelectorAll('.regenerate, .edit')) el.remove()
    const last = lastExchange()
    if (!last || running) return
    const again = document.createElement('button')
    again.type = 'button'
    again.className = 'regenerate'
    again.textContent = last.answer.dataset.status === 'complete' ? 'Regenerate' : 'Retry'
    again.addEventListener('click', () => send({ type: 'regenerate', conversation_id: conversationId }))
    last.answer.querySelector(':scope > .msg-actions')?.append(again)
    const edit = document.createElement('button')
    edit.type = 'button'
    edit.className = 'edit'
    edit.textContent = 'Edit'
    edit.addEventListener('click', () => editQuestion(last.question))
    let actions = last.question.querySelector(':scope > .msg-actions')
    if (!actions) {
      actions = document.createElement('div')
      actions.className = 'msg-actions'
      last.question.append(actions)
    }
    actions.append(edit)
  }
  /** The question becomes a small form: saved, it is changed for everyone and answered again. */
  function editQuestion(li) {
    const body = li.querySelector('.body')
    const form = document.createElement('form')
    form.className = 'edit-form'
    const box = document.createElement('textarea')
    box.value = body.textContent
    box.rows = 3
    box.setAttribute('aria-label', 'Your question, edited')
    const save = document.createElement('button')
    save.type = 'submit'
    save.textContent = 'Save and answer again'
    const cancel = document.createElement('button')
    cancel.type = 'button'
    cancel.textContent = 'Cancel'
    form.append(box, save, cancel)
    body.hidden = true
    body.after(form)
    box.focus()
    const close = () => {
      form.remove()
      body.hidden = false
    }
    cancel.addEventListener('click', close)
    form.addEventListener('keydown', (event) => {
      if (event.key === 'Escape') {
        event.preventDefault()
        event.stopPropagation()
        close()
      }
    })
    form.addEventListener('submit', (event) => {
      event.preventDefault()
      const edited = box.value.trim()
      if (!edited) return
      if (send({ type: 'regenerate', conversation_id: conversationId, text: edited })) close()
    })
  }

  // ---- errors --------------------------------------------------------------------------------------------------
  function showError(e) {
    const { li, body } = item('error')
    li.setAttribute('role', 'alert')
    body.textContent = e.text
    const details = document.createElement('details')
    const summary = document.createElement('summary')
    summary.textContent = 'Details'
    const more = document.createElement('p')
    more.textContent = e.details || 'No details.'
    const kind = document.createElement('p')
    kind.className = 'error-type'
    kind.textContent = `Error type: ${e.error_type}`
    details.append(summary, more, kind)
    li.append(details)
    scrollDown(true)
  }
  /**
   * The server refused something this page asked (a message sent while another answer runs, a stop too late): the
   * running answer is left alone, and a refused message goes back into the composer unless something new is there.
   */
  function refusal(e) {
    if (e.refused === 'message' && lastSent) {
      if (!text.value.trim()) text.value = lastSent.text
      if (!attachments.length && lastSent.attachments.length) {
        attachments = lastSent.attachments
        for (const a of attachments) pendingChip(a.name)
      }
      lastSent = null
    }
    if (e.refused === 'read' || e.refused === 'user_typing') return
    if (e.refused === 'approval_decision') {
      // Said on the cards still waiting (one answered elsewhere meanwhile gets its update from the server).
      for (const card of messages.querySelectorAll('li.approval.asking')) {
        card.classList.remove('asking')
        card.querySelectorAll('button').forEach((b) => (b.disabled = false))
        card.querySelector('.approval-problem').textContent = e.text
      }
      return
    }
    showError(e)
  }

  // ---- tool calls waiting for a person's yes -------------------------------------------------------------------
  const APPROVAL_HEADINGS = { pending: 'Approval needed', approved: 'Approved', denied: 'Declined', expired: 'Not answered in time', cancelled: 'No longer needed' }
  /** Who may answer: the person whose turn it is, or the company's admins where the rule lets them. */
  const mayAnswer = (a) => a.user_id === me || (a.approvers === 'admins' && root.dataset.admin === 'true')
  function approvalOutcome(a) {
    const by = a.decided_by === me ? 'you' : a.decided_by_name || 'someone'
    if (a.status === 'approved') return `Approved by ${by}: the tool ran.`
    if (a.status === 'denied') return `Declined by ${by}: the agent goes on without it.`
    if (a.status === 'expired') return 'Nobody answered in time, so the tool did not run.'
    return 'The turn ended before an answer; the tool did not run.'
  }
  /** A request's card in the conversation, made or brought up to date; the same for a live event and the page's own. */
  function showApproval(a) {
    let li = document.getElementById(`approval-${a.id}`)
    if (!li) {
      li = document.createElement('li')
      li.id = `approval-${a.id}`
      messages.append(li)
      document.getElementById('starters')?.remove()
    }
    li.className = `msg approval approval-${a.status}`
    const heading = document.createElement('strong')
    heading.textContent = APPROVAL_HEADINGS[a.status] ?? a.status
    const what = document.createElement('p')
    what.textContent = `The agent wants to call ${a.tool} on the MCP server ${a.server}, with:`
    const args = document.createElement('pre')
    args.className = 'approval-arguments'
    args.textContent = JSON.stringify(a.arguments, null, 2)
    const outcome = document.createElement('p')
    outcome.className = 'approval-outcome'
    const problem = document.createElement('p')
    problem.className = 'approval-problem'
    problem.setAttribute('role', 'alert')
    li.replaceChildren(heading, what, args, outcome, problem)
    if (a.status !== 'pending') {
      outcome.textContent = approvalOutcome(a)
      return
    }
    const until = timeElement(a.expires_at)
    outcome.append(mayAnswer(a) ? 'Your answer is needed; without one by ' : 'Waiting for an answer; without one by ', until, ' it is a no.')
    if (!mayAnswer(a)) return
    const buttons = document.createElement('div')
    buttons.className = 'approval-buttons'
    for (const [label, approve] of [['Approve', true], ['Deny', false]]) {
      const button = document.createElement('button')
      button.type = 'button'
      button.textContent = label
      button.className = approve ? 'approve' : 'deny danger'
      button.addEventListener('click', () => {
        if (!send({ type: 'approval_decision', conversation_id: conversationId, approval_id: a.id, approve })) {
          problem.textContent = 'Not connected; try again in a moment.'
          return
        }
        li.classList.add('asking')
        buttons.querySelectorAll('button').forEach((b) => (b.disabled = true))
      })
      buttons.append(button)
    }
    li.append(buttons)
    scrollDown(true)
  }
  for (const a of JSON.parse(document.getElementById('approvals-data')?.textContent || '[]')) showApproval(a)

  // ---- events from the server ------------------------------------------------------------------------------
  const handlers = {
    approval(e) {
      showApproval(e.approval)
    },
    history(e) {
      for (const m of e.messages) showStored(m)
      arrangeVersions()
      offerActions()
      if (e.messages.length) after = e.messages.at(-1).id
      scrollDown()
      markRead()
    },
    user_message(e) {
      if (e.sender === me) lastSent = null
      if (!byId(e.message_id)) {
        const { li, body } = item('user', { id: e.message_id, who: e.display_name, status: 'complete', mine: e.sender === me, time: e.time })
        body.textContent = e.text
        chips(li, e.attachments)
        // One's own message brings the view back down; someone else's does only if it was following.
        scrollDown(e.sender === me)
      }
      if (e.attachments?.length) document.body.dispatchEvent(new CustomEvent('chat-documents-stale'))
      after = e.message_id
      offerActions()
      markRead()
    },
    voice(e) {
      // The answer was spoken: its parts play beside it (once, whoever else heard the event too).
      const answer = byId(e.message_id)
      if (!answer || answer.querySelector('li.voice')) return
      chips(answer, e.attachments)
    },
    typing() {
      ensureStream()
      busy(true)
      typingNote('The agent is writing…', 0)
    },
    tool_call(e) {
      typingNote(`The agent is using ${e.tool}…`, 0)
    },
    stream(e) {
      busy(true)
      streamPiece(e.text, e.offset)
    },
    stream_end() {},
    message(e) {
      // A background task's result is a message of its own, even when it lands while another answer streams.
      if (e.task_id) {
        if (!byId(e.message_id)) {
          const { li, body } = item('agent', { id: e.message_id, who: e.agent, status: 'complete' })
          renderMarkdown(body, e.text)
          finish(li, body, e.text)
        }
        scrollDown()
        return
      }
      if (streaming) finishStream(e.message_id, e.text, 'complete')
      else showStored({ id: e.message_id, role: 'agent', text: e.text, status: 'complete', sender_name: e.agent })
      const answer = byId(e.message_id)
      if (answer) {
        answer.dataset.group = e.version_of || e.message_id
        for (const li of messages.querySelectorAll(`li.msg-agent[data-group="${CSS.escape(answer.dataset.group)}"]`)) if (li !== answer) li.dataset.superseded = ''
        arrangeVersions()
      }
      after = e.message_id
      busy(false)
      scrollDown()
      markRead()
    },
    aborted(e) {
      if (streaming && !e.message_id && !streaming.text) {
        streaming.li.remove()
        streaming = null
      } else finishStream(e.message_id, undefined, 'aborted')
      if (e.message_id) after = e.message_id
      busy(false)
    },
    error(e) {
      if (e.refused) return refusal(e)
      if (streaming) finishStream(undefined, undefined, 'error')
      busy(false)
      showError(e)
    },
    notice(e) {
      notice(e.text)
    },
    user_message_edited(e) {
      const body = byId(e.message_id)?.querySelector('.body')
      if (body) body.textContent = e.text
    },
    user_typing(e) {
      typingNote(`${e.display_name} is typing…`)
    },
    conversation_update(e) {
      if (e.conversation_id === conversationId) {
        document.getElementById('chat-title').textContent = e.title
        document.title = `${e.title} · Switchboard`
      }
      listStale()
    },
    participants(e) {
      if (e.conversation_id === conversationId) document.body.dispatchEvent(new CustomEvent('chat-people-stale'))
      listStale()
    },
    unread() {
      listStale()
    },
    // The plan panel fetches itself afresh (its markup is the server's); the list shows which conversations have one.
    plan_created() {
      document.body.dispatchEvent(new CustomEvent('chat-plan-stale'))
    },
    plan_task_update() {
      document.body.dispatchEvent(new CustomEvent('chat-plan-stale'))
    },
    plan_updated() {
      document.body.dispatchEvent(new CustomEvent('chat-plan-stale'))
    },
    heartbeat() {},
  }

  // ---- the socket -------------------------------------------------------------------------------------------
  function send(message) {
    if (socket?.readyState !== WebSocket.OPEN) return false
    socket.send(JSON.stringify(message))
    return true
  }

  function connect() {
    const query = new URLSearchParams({ conversation_id: conversationId })
    if (after) query.set('after', after)
    socket = new WebSocket(socketUrl(query))
    socket.onopen = () => {
      retry = 0
      status.textContent = ''
      markRead()
      sendChosenStarter()
    }
    socket.onmessage = (message) => {
      const event = JSON.parse(message.data)
      if (event.conversation_id && event.conversation_id !== conversationId && event.type !== 'unread' && event.type !== 'participants' && event.type !== 'conversation_update') return
      handlers[event.type]?.(event)
    }
    socket.onclose = (closed) => {
      if (closed.code === 4001) {
        status.textContent = 'Your session has ended. '
        const link = document.createElement('a')
        link.href = `/login?${new URLSearchParams({ post_login_redirect: location.pathname })}`
        link.textContent = 'Sign in again'
        status.append(link)
        return
      }
      if (closed.code === 4029) {
        status.textContent = closed.reason
        return
      }
      if (closed.code === 4003) {
        status.textContent = closed.reason || 'You no longer take part in this conversation.'
        composer.querySelectorAll('textarea, button, input').forEach((el) => (el.disabled = true))
        listStale()
        return
      }
      // The answer in progress is re-sent whole on reconnect; pieces already here are kept once.
      status.textContent = 'Connection lost; reconnecting…'
      setTimeout(connect, Math.min(5000, 250 * 2 ** retry++))
    }
  }

  // ---- what the person does ----------------------------------------------------------------------------------
  composer.addEventListener('submit', (event) => {
    event.preventDefault()
    const words = text.value.trim()
    if (!words || running) return
    const message = { type: 'message', conversation_id: conversationId, text: words }
    if (attachments.length) message.attachments = attachments.map((a) => a.id)
    if (!send(message)) {
      status.textContent = 'Not connected yet; your message is kept. Try again in a moment.'
      return
    }
    lastSent = { text: text.value, attachments }
    text.value = ''
    attachments = []
    pending.replaceChildren()
  })
  text.addEventListener('keydown', (event) => {
    if (event.key === 'Enter' && !event.shiftKey) {
      event.preventDefault()
      composer.requestSubmit()
    }
  })
  text.addEventListener('input', () => {
    const now = Date.now()
    if (now - lastTyped < 2000) return
    lastTyped = now
    send({ type: 'user_typing', conversation_id: conversationId })
  })
  stopButton.addEventListener('click', () => send({ type: 'stop', conversation_id: conversationId }))
  // Esc stops the running answer from anywhere on the page, unless it closes something else first (a menu, a form).
  document.addEventListener('keydown', (event) => {
    if (event.key !== 'Escape' || !running || event.defaultPrevented) return
    if (event.target instanceof Element && event.target.closest('details[open], dialog[open]')) return
    event.preventDefault()
    send({ type: 'stop', conversation_id: conversationId })
  })

  // ---- a voice note from the microphone ----------------------------------------------------------------------------
  // Recorded in the browser, heard by the agent's speech runner (through the API), and its transcript sent as the
  // message with the recording beside it. A second press stops; a note is sent as soon as it is heard.
  const recordButton = document.getElementById('record')
  let recorder = null
  async function startRecording() {
    if (!navigator.mediaDevices?.getUserMedia || typeof MediaRecorder === 'undefined') {
      status.textContent = 'This browser cannot record here.'
      return
    }
    let stream
    try {
      stream = await navigator.mediaDevices.getUserMedia({ audio: true })
    } catch {
      status.textContent = 'The microphone could not be used: allow it for this site, then try again.'
      return
    }
    const chunks = []
    recorder = new MediaRecorder(stream)
    recorder.addEventListener('dataavailable', (event) => event.data.size && chunks.push(event.data))
    recorder.addEventListener('stop', () => {
      stream.getTracks().forEach((track) => track.stop())
      recorder = null
      recordButton.setAttribute('aria-pressed', 'false')
      recordButton.textContent = 'Record a voice note'
      void sendRecording(new Blob(chunks, { type: chunks[0]?.type || 'audio/webm' }))
    })
    recorder.start()
    recordButton.setAttribute('aria-pressed', 'true')
    recordButton.textContent = 'Stop recording and send'
    status.textContent = 'Recording…'
  }
  async function sendRecording(blob) {
    if (!blob.size) {
      status.textContent = 'Nothing was recorded.'
      return
    }
    recordButton.disabled = true
    status.textContent = 'Listening to your voice note…'
    const form = new FormData()
    form.set('file', blob, 'recording.webm')
    try {
      const response = await fetch(`/chat/${conversationId}/voice`, { method: 'POST', body: form })
      const body = await response.json().catch(() => ({}))
      if (response.status !== 201) {
        handlers.error({ text: body.detail || 'The voice note could not be heard.', details: '', error_type: body.code || 'voice_refused' })
        return
      }
      const message = { type: 'message', conversation_id: conversationId, text: body.text, voice_clip_id: body.voice_clip_id }
      if (!send(message)) status.textContent = 'Not connected yet; record it again in a moment.'
      else status.textContent = ''
    } finally {
      recordButton.disabled = false
    }
  }
  recordButton?.addEventListener('click', () => {
    if (recorder) recorder.stop()
    else if (!running) void startRecording()
  })

  // A starter prompt is sent as it is, as if typed. One chosen with the agent before the conversation existed
  // (?starter=N, a number, never a text) is sent once the socket is open, and only into an empty conversation.
  function sendStarter(button) {
    if (running) return
    text.value = button.value
    composer.requestSubmit()
  }
  document.getElementById('starters')?.addEventListener('click', (event) => {
    const button = event.target instanceof Element ? event.target.closest('button.starter') : null
    if (button) sendStarter(button)
  })
  function sendChosenStarter() {
    const url = new URL(location.href)
    const chosen = url.searchParams.get('starter')
    if (chosen === null) return
    url.searchParams.delete('starter')
    history.replaceState(history.state, '', url)
    const button = document.querySelectorAll('#starters button.starter')[Number(chosen)]
    if (button && messages.children.length === 0) sendStarter(button)
  }

  // Copy a code block, or a whole answer as the markdown it was written in.
  messages.addEventListener('click', async (event) => {
    const button = event.target instanceof Element ? event.target.closest('button.copy') : null
    if (!button) return
    const li = button.closest('li.msg')
    // A code block's text ends with the newline before its closing fence, which is not part of the code.
    const what = button.classList.contains('copy-code') ? button.closest('pre')?.querySelector('code')?.textContent?.replace(/\n$/, '') : li?.source
    if (what === undefined) return
    try {
      await navigator.clipboard.writeText(what)
      button.textContent = 'Copied'
    } catch {
      button.textContent = 'Copy failed'
    }
    setTimeout(() => (button.textContent = 'Copy'), 2000)
  })
  document.addEventListener('visibilitychange', markRead)

  function pendingChip(name) {
    const chip = document.createElement('li')
    chip.className = 'chip'
    chip.textContent = name
    pending.append(chip)
  }

  // ---- documents: chosen, dropped or pasted; uploaded with a progress bar ------------------------------------------
  const progress = document.getElementById('upload-progress')
  /** Uploads one file through XMLHttpRequest, whose upload reports progress (fetch's does not). */
  function sendFile(file) {
    return new Promise((resolve) => {
      const form = new FormData()
      form.set('file', file, file.name)
      const request = new XMLHttpRequest()
      request.open('POST', `/chat/${conversationId}/documents`)
      request.responseType = 'json'
      request.upload.onprogress = (event) => {
        if (event.lengthComputable) progress.value = event.loaded / event.total
      }
      request.onload = () => resolve({ status: request.status, body: request.response ?? {} })
      request.onerror = () => resolve({ status: 0, body: {} })
      request.send(form)
    })
  }
  async function uploadFiles(files) {
    for (const file of files) {
      progress.hidden = false
      progress.value = 0
      progress.setAttribute('aria-label', `Uploading ${file.name}`)
      status.textContent = `Uploading ${file.name}…`
      const { status: code, body } = await sendFile(file)
      progress.hidden = true
      status.textContent = ''
      if (code !== 201) {
        handlers.error({ text: body.detail || `${file.name} could not be uploaded.`, details: body.errors?.map((e) => e.message).join('; ') || '', error_type: body.code || 'upload_failed' })
        continue
      }
      attachments.push({ id: body.id, name: body.filename })
      // The chip says what the model will read of it.
      pendingChip(body.truncated ? `${body.filename} (only its first 200 KB of text is read)` : body.filename)
      document.body.dispatchEvent(new CustomEvent('chat-documents-stale'))
      if (body.notice) notice(body.notice)
    }
  }
  upload.addEventListener('change', async () => {
    const files = [...(upload.files ?? [])]
    upload.value = ''
    await uploadFiles(files)
  })
  // Dropped on the conversation, or pasted into the composer.
  const dropZone = document.querySelector('.chat-main')
  dropZone.addEventListener('dragover', (event) => {
    if (!event.dataTransfer?.types.includes('Files')) return
    event.preventDefault()
    dropZone.classList.add('dropping')
  })
  dropZone.addEventListener('dragleave', (event) => {
    if (!dropZone.contains(event.relatedTarget)) dropZone.classList.remove('dropping')
  })
  dropZone.addEventListener('drop', (event) => {
    const files = [...(event.dataTransfer?.files ?? [])]
    dropZone.classList.remove('dropping')
    if (!files.length) return
    event.preventDefault()
    void uploadFiles(files)
  })
  text.addEventListener('paste', (event) => {
    const files = [...(event.clipboardData?.files ?? [])]
    if (!files.length) return
    event.preventDefault()
    void uploadFiles(files)
  })

  arrangeVersions()
  offerActions()
  connect()
  scrollDown(true)
})()
