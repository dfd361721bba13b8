import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import type { Browser, BrowserContext, Page } from 'playwright-core'
import { addSessionCookie, HAS_CHROMIUM, launchChromium, socketOpen, startTcpProxy, untilEqual, warnWithoutChromium, watchContext, type TcpProxy, type Watched } from '../helpers/browser.ts'
import { CLUSTER_NEEDS_POSTGRES, startCluster, type Cluster } from '../helpers/cluster.ts'
import { TEST_DATABASE_URL } from '../helpers/database.ts'
import { docxWithText, elfExecutable, pdfWithText, xlsxWithSheets } from '../helpers/documents.ts'
import { until } from '../helpers/until.ts'
import { echoAgent, startChatPlatform, type ChatPlatform } from '../helpers/web-chat.ts'
import { rowsOf } from '../helpers/typed-call.ts'

// The web chat as people use it: Chromium pages on the admin port, each person in a browser context of their
// own, checked by what the page shows (and, where it matters, by what the API and the store say).

warnWithoutChromium()

let browser: Browser
let p: ChatPlatform
const contexts: BrowserContext[] = []
/** What any page of any test did that none should: CSP violations, requests to another origin, dialogs. */
const watched: Watched = { violations: [], foreign: [], dialogs: [] }

beforeAll(async () => {
  if (!HAS_CHROMIUM) return
  ;[browser, p] = await Promise.all([launchChromium(), startChatPlatform()])
}, 30_000)

afterAll(async () => {
  await browser?.close()
  await p?.close()
})

/** A fresh browser context (its own cookies: one person) and a page in it; requests may go to `origins` only. */
async function browse(base: string, cookie?: string, origins: string[] = [base], watching: Watched = watched): Promise<Page> {
  const context = await browser.newContext()
  contexts.push(context)
  await watchContext(context, origins, watching)
  if (cookie) await addSessionCookie(context, base, cookie)
  return context.newPage()
}

/** Writes in the composer and sends with Enter, as a person does. */
async function say(page: Page, text: string): Promise<void> {
  await page.fill('#composer-text', text)
  await page.press('#composer-text', 'Enter')
  await untilEqual(() => page.inputValue('#composer-text'), '', 'the composer to empty once the message is sent')
}

const texts = (page: Page, selector: string) => page.locator(selector).evaluateAll((els) => els.map((el) => el.textContent?.trim() ?? ''))
const agentTexts = (page: Page) => texts(page, '#messages li.msg-agent .body')
const userTexts = (page: Page) => texts(page, '#messages li.msg-user .body')

// ---- two people in one conversation ----------------------------------------------------------------------------

interface Person {
  userId: string
  username: string
  /** The session cookie (`name=value`) the browser context is given. */
  cookie: string
}

/** Where the two people's browsers are, and how the test asks the API as one of them (with their token). */
interface Site {
  a: Person
  b: Person
  agent: { id: string; name: string }
  baseA: string
  baseB: string
  api(who: Person, method: string, path: string, json?: unknown): Promise<{ status: number; body: any }>
}

/**
 * A starts a conversation on the page and adds B on the people panel; they talk, B sees it live or as an unread
 * badge elsewhere, the agent answers only when mentioned, pins are each person's own, and once A removes B, B's
 * page says so and the API no longer shows B the conversation.
 */
async function twoPeopleShare(site: Site): Promise<void> {
  const { a, b } = site
  const [pageA, pageB] = await Promise.all([browse(site.baseA, a.cookie), browse(site.baseB, b.cookie)])
  try {
    await converse(site, pageA, pageB)
  } finally {
    // Both close their tabs: no socket is left open on the servers (a process stops once its sockets are gone).
    await Promise.all([pageA.context().close(), pageB.context().close()])
  }
}

