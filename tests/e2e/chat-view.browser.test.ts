import { afterAll, beforeAll, expect, test } from 'bun:test'
import { tmpdir } from 'node:os'
import type { Browser, Page } from 'playwright-core'
import { addSessionCookie, HAS_CHROMIUM, launchChromium, socketOpen, untilEqual, warnWithoutChromium, watchContext, type Watched } from '../helpers/browser.ts'
import { until } from '../helpers/until.ts'
import { echoAgent, startChatPlatform, type ChatPlatform } from '../helpers/web-chat.ts'

// The open conversation as a person uses it: who it is with, when each thing was said, code to copy, an answer
// that streams without taking the view or the composer from them, and the creator's rename and delete.

warnWithoutChromium()

let browser: Browser
let p: ChatPlatform
const watched: Watched = { violations: [], foreign: [], dialogs: [] }

beforeAll(async () => {
  if (!HAS_CHROMIUM) return
  ;[browser, p] = await Promise.all([launchChromium(), startChatPlatform()])
}, 30_000)

afterAll(async () => {
  await browser?.close()
  await p?.close()
})

type Person = Awaited<ReturnType<ChatPlatform['person']>>

/** A person, an echo agent and a conversation of theirs with it, open in Chromium. */
async function openConversation(viewport = { width: 1280, height: 800 }): Promise<{ page: Page; person: Person; agent: { id: string; name: string }; id: string }> {
  const [person, agent] = await Promise.all([p.person(), echoAgent(p)])
  await p.call('PATCH', `/api/v1/AgentConfigRecord/${agent.id}`, { json: { description: 'Says back what it hears.' } })
  const made = await p.call('POST', '/api/v1/WebchatConversation', { json: { agent_id: agent.id }, as: person })
  expect(made.status).toBe(201)
  const context = await browser.newContext({ viewport })
  await context.grantPermissions(['clipboard-read', 'clipboard-write'], { origin: p.adminUrl })
  await watchContext(context, [p.adminUrl], watched)
  await addSessionCookie(context, p.adminUrl, person.cookie)
  const page = await context.newPage()
  await page.goto(`${p.adminUrl}/chat/${made.body.id}`)
  await socketOpen(page)
  return { page, person, agent, id: made.body.id }
}

async function say(page: Page, text: string): Promise<void> {
  await page.fill('#composer-text', text)
  await page.press('#composer-text', 'Enter')
}

const clipboard = (page: Page) => page.evaluate(() => navigator.clipboard.readText())

test.skipIf(!HAS_CHROMIUM)('the conversation says which agent it is with, and when each message was written, in the reader’s zone', async () => {
  const { page, agent } = await openConversation()
  expect(await page.locator('#conversation-agent').textContent()).toBe(`With ${agent.name} — Says back what it hears.`)
  await say(page, 'what time is it')
  const answer = page.locator('#messages li.msg-agent[data-status=complete]')
  await answer.waitFor()
  // Live messages carry their time like stored ones; the script says it in the browser's locale, not as ISO.
  const live = await page.locator('#messages li.msg-user time').getAttribute('datetime')
  expect(Math.abs(Date.parse(live!) - Date.now())).toBeLessThan(60_000)
  await page.reload()
  const stored = page.locator('#messages li.msg-agent time')
  await stored.waitFor()
  expect(await stored.textContent()).not.toContain('UTC')
  expect(await stored.textContent()).toMatch(/\d{1,2}:\d{2}/)
  expect(await stored.getAttribute('title')).toBeTruthy()
  await page.context().close()
})

test.skipIf(!HAS_CHROMIUM)('code in an answer is highlighted and copied exactly; the whole answer copies as its markdown', async () => {
  const { page } = await openConversation()
  const code = 'const total = items.reduce((sum, item) => sum + item.price, 0)\nreturn "done"'
  await say(page, `Here:\n\`\`\`js\n${code}\n\`\`\``)
  const answer = page.locator('#messages li.msg-agent[data-status=complete]')
  await answer.waitFor()
  // highlight.js has marked the keywords and strings up, in spans of its own classes.
  expect(await answer.locator('pre code .hljs-keyword').first().textContent()).toBe('const')
  expect(await answer.locator('pre code .hljs-string').first().textContent()).toBe('"done"')
  await answer.locator('pre button.copy').click()
  await untilEqual(() => answer.locator('pre button.copy').textContent(), 'Copied', 'the code to be copied')
  expect(await clipboard(page)).toBe(code)
  await answer.locator('.msg-actions button.copy').click()
  await untilEqual(() => clipboard(page), `Echo: Here:\n\`\`\`js\n${code}\n\`\`\``, 'the answer to be copied')
  // Stored answers get the same after a reload.
  await page.reload()
  await page.locator('#messages li.msg-agent pre code .hljs-keyword').first().waitFor()
  expect(await page.locator('#messages li.msg-agent pre button.copy').count()).toBe(1)
  expect(watched.violations).toEqual([])
  await page.context().close()
})