async function converse(site: Site, pageA: Page, pageB: Page): Promise<void> {
  const { a, b, agent } = site
  // A conversation of B's own, to be somewhere else when A writes.
  const elsewhere = await site.api(b, 'POST', '/api/v1/WebchatConversation', { agent_id: agent.id })
  expect(elsewhere.status).toBe(201)

  // A starts the conversation from the page.
  await pageA.goto(`${site.baseA}/chat`)
  await pageA.selectOption('#new-agent', agent.id)
  await Promise.all([pageA.waitForURL(/\/chat\/[0-9a-f-]{36}$/), pageA.click('.new-chat button[type=submit]')])
  const id = (await pageA.getAttribute('.chat', 'data-conversation'))!
  expect(new URL(pageA.url()).pathname).toBe(`/chat/${id}`)
  await pageA.locator('#participants-title .tag', { hasText: 'private' }).waitFor()

  // … and adds B by username on the people panel.
  await pageA.fill('#person', b.username)
  await pageA.click('.add-person button[type=submit]')
  await pageA.locator(`#participants li[data-user="${b.userId}"]`).waitFor()
  await pageA.locator('#participants-title .tag', { hasText: 'shared' }).waitFor()
  expect(await pageA.locator('#participants .problem').count()).toBe(0)

  // B opens it; from now on both pages hear each other.
  await pageB.goto(`${site.baseB}/chat/${id}`)
  await Promise.all([socketOpen(pageA), socketOpen(pageB)])
  await pageB.locator(`#participants li[data-user="${a.userId}"]`, { hasText: '(started it)' }).waitFor()

  // B sees A typing, then what A wrote, without reloading.
  await pageA.locator('#composer-text').pressSequentially('Hello B')
  await pageB.locator('#typing', { hasText: `${a.username} is typing…` }).waitFor()
  expect(await pageA.locator('#typing').textContent()).toBe('')
  await pageA.press('#composer-text', 'Enter')
  await pageB.locator('#messages li.msg-user', { hasText: 'Hello B' }).waitFor()
  expect(await pageB.locator('#messages li.msg-user', { hasText: 'Hello B' }).locator('.who span').textContent()).toBe(a.username)
  expect(await pageA.locator('#messages li.msg-user.mine', { hasText: 'Hello B' }).count()).toBe(1)

  // Without a mention the agent keeps quiet; with one it answers, and both see the answer. Turns are taken one at a
  // time, so had the first message started one, its answer (or a refusal of the second) would show before this.
  await say(pageA, 'no agent needed for this one')
  await pageB.locator('#messages li.msg-user', { hasText: 'no agent needed for this one' }).waitFor()
  const mention = `@${agent.name} please answer`
  await say(pageA, mention)
  for (const page of [pageA, pageB]) {
    await page.locator('#messages li.msg-agent[data-status=complete]').waitFor()
    expect(await agentTexts(page)).toEqual([`Echo: ${mention}`])
    expect(await userTexts(page)).toEqual(['Hello B', 'no agent needed for this one', mention])
    expect(await page.locator('#messages li.msg-error').count()).toBe(0)
  }
  const stored = await site.api(a, 'GET', `/api/v1/WebchatMessage?conversation_id=eq.${id}&order=id.asc`)
  expect(stored.body.data.map((m: any) => [m.role, m.text])).toEqual([
    ['user', 'Hello B'],
    ['user', 'no agent needed for this one'],
    ['user', mention],
    ['agent', `Echo: ${mention}`],
  ])

  // B has read it all (the page says so on its own), then goes to another conversation: A's next message shows
  // there as an unread badge in B's list.
  const unreadOf = async (who: Person) => (await site.api(who, 'GET', '/api/chat/conversations')).body.data.find((c: any) => c.id === id)
  await until(async () => (await unreadOf(b))?.unread === 0, { what: 'B’s page to mark the conversation read' })
  await pageB.goto(`${site.baseB}/chat/${elsewhere.body.id}`)
  await socketOpen(pageB)
  const badge = pageB.locator(`#conversation-list li.conversation[data-id="${id}"] a .badge`)
  expect(await badge.count()).toBe(0)
  await say(pageA, 'are you there?')
  await badge.filter({ hasText: /^1$/ }).waitFor()
  expect(await badge.getAttribute('aria-label')).toBe('1 unread')
  expect((await unreadOf(b)).unread).toBe(1)

  // On the chat page with no conversation open, the list keeps counting.
  await pageB.goto(`${site.baseB}/chat`)
  await socketOpen(pageB)
  await say(pageA, 'still there?')
  await badge.filter({ hasText: /^2$/ }).waitFor()

  // B opens it from the list: the messages are there, the badge is gone.
  await Promise.all([pageB.waitForURL(`${site.baseB}/chat/${id}`), pageB.click(`#conversation-list li.conversation[data-id="${id}"] a`)])
  await pageB.locator('#messages li.msg-user', { hasText: 'still there?' }).waitFor()
  expect(await badge.count()).toBe(0)
  await until(async () => (await unreadOf(b))?.unread === 0, { what: 'B’s read marker after opening the conversation' })

  // A pins it; B's pin is B's own and stays off.
  const pinOf = (page: Page) => page.locator(`#conversation-list li.conversation[data-id="${id}"] button.pin`)
  expect(await pinOf(pageA).getAttribute('aria-pressed')).toBe('false')
  await pinOf(pageA).click()
  await untilEqual(() => pinOf(pageA).getAttribute('aria-pressed'), 'true', 'A’s pin to show pressed')
  expect((await unreadOf(a)).pinned_at).toBeTruthy()
  expect((await unreadOf(b)).pinned_at).toBeNull()
  await pageB.reload()
  expect(await pinOf(pageB).getAttribute('aria-pressed')).toBe('false')
  await socketOpen(pageB)

  // A removes B: B's page says B no longer takes part and stops taking messages; the API answers B 404.
  await pageA.locator(`#participants li[data-user="${b.userId}"] button`, { hasText: 'Remove' }).click()
  await pageA.locator(`#participants li[data-user="${b.userId}"]`).waitFor({ state: 'detached' })
  await pageA.locator('#participants-title .tag', { hasText: 'private' }).waitFor()
  await pageB.locator('#connection', { hasText: 'You no longer take part in this conversation.' }).waitFor()
  expect(await pageB.locator('#composer-text').isDisabled()).toBe(true)
  expect(await pageB.locator('#send').isDisabled()).toBe(true)
  await pageB.locator(`#conversation-list li.conversation[data-id="${id}"]`).waitFor({ state: 'detached' })
  expect((await site.api(b, 'GET', `/api/v1/WebchatConversation/${id}`)).status).toBe(404)
  const mine = await site.api(a, 'GET', `/api/v1/WebchatConversation/${id}`)
  expect(mine.status).toBe(200)
  expect(mine.body.shared).toBe(false)
}

test.skipIf(!HAS_CHROMIUM)(
  'two people share a conversation: live messages, typing, unread badges, mentions, own pins, removal',
  async () => {
    const [agent, a, b] = await Promise.all([echoAgent(p, `helper-${crypto.randomUUID().slice(0, 6)}`), p.person(), p.person()])
    await twoPeopleShare({
      a,
      b,
      agent,
      baseA: p.adminUrl,
      baseB: p.adminUrl,
      api: (who, method, path, json) => p.call(method, path, { as: who as never, json }),
    })
  },
  30_000,
)

// ---- one person and the agent -----------------------------------------------------------------------------------

/** A signed-in member, an echo agent and a conversation between them, open in a page. */
async function conversationPage(watching: Watched = watched) {
  const [agent, a] = await Promise.all([echoAgent(p), p.person()])
  const created = await p.call('POST', '/api/v1/WebchatConversation', { json: { agent_id: agent.id }, as: a })
  expect(created.status).toBe(201)
  const id: string = created.body.id
  const page = await browse(p.adminUrl, a.cookie, [p.adminUrl], watching)
  await page.goto(`${p.adminUrl}/chat/${id}`)
  await socketOpen(page)
  return { a, id, page }
}

test.skipIf(!HAS_CHROMIUM)(
  'the stop button stops a streaming answer; what was said is kept, marked aborted',
  async () => {
    const { a, page } = await conversationPage()
    await say(page, '/slow 200 alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu')
    await page.locator('#stop').waitFor({ state: 'visible' })
    await page.locator('#typing', { hasText: 'The agent is writing…' }).waitFor()
    await page.locator('#messages li.msg-agent.streaming .body', { hasText: 'Echo: alpha beta' }).waitFor()
    await page.click('#stop')

    const stopped = page.locator('#messages li.msg-agent[data-status=aborted]')
    await stopped.waitFor()
    await page.locator('#stop').waitFor({ state: 'hidden' })
    expect(await stopped.locator('.flag').textContent()).toBe('Stopped before the end')
    expect(await page.locator('#typing').textContent()).toBe('')
    const shown = (await stopped.locator('.body').textContent())!.trim()
    const whole = 'Echo: alpha beta gamma delta epsilon zeta eta theta iota kappa lambda mu'
    expect(shown).toStartWith('Echo: alpha beta')
    expect(whole.startsWith(shown) && shown !== whole).toBe(true)

    // The store has the same partial answer, aborted.
    const messageId = await stopped.getAttribute('data-id')
    expect(messageId).toBeTruthy()
    const stored = await p.call('GET', `/api/v1/WebchatMessage/${messageId}`, { as: a })
    expect(stored.body).toMatchObject({ role: 'agent', status: 'aborted', text: shown })

    // The turn is over: the next message is answered (not refused as "a turn is already running"), and the
    // stopped answer got nothing more meanwhile.
    await say(page, 'after the stop')
    await page.locator('#messages li.msg-agent[data-status=complete]').waitFor()
    expect(await agentTexts(page)).toEqual([shown, 'Echo: after the stop'])
    expect(await page.locator('#messages li.msg-error').count()).toBe(0)
  },
  30_000,
)