test.skipIf(!HAS_CHROMIUM)('while an answer streams Send waits, what is typed stays, Esc stops it, and the view is left where the reader scrolled', async () => {
  const { page, person, id } = await openConversation({ width: 1280, height: 700 })
  // Enough earlier messages to scroll.
  for (let i = 0; i < 25; i++) {
    const made = await p.call('POST', '/api/v1/WebchatMessage', { json: { conversation_id: id, text: `earlier message ${i}\nwith a second line` }, as: person })
    expect(made.status).toBe(201)
  }
  await page.reload()
  await socketOpen(page)
  const atBottom = () => page.$eval('#messages', (el) => el.scrollHeight - el.scrollTop - el.clientHeight < 48)
  expect(await atBottom()).toBe(true)

  await say(page, '/slow 150 one two three four five six seven eight nine ten eleven twelve thirteen fourteen fifteen')
  await page.locator('#messages li.msg-agent.streaming').waitFor()
  expect(await page.isDisabled('#send')).toBe(true)
  // The reader scrolls up to read: the stream no longer pulls the view down, and offers the way back.
  await page.$eval('#messages', (el) => (el.scrollTop = 0))
  await page.locator('#jump-latest').waitFor()
  await until(async () => (await page.locator('#messages li.msg-agent.streaming .body').textContent())!.includes('three'), { what: 'more of the answer' })
  expect(await page.$eval('#messages', (el) => el.scrollTop)).toBeLessThan(50)
  // Typing goes on meanwhile; Enter does not send it over the running turn.
  await page.fill('#composer-text', 'my next question')
  await page.press('#composer-text', 'Enter')
  expect(await page.inputValue('#composer-text')).toBe('my next question')
  // Esc stops the answer.
  await page.keyboard.press('Escape')
  await page.locator('#messages li.msg-agent[data-status=aborted]').waitFor()
  await untilEqual(() => page.isDisabled('#send'), false, 'Send to be enabled once the turn stopped')
  expect(await page.isHidden('#stop')).toBe(true)
  await page.click('#jump-latest')
  expect(await atBottom()).toBe(true)
  expect(await page.isHidden('#jump-latest')).toBe(true)
  // The kept question goes now.
  await page.press('#composer-text', 'Enter')
  await page.locator('#messages li.msg-agent[data-status=complete]', { hasText: 'Echo: my next question' }).waitFor()
  await page.context().close()
})

test.skipIf(!HAS_CHROMIUM)('a message the server refuses comes back to the composer, its error shown once, and a running answer is left alone', async () => {
  const { page, agent, id } = await openConversation()
  await say(page, '/slow 120 a b c d e f g h')
  await page.locator('#messages li.msg-agent.streaming').waitFor()
  // Another tab of the same person sends over the running turn: refused, and this page's answer goes on.
  await page.evaluate((conversation) => window.__sockets.at(-1)!.send(JSON.stringify({ type: 'message', conversation_id: conversation, text: 'over the top' })), id)
  await page.locator('#messages li.msg-error', { hasText: 'A turn is already running' }).waitFor()
  await page.locator('#messages li.msg-agent[data-status=complete]', { hasText: 'Echo: a b c d e f g h' }).waitFor()
  expect(await page.locator('#messages li.msg-agent .flag').count()).toBe(0)
  expect(await page.locator('#messages li.msg-agent').count()).toBe(1)

  // The agent is switched off meanwhile: what was sent is refused and given back, not lost.
  expect((await p.call('PATCH', `/api/v1/AgentConfigRecord/${agent.id}`, { json: { enabled: false } })).status).toBe(200)
  await say(page, 'are you there?')
  await page.locator('#messages li.msg-error', { hasText: 'is disabled' }).waitFor()
  await untilEqual(() => page.inputValue('#composer-text'), 'are you there?', 'the refused message back in the composer')
  expect(await page.locator('#messages li.msg-error').count()).toBe(2)
  expect(await page.isDisabled('#send')).toBe(false)
  await page.context().close()
})