test.skipIf(!HAS_CHROMIUM)(
  'hostile markdown in an answer runs nothing; ordinary markdown renders',
  async () => {
    // This page's own watch: its policy reports are looked at here (see the end of the test).
    const watching: Watched = { violations: [], foreign: [], dialogs: [] }
    const { page } = await conversationPage(watching)
    const hostile = [
      'Here is a **bold** word.',
      '',
      '- first item',
      '- second item',
      '',
      '```',
      'const answer = 1 < 2 && "<b>not bold</b>"',
      '```',
      '',
      '<img src=x onerror="window.__pwned=1">',
      '',
      '[click](javascript:window.__pwned=2)',
      '',
      '<svg><script>window.__pwned=3</script></svg>',
      '',
      '<svg onload="window.__pwned=4">',
      '',
      '<a href="javascript:alert(1)">x</a>',
      '',
      '<iframe src="javascript:window.__pwned=5"></iframe>',
      '',
      '<script>window.__pwned=6</script>',
      '',
      '<a href=" JaVaScRiPt:window.__pwned=7">mixed case</a> <details open ontoggle="window.__pwned=8">d</details>',
      '',
      '<math><mi xlink:href="javascript:window.__pwned=9">m</mi></math> <form action="javascript:window.__pwned=10"><button>go</button></form>',
      '',
      // htmx acts on data-hx-* too: an answer must not make the reader's browser send requests as them.
      '<a data-hx-post="/chat/pwn" data-hx-trigger="load" hx-get="/chat/pwn" hx-trigger="load">quiet</a> <img data-hx-get="/chat/pwn" data-hx-trigger="load">',
    ].join('\n')
    const sentForTheAnswer: string[] = []
    page.on('request', (request) => request.url().includes('/chat/pwn') && sentForTheAnswer.push(`${request.method()} ${request.url()}`))
    await say(page, hostile)
    await page.locator('#messages li.msg-agent[data-status=complete]').waitFor()

    // What was written shows as text, as it was written.
    expect(await userTexts(page)).toEqual([hostile])

    /** What the answer's DOM holds, and whether anything ran. */
    const inspect = () =>
      page.evaluate(() => {
        const md = document.querySelector('#messages li.msg-agent .md')!
        const all = [...document.querySelectorAll('#messages *')]
        const urlAttributes = ['href', 'src', 'action', 'formaction', 'xlink:href', 'data', 'srcdoc']
        return {
          pwned: (window as any).__pwned,
          eventAttributes: all.flatMap((el) => [...el.attributes].filter((at) => at.name.toLowerCase().startsWith('on')).map((at) => `${el.tagName} ${at.name}`)),
          scriptUrls: all.flatMap((el) => urlAttributes.map((name) => el.getAttribute(name)).filter((v): v is string => v !== null && /^\s*(javascript|data|vbscript):/i.test(v))),
          forbidden: [...md.querySelectorAll('svg, script, iframe, object, embed, math, form, style')].map((el) => el.tagName),
          dataAttributes: [...md.querySelectorAll('*')].flatMap((el) => [...el.attributes].filter((at) => /^(data-|hx-)/i.test(at.name)).map((at) => at.name)),
          bold: [...md.querySelectorAll('strong')].map((el) => el.textContent),
          items: [...md.querySelectorAll('ul > li')].map((el) => el.textContent),
          code: md.querySelector('pre code')?.textContent,
          links: [...md.querySelectorAll('a')].map((a) => ({ text: a.textContent, href: a.getAttribute('href'), rel: a.getAttribute('rel') })),
        }
      })
    const check = async () => {
      const seen = await inspect()
      expect(seen.pwned).toBeUndefined()
      expect(seen.eventAttributes).toEqual([])
      expect(seen.scriptUrls).toEqual([])
      expect(seen.forbidden).toEqual([])
      expect(seen.dataAttributes).toEqual([])
      expect(sentForTheAnswer).toEqual([])
      // Ordinary markdown still renders: bold, a list, a code block whose markup stays text.
      expect(seen.bold).toEqual(['bold'])
      expect(seen.items).toEqual(['first item', 'second item'])
      expect(seen.code).toBe('const answer = 1 < 2 && "<b>not bold</b>"\n')
      for (const link of seen.links) {
        expect(link.href === null || link.href.startsWith('http')).toBe(true)
        if (link.href) expect(link.rel).toContain('noopener')
      }
      // Clicking what is left of the links runs nothing either.
      for (const name of ['click', 'x', 'mixed case']) await page.locator('#messages li.msg-agent .md a', { hasText: name }).first().click({ timeout: 2_000 }).catch(() => {})
      await page.evaluate(() => new Promise((resolve) => requestAnimationFrame(() => setTimeout(resolve))))
      expect(await page.evaluate(() => (window as any).__pwned)).toBeUndefined()
      expect(watching.dialogs).toEqual([])
      expect(page.context().pages()).toHaveLength(1)
    }
    // As streamed …
    await check()
    // … and as stored, rendered anew when the page loads.
    await page.reload()
    await page.locator('#messages li.msg-agent[data-status=complete] .md p').first().waitFor()
    await check()

    // The only policy reports are Chromium's about the inline handlers met while the sanitizer parses the answer
    // in an inert document (DOMParser documents inherit the page's policy): the handlers were blocked twice over,
    // by the policy and by the sanitizer that dropped them. Nothing else was reported, nothing loaded elsewhere.
    expect(watching.violations.length).toBeGreaterThan(0)
    for (const violation of watching.violations) {
      expect(violation).toMatchObject({ directive: 'script-src-attr', blocked: 'inline' })
      expect(violation.source).toStartWith(`${p.adminUrl}/static/vendor/purify.js:`)
    }
    expect(watching.foreign).toEqual([])
  },
  30_000,
)

test.skipIf(!HAS_CHROMIUM)(
  'the server side drops the socket mid-answer: the page reconnects and shows the whole answer once',
  async () => {
    // The browser reaches the admin server through a TCP proxy that the test can cut, both ends at once. The
    // platform's public admin address is the proxy's, as behind any reverse proxy, so its origin is the page's.
    const proxy: TcpProxy = startTcpProxy()
    const q = await startChatPlatform({ SWITCHBOARD_ADMIN_BASE_URL: proxy.url })
    try {
      proxy.forwardTo(Number(new URL(q.adminUrl).port))
      const password = 'reconnect-person-password'
      const [agent, user] = await Promise.all([echoAgent(q), q.createUser({ password })])
      const created = await q.call('POST', '/api/v1/WebchatConversation', { json: { agent_id: agent.id }, as: user })
      const id: string = created.body.id

      // Signing in through the page, sent there by the conversation's address and back to it afterwards.
      const page = await browse(proxy.url)
      await page.goto(`${proxy.url}/chat/${id}`)
      expect(new URL(page.url()).pathname).toBe('/login')
      await page.fill('#username', user.username)
      await page.fill('#password', password)
      await Promise.all([page.waitForURL(`${proxy.url}/chat/${id}`), page.click('button[type=submit]')])
      await socketOpen(page)

      const words = 'one two three four five six seven eight nine ten eleven twelve thirteen fourteen'
      await say(page, `/slow 120 ${words}`)
      await page.locator('#messages li.msg-agent.streaming .body', { hasText: 'Echo: one two' }).waitFor()
      const sockets = () => proxy.connections.filter((c) => c.requestLine.startsWith('GET /ws/chat')).length
      expect(sockets()).toBe(1)
      expect(proxy.cut()).toBeGreaterThan(0)
      await page.locator('#connection', { hasText: 'Connection lost; reconnecting…' }).waitFor()

      // A second socket, through the proxy again; the answer goes on where it was.
      await until(() => sockets() === 2, { what: 'the page to open a new socket' })
      await socketOpen(page, 'the new socket to open')
      expect(await page.evaluate(() => window.__sockets.length)).toBe(2)
      const answer = page.locator('#messages li.msg-agent')
      await page.locator('#messages li.msg-agent[data-status=complete]').waitFor()
      expect(await answer.count()).toBe(1)
      expect(await agentTexts(page)).toEqual([`Echo: ${words}`])
      expect(await page.locator('#connection').textContent()).toBe('')
      // The page had not seen the end before the cut: the rest came through the new socket.
      const stored = await q.call('GET', `/api/v1/WebchatMessage?conversation_id=eq.${id}&role=eq.agent`, { as: user })
      expect(stored.body.data.map((m: any) => [m.text, m.status])).toEqual([[`Echo: ${words}`, 'complete']])
      expect(await answer.getAttribute('data-id')).toBe(stored.body.data[0]!.id)
    } finally {
      proxy.stop()
      await q.close()
    }
  },
  30_000,
)