test.skipIf(!HAS_CHROMIUM)('an uploaded document shows at once in the documents panel', async () => {
  const { page } = await openConversation()
  expect(await page.locator('#documents p.muted').count()).toBe(1)
  await page.setInputFiles('#upload', { name: 'notes.txt', mimeType: 'text/plain', buffer: Buffer.from('The launch is on Tuesday.') })
  await page.locator('#documents li', { hasText: 'notes.txt' }).waitFor()
  expect(await page.locator('#documents p.muted').count()).toBe(0)
  expect(await page.locator('#pending-attachments .chip').textContent()).toBe('notes.txt')
  await page.context().close()
})

test.skipIf(!HAS_CHROMIUM)('its creator renames and deletes the conversation from the page; a deletion asks first', async () => {
  const { page, person, id } = await openConversation()
  await page.click('.rename summary')
  await page.fill('#conversation-title-input', 'Launch planning')
  await Promise.all([page.waitForURL(`${p.adminUrl}/chat/${id}`), page.click('.rename button[type=submit]')])
  expect(await page.locator('#chat-title').textContent()).toBe('Launch planning')
  expect(await page.locator(`#conversation-list li[data-id="${id}"] .conversation-title`).textContent()).toBe('Launch planning')

  // A title over the limit is refused in words, on the page.
  await page.click('.rename summary')
  await page.$eval('#conversation-title-input', (el) => el.removeAttribute('maxlength'))
  await page.fill('#conversation-title-input', 'x'.repeat(301))
  await page.click('.rename button[type=submit]')
  await page.locator('.conversation-header .problem, .conversation-header [role=alert]').first().waitFor()
  expect(await page.locator('.conversation-header').textContent()).toContain('at most 300 characters')
  expect((await p.call('GET', `/api/v1/WebchatConversation/${id}`, { as: person })).body.title).toBe('Launch planning')

  // Delete sits behind a disclosure that says what goes; only its button deletes.
  expect(await page.isVisible('.delete button[type=submit]')).toBe(false)
  await page.click('.delete summary')
  expect(await page.locator('.delete form p').textContent()).toContain('Launch planning')
  await Promise.all([page.waitForURL(`${p.adminUrl}/chat`), page.click('.delete button[type=submit]')])
  expect((await p.call('GET', `/api/v1/WebchatConversation/${id}`, { as: person })).status).toBe(404)
  expect(await page.locator(`#conversation-list li[data-id="${id}"]`).count()).toBe(0)
  await page.context().close()
})

test.skipIf(!HAS_CHROMIUM)('someone who did not start the conversation is offered neither rename nor delete', async () => {
  const { page, person, id } = await openConversation()
  const other = await p.person()
  expect((await p.call('POST', '/api/v1/WebchatParticipant', { json: { conversation_id: id, user_id: other.userId }, as: person })).status).toBe(201)
  const context = await browser.newContext()
  await addSessionCookie(context, p.adminUrl, other.cookie)
  const theirs = await context.newPage()
  await theirs.goto(`${p.adminUrl}/chat/${id}`)
  await theirs.locator('#chat-title').waitFor()
  expect(await theirs.locator('.conversation-tools .rename, .conversation-tools .delete').count()).toBe(0)
  expect(await theirs.locator('.conversation-tools .export').count()).toBe(1)
  // Posting the form anyway is refused by the API, and nothing changes.
  const forced = await theirs.request.post(`${p.adminUrl}/chat/${id}/delete`, { headers: { origin: p.adminUrl }, maxRedirects: 0 })
  expect(forced.status()).toBe(303)
  expect(forced.headers().location).toContain('problem=')
  expect((await p.call('GET', `/api/v1/WebchatConversation/${id}`, { as: person })).status).toBe(200)
  await Promise.all([context.close(), page.context().close()])
})