test.skipIf(!HAS_CHROMIUM)(
  'documents: each kind uploaded from the page reaches the agent; a long text is cut with a notice; a renamed program is refused',
  async () => {
    const { a, id, page } = await conversationPage()
    const files = [
      { name: 'minutes.pdf', mimeType: 'application/pdf', buffer: pdfWithText(['Board minutes', 'The PDF phrase is violet-heron-42 indeed.']), phrase: 'violet-heron-42' },
      {
        name: 'plan.docx',
        mimeType: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
        buffer: docxWithText(['The plan', 'The DOCX phrase is amber-falcon-17 indeed.']),
        phrase: 'amber-falcon-17',
      },
      {
        name: 'budget.xlsx',
        mimeType: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
        buffer: await xlsxWithSheets({ Budget: [['Item', 'Note'], ['Travel', 'The XLSX phrase is cobalt-otter-58 indeed']] }),
        phrase: 'cobalt-otter-58',
      },
      { name: 'people.csv', mimeType: 'text/csv', buffer: new TextEncoder().encode('name,motto\nAda,The CSV phrase is jade-lynx-23 indeed\n'), phrase: 'jade-lynx-23' },
      { name: 'notes.txt', mimeType: 'text/plain', buffer: new TextEncoder().encode('Notes\nThe TXT phrase is rust-badger-91 indeed.\n'), phrase: 'rust-badger-91' },
    ]
    for (const file of files) {
      await page.setInputFiles('#upload', { name: file.name, mimeType: file.mimeType, buffer: Buffer.from(file.buffer) })
      await page.locator('#documents li', { hasText: file.name }).waitFor()
      await page.locator('#pending-attachments li.chip', { hasText: file.name }).waitFor()
    }
    expect(await page.locator('#messages li.msg-error').count()).toBe(0)

    // The first message carries them; the agent quotes a line of each from its context.
    for (const [i, file] of files.entries()) {
      await say(page, `/quote ${file.phrase}`)
      await untilEqual(() => page.locator('#messages li.msg-agent[data-status=complete]').count(), i + 1, `the answer quoting ${file.name}`)
      const quoted = (await agentTexts(page))[i]!
      expect(quoted).toStartWith('Quoted: ')
      expect(quoted).toContain(file.phrase)
    }
    expect(await texts(page, '#messages li.msg-user:first-child .chip')).toEqual(files.map((f) => f.name))
    expect(await page.locator('#pending-attachments li').count()).toBe(0)

    // 300 KB of text: kept up to 200 KB, and the page says so.
    const line = 'This line is filler text for a long document, nothing to see here.\n'
    const long = new TextEncoder().encode(line.repeat(Math.ceil((300 * 1024) / line.length)))
    await page.setInputFiles('#upload', { name: 'long.txt', mimeType: 'text/plain', buffer: Buffer.from(long) })
    await page.locator('#documents li', { hasText: 'long.txt' }).waitFor()
    const notice = page.locator('#messages li.msg-system', { hasText: 'long.txt' })
    await notice.waitFor()
    expect(await notice.textContent()).toContain('200 KB')

    // A program named report.pdf is refused by its bytes, with a message the person can read.
    await page.setInputFiles('#upload', { name: 'report.pdf', mimeType: 'application/pdf', buffer: Buffer.from(elfExecutable()) })
    const refused = page.locator('#messages li.msg-error[role=alert]')
    await refused.waitFor()
    const said = (await refused.locator('.body').textContent())!
    expect(said.length).toBeGreaterThan(10)
    expect(said).not.toContain('could not be uploaded')
    expect(said).not.toMatch(/[{}<>]/)
    expect(await refused.locator('.error-type').textContent()).toBe('Error type: unsupported_media_type')
    expect(await page.locator('#documents li', { hasText: 'report.pdf' }).count()).toBe(0)
    expect(await page.locator('#pending-attachments li', { hasText: 'report.pdf' }).count()).toBe(0)

    // The store has the six documents, the long one marked cut; after a reload the panel says so too.
    const stored = await p.call('GET', `/api/v1/WebchatDocument?conversation_id=eq.${id}&select=filename,truncated&order=created_at.asc`, { as: a })
    expect(rowsOf(stored.body)).toEqual([...files.map((f) => ({ filename: f.name, truncated: false })), { filename: 'long.txt', truncated: true }])
    await page.reload()
    expect(await page.locator('#documents li', { hasText: 'long.txt' }).textContent()).toContain('(text cut at 200 KB)')
  },
  30_000,
)