test.skipIf(!HAS_CHROMIUM)('a week-old conversation is found by a word in it (Ctrl+K, live as one types), archived, found again and exported', async () => {
  const { page, person, agent, id: recent } = await openConversation()
  const old = await p.call('POST', '/api/v1/WebchatConversation', { json: { agent_id: agent.id, title: 'Supplier call' }, as: person })
  expect((await p.call('POST', '/api/v1/WebchatMessage', { json: { conversation_id: old.body.id, text: 'The invoice from Hallstatt Timber is overdue.' }, as: person })).status).toBe(201)
  // A week ago.
  await p.services.db.updateTable('webchat_messages').set({ created_at: new Date(Date.now() - 7 * 86_400_000) }).where('conversation_id', '=', old.body.id).execute()
  await page.reload()
  const listed = () => page.locator('#conversation-list li.conversation').evaluateAll((els) => els.map((el) => (el as HTMLElement).dataset.id))
  expect((await listed()).sort()).toEqual([recent, old.body.id].sort())

  await page.locator('#composer-text').focus()
  await page.keyboard.press('Control+K')
  expect(await page.evaluate(() => document.activeElement?.id)).toBe('chat-search')
  await page.keyboard.type('hallst')
  await untilEqual(listed, [old.body.id], 'the list to hold only the conversation with the word')
  await page.fill('#chat-search', 'nothing-like-this')
  await page.locator('#conversation-list p.muted', { hasText: 'No conversation holds “nothing-like-this”.' }).waitFor()
  await page.fill('#chat-search', '')
  await untilEqual(async () => (await listed()).length, 2, 'the whole list back')

  // Archived: out of the list, in the archived one, and back.
  await page.click(`#conversation-list li[data-id="${old.body.id}"] button.archive`)
  await untilEqual(listed, [recent], 'the archived conversation to leave the list')
  await page.click('.list-view a')
  await page.waitForURL(`${p.adminUrl}/chat?archived=true`)
  expect(await listed()).toEqual([old.body.id])
  await page.fill('#chat-search', 'invoice')
  await untilEqual(listed, [old.body.id], 'the archived conversation found by a word')
  await page.click(`#conversation-list li[data-id="${old.body.id}"] button.archive`)
  await untilEqual(listed, [], 'the conversation to leave the archived list')
  await page.goto(`${p.adminUrl}/chat/${old.body.id}`)

  // Exported as the browser saves it.
  await page.click('.export summary')
  const [download] = await Promise.all([page.waitForEvent('download'), page.click('.export a[href$="format=markdown"]')])
  expect(download.suggestedFilename()).toBe('Supplier-call.md')
  const saved = await Bun.file((await download.path())!).text()
  expect(saved).toContain('# Supplier call')
  expect(saved).toContain('The invoice from Hallstatt Timber is overdue.')
  await page.context().close()
})

test.skipIf(!HAS_CHROMIUM)('a question is edited and answered again; the two answers are compared by flipping between them, after a reload too', async () => {
  const { page } = await openConversation()
  await say(page, 'what is the capitol of France')
  const current = page.locator('#messages li.msg-agent:not([hidden])')
  await page.locator('#messages li.msg-agent[data-status=complete]').waitFor()
  expect(await current.locator('.body').innerText()).toBe('Echo: what is the capitol of France')

  // Edit: the question becomes a form; saved, it changes and is answered again.
  await page.click('#messages li.msg-user.mine button.edit')
  await page.fill('.edit-form textarea', 'what is the capital of France')
  await page.click('.edit-form button[type=submit]')
  await untilEqual(() => current.locator('.body').innerText(), 'Echo: what is the capital of France', 'the new answer')
  expect(await page.locator('#messages li.msg-user .body').textContent()).toBe('what is the capital of France')
  expect(await current.locator('.versions span').textContent()).toBe('2 / 2')

  // Flip back to the first answer, and forth again.
  await current.locator('.versions button[aria-label="Earlier version"]').click()
  expect(await current.locator('.body').innerText()).toBe('Echo: what is the capitol of France')
  expect(await current.locator('.versions span').textContent()).toBe('1 / 2')
  await current.locator('.versions button[aria-label="Later version"]').click()
  expect(await current.locator('.body').innerText()).toBe('Echo: what is the capital of France')

  // Regenerate makes a third; a reload shows the latest with its pager.
  await page.click('#messages li.msg-agent:not([hidden]) button.regenerate')
  await untilEqual(() => current.locator('.versions span').textContent(), '3 / 3', 'a third version')
  await page.reload()
  await socketOpen(page)
  expect(await page.locator('#messages li.msg-agent:not([hidden])').count()).toBe(1)
  expect(await current.locator('.versions span').textContent()).toBe('3 / 3')
  expect(await page.locator('#messages li.msg-user').count()).toBe(1)
  await page.context().close()
})

test.skipIf(!HAS_CHROMIUM)('documents dropped on the conversation or pasted into the composer are uploaded, shown as chips, and read by the agent', async () => {
  const { page } = await openConversation()
  // A file dropped on the conversation, as a browser's drag and drop delivers it.
  await page.evaluate(() => {
    const data = new DataTransfer()
    data.items.add(new File(['The launch code word is PELICAN.'], 'dropped.txt', { type: 'text/plain' }))
    const zone = document.querySelector('.chat-main')!
    zone.dispatchEvent(new DragEvent('dragover', { dataTransfer: data, bubbles: true, cancelable: true }))
    zone.dispatchEvent(new DragEvent('drop', { dataTransfer: data, bubbles: true, cancelable: true }))
  })
  await page.locator('#pending-attachments .chip', { hasText: 'dropped.txt' }).waitFor()
  // And one pasted into the composer.
  await page.evaluate(() => {
    const data = new DataTransfer()
    data.items.add(new File(['The backup word is HERON.'], 'pasted.txt', { type: 'text/plain' }))
    document.getElementById('composer-text')!.dispatchEvent(new ClipboardEvent('paste', { clipboardData: data, bubbles: true, cancelable: true }))
  })
  await page.locator('#pending-attachments .chip', { hasText: 'pasted.txt' }).waitFor()
  expect(await page.isHidden('#upload-progress')).toBe(true)
  await page.locator('#documents li', { hasText: 'pasted.txt' }).waitFor()
  expect(await page.locator('#documents li').allTextContents()).toEqual(['dropped.txt', 'pasted.txt'])
  // The agent reads both.
  await say(page, '/quote HERON')
  await page.locator('#messages li.msg-agent[data-status=complete]', { hasText: 'HERON' }).waitFor()
  await page.context().close()
})

/** A 1×1 GIF, the smallest picture a browser draws. */
const GIF = new Uint8Array([0x47, 0x49, 0x46, 0x38, 0x39, 0x61, 1, 0, 1, 0, 0x80, 0, 0, 0, 0, 0, 255, 255, 255, 0x2c, 0, 0, 0, 0, 1, 0, 1, 0, 0, 2, 2, 0x44, 1, 0, 0x3b])

test.skipIf(!HAS_CHROMIUM)('agents are offered with their picture and starter prompts; a starter starts a conversation and sends itself', async () => {
  const [person, agent] = await Promise.all([p.person(), echoAgent(p)])
  const starters = ['What can you do?', 'Tell me about your week']
  expect((await p.call('PATCH', `/api/v1/AgentConfigRecord/${agent.id}`, { json: { description: 'Says back what it hears.', starter_prompts: starters } })).status).toBe(200)
  const form = new FormData()
  form.set('file', new File([GIF], 'face.gif'))
  expect((await p.call('PUT', `/api/agents/${agent.id}/avatar`, { body: form })).status).toBe(200)

  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } })
  await watchContext(context, [p.adminUrl], watched)
  await addSessionCookie(context, p.adminUrl, person.cookie)
  const page = await context.newPage()
  await page.goto(`${p.adminUrl}/chat`)
  const card = page.locator('.agent-card', { hasText: agent.name })
  expect(await card.locator('p').textContent()).toBe('Says back what it hears.')
  // The picture is served and drawn (a broken image has no natural width).
  await until(() => card.locator('img.agent-badge').evaluate((img: HTMLImageElement) => img.complete && img.naturalWidth === 1), { what: 'the agent’s picture to load' })
  expect(await card.getByRole('group').getByRole('button').allTextContents()).toEqual(starters)

  await page.screenshot({ path: `${process.env.SCREENSHOT_DIR ?? tmpdir()}/chat-agents-1280.png` })
  await Promise.all([page.waitForURL(/\/chat\/[0-9a-f-]{36}$/), card.getByRole('button', { name: 'Tell me about your week' }).click()])
  await page.locator('#messages li.msg-user', { hasText: 'Tell me about your week' }).waitFor()
  await page.locator('#messages li.msg-agent[data-status=complete]').waitFor()
  // Sent once: the number left the address, so a reload sends nothing again.
  expect(new URL(page.url()).search).toBe('')
  await page.reload()
  await socketOpen(page)
  expect(await page.locator('#messages li.msg-user').count()).toBe(1)
  expect(await page.locator('#starters').count()).toBe(0)
  // A crafted link cannot make a conversation that has begun say a starter either.
  await page.goto(`${page.url()}?starter=0`)
  await socketOpen(page)
  await Bun.sleep(300)
  expect(await page.locator('#messages li.msg-user').count()).toBe(1)

  // A new conversation with the agent offers its starters until the first message, which one of them can be.
  await page.goto(`${p.adminUrl}/chat`)
  await Promise.all([page.waitForURL(/\/chat\/[0-9a-f-]{36}$/), card.getByRole('button', { name: `Talk to ${agent.name}` }).click()])
  await socketOpen(page)
  expect(await page.locator('.conversation-header img.agent-badge').getAttribute('src')).toMatch(/^\/static\/avatars\//)
  await page.locator('#starters').getByRole('button', { name: 'What can you do?' }).click()
  await page.locator('#messages li.msg-user', { hasText: 'What can you do?' }).waitFor()
  expect(await page.locator('#starters').count()).toBe(0)
  expect(watched.violations).toEqual([])
  await context.close()
})