// ---- two processes of one PostgreSQL ---------------------------------------------------------------------------

describe('on two platform processes of one database', () => {
  const enabled = HAS_CHROMIUM && TEST_DATABASE_URL !== undefined
  let cluster: Cluster | undefined

  if (enabled) {
    beforeAll(async () => {
      cluster = await startCluster({ processes: 2, env: { SWITCHBOARD_API_RATE_BURST: '100000', SWITCHBOARD_API_RATE_PER_SECOND: '100000' } })
    }, 60_000)
    afterAll(() => cluster?.stop(), 60_000)
  }

  const name = 'two people share a conversation, A on process 0 and B on process 1'
  if (!enabled) {
    test.skip(`${name} (${HAS_CHROMIUM ? CLUSTER_NEEDS_POSTGRES : 'Chromium is not installed'})`, () => {})
    return
  }
  test(
    name,
    async () => {
      const c = cluster!
      const made = await c.call(c.url, 'POST', '/api/v1/AgentConfigRecord', { json: { name: `helper-${crypto.randomUUID().slice(0, 6)}`, runner: 'echo', model: 'echo-1' } })
      expect(made.status).toBe(201)
      const [memberA, memberB] = await Promise.all([c.addMember(), c.addMember()])
      const members = new Map([memberA, memberB].map((m) => [m.userId, m]))
      const person = async (m: typeof memberA): Promise<Person> => ({ userId: m.userId, username: m.username, cookie: await c.sessionCookie(m) })
      const [baseA, baseB] = c.processes.map((process) => process.admin.replace(/\/$/, ''))
      expect(baseA).not.toBe(baseB)
      try {
        await twoPeopleShare({
          a: await person(memberA),
          b: await person(memberB),
          agent: { id: made.body.id, name: made.body.name },
          baseA: baseA!,
          baseB: baseB!,
          api: (who, method, path, json) => c.call(c.url, method, path, { as: members.get(who.userId)!, json }),
        })
      } catch (error) {
        console.error(`the two-process chat test failed; what the processes said last:\n${c.output().split('\n').slice(-80).join('\n')}`)
        throw error
      }
    },
    45_000,
  )
})

// ---- every page of every test ----------------------------------------------------------------------------------

test.skipIf(!HAS_CHROMIUM)('no page broke its Content-Security-Policy, loaded anything from another origin or opened a dialog', async () => {
  await Promise.all(contexts.map((context) => context.close()))
  expect(watched.violations).toEqual([])
  expect(watched.foreign).toEqual([])
  expect(watched.dialogs).toEqual([])
})
