import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import type { Browser, BrowserContext, Page } from 'playwright-core'
import { checkAccessibility, checkPageStructure, contrastRatio, focusStyle, screenshot, type FocusStyle } from '../helpers/accessibility.ts'
import { HAS_CHROMIUM, launchChromium, socketOpen, untilEqual, warnWithoutChromium, watchContext, type Watched } from '../helpers/browser.ts'
import { ADMIN_PASSWORD, type Principal } from '../helpers/platform.ts'
import { echoAgent, startChatPlatform, type ChatPlatform } from '../helpers/web-chat.ts'

// Every console page, as each kind of person sees it, checked with axe (WCAG 2.1 A/AA and best practices) and
// screenshotted for a person to look at; and the keyboard: Tab reaches the controls and shows where it is.

warnWithoutChromium()

type Who = 'anonymous' | 'superadmin' | 'member'
const SIGNED_IN: Who[] = ['superadmin', 'member']

interface ConsolePage {
  /** Names the test and the screenshot. */
  name: string
  /**
   * The address. `{conversation}`: a conversation of the visitor's own, with a document, a message and its answer;
   * `{member}`: the id of a member of the root company; `{agent}`, `{server}`, `{company}`: an agent, an MCP server
   * and the root company.
   */
  path: string
  who: Who[]
  /** The answer the page comes with; any status below 400 by default. */
  status?: number
  /** Brings the page into the state to check (a form with errors, an open editor…) after it loaded. */
  prepare?: (page: Page) => Promise<void>
}

/** The console's pages. A new page is one more line here. */
const PAGES: ConsolePage[] = [
  { name: 'login', path: '/login', who: ['anonymous'] },
  { name: 'login-failed', path: '/login?error=invalid', who: ['anonymous'] },
  { name: 'reset-password', path: '/reset-password?token=x', who: ['anonymous'] },
  { name: 'reset-password-unusable', path: '/reset-password?token=x&error=unknown', who: ['anonymous'] },
  { name: 'overview', path: '/', who: SIGNED_IN },
  { name: 'users', path: '/users', who: SIGNED_IN },
  { name: 'user-new-invalid', path: '/users/new', who: ['superadmin'], prepare: submitInvalidUser },
  { name: 'user', path: '/users/{member}', who: ['superadmin'] },
  { name: 'companies', path: '/companies', who: SIGNED_IN },
  { name: 'chat', path: '/chat', who: SIGNED_IN },
  { name: 'conversation', path: '/chat/{conversation}', who: SIGNED_IN, prepare: socketOpen },
  { name: 'agents', path: '/agents', who: SIGNED_IN },
  { name: 'agent-new-invalid', path: '/agents/new', who: ['superadmin'], prepare: submitInvalidAgent },
  { name: 'agent', path: '/agents/{agent}', who: SIGNED_IN },
  { name: 'mcp-servers', path: '/mcp-servers', who: SIGNED_IN },
  { name: 'mcp-server', path: '/mcp-servers/{server}', who: ['superadmin'], prepare: testConnection },
  { name: 'mcp-programs', path: '/mcp-commands', who: ['superadmin'] },
  { name: 'mcp-program-new', path: '/mcp-commands/new', who: ['superadmin'] },
  { name: 'permissions', path: '/permissions', who: SIGNED_IN },
  { name: 'approvals', path: '/approvals?status=', who: SIGNED_IN },
  { name: 'runners', path: '/runners', who: ['superadmin'] },
  { name: 'runner', path: '/runners/echo', who: ['superadmin'] },
  { name: 'plugins', path: '/plugins', who: SIGNED_IN },
  { name: 'plugin-settings', path: '/plugins/rlm', who: ['superadmin'] },
  { name: 'vault', path: '/vault', who: SIGNED_IN },
  { name: 'company', path: '/companies/{company}', who: ['superadmin'] },
  { name: 'model-permissions', path: '/model-acls', who: ['superadmin'] },
  { name: 'system-settings', path: '/system-config', who: ['superadmin'] },
  { name: 'system-settings-refused', path: '/system-config', who: ['member'], status: 403 },
  { name: 'me', path: '/me', who: SIGNED_IN },
  { name: 'my-artifacts', path: '/me/artifacts', who: SIGNED_IN },
  { name: 'not-found', path: '/no-such-page', who: SIGNED_IN, status: 404 },
]

/** The agent form answered with a field error of its own (a timeout that is not a number) and the API's. */
async function submitInvalidAgent(page: Page): Promise<void> {
  await page.fill('#record-name', 'helper-two')
  await page.fill('#record-timeout_seconds', '0')
  await page.click('#record-form button[type=submit]')
  await page.locator('#record-timeout_seconds[aria-invalid=true]').waitFor()
}

/** The server's connection panel with the test's answer in it. */
async function testConnection(page: Page): Promise<void> {
  await page.click('#connection button[type=submit]')
  await page.locator('#connection [role=status]').waitFor()
}

/** The form answered with the API's field errors: the messages by their fields, the fields marked invalid. */
async function submitInvalidUser(page: Page): Promise<void> {
  await page.getByLabel('Username').first().fill('x')
  await page.getByLabel('Email').first().fill('x@example.com')
  await page.locator('main form button[type=submit]').last().click()
  await page.locator('main [aria-invalid=true]').first().waitFor()
}

let browser: Browser
let p: ChatPlatform
/** A browser context per kind of person, signed in (or not) once. */
const visitors = new Map<Who, { context: BrowserContext; conversation?: string }>()
let memberId = ''
let agentId = ''
let serverId = ''
/** What any page did that none should: CSP violations (axe's injection included), foreign requests, dialogs. */
const watched: Watched = { violations: [], foreign: [], dialogs: [] }

/** Signs in through the sign-in page, as a person does. */
async function signIn(context: BrowserContext, username: string, password: string): Promise<void> {
  const page = await context.newPage()
  await page.goto(`${p.adminUrl}/login`)
  await page.fill('#username', username)
  await page.fill('#password', password)
  await Promise.all([page.waitForURL((url) => url.pathname === "/" || url.pathname === "/chat") /* home: the overview for admins, the chat for members */, page.click('button[type=submit]')])
  await page.close()
}

/**
 * A conversation of the signed-in person, made on the chat page, with a document, a message and the agent's
 * answer; shared with `colleague` when one is named (so the people panel has buttons to check).
 */
async function conversationWithAnswer(context: BrowserContext, agentId: string, colleague?: string): Promise<string> {
  const page = await context.newPage()
  await page.goto(`${p.adminUrl}/chat`)
  await page.selectOption('#new-agent', agentId)
  await Promise.all([page.waitForURL(/\/chat\/[0-9a-f-]{36}$/), page.click('.new-chat button[type=submit]')])
  await socketOpen(page)
  await page.setInputFiles('#upload', { name: 'notes.txt', mimeType: 'text/plain', buffer: Buffer.from('Some notes.\n') })
  await page.locator('#pending-attachments li.chip', { hasText: 'notes.txt' }).waitFor()
  await page.fill('#composer-text', 'Hello, **agent**')
  await page.press('#composer-text', 'Enter')
  await page.locator('#messages li.msg-agent[data-status=complete]').waitFor()
  if (colleague) {
    await page.fill('#person', colleague)
    await page.click('.add-person button[type=submit]')
    await page.locator('#participants-title .tag', { hasText: 'shared' }).waitFor()
  }
  const id = (await page.getAttribute('.chat', 'data-conversation'))!
  await page.close()
  return id
}

/** A pinned conversation whose answer the person has not read: its unread badge shows in the list. */
async function unreadConversation(context: BrowserContext, as: Principal, agentId: string): Promise<void> {
  const created = await p.call('POST', '/api/v1/WebchatConversation', { json: { agent_id: agentId }, as })
  expect(created.status).toBe(201)
  const id: string = created.body.id
  const cookie = (await context.cookies()).map((c) => `${c.name}=${c.value}`).join('; ')
  const socket = p.socket(cookie, { conversationId: id })
  await socket.opened
  socket.send({ type: 'message', conversation_id: id, text: 'Anyone there?' })
  await socket.next((f) => f.type === 'message', 'the agent’s answer')
  socket.close()
  const page = await context.newPage()
  await page.goto(`${p.adminUrl}/chat`)
  const pin = page.locator(`#conversation-list li.conversation[data-id="${id}"] button.pin`)
  await pin.click()
  await untilEqual(() => pin.getAttribute('aria-pressed'), 'true', 'the pin to show pressed')
  await page.locator(`#conversation-list li.conversation[data-id="${id}"] .badge`).waitFor()
  await page.close()
}

beforeAll(async () => {
  if (!HAS_CHROMIUM) return
  ;[browser, p] = await Promise.all([launchChromium(), startChatPlatform()])
  const agent = await echoAgent(p, 'helper')
  // Its picker card has starter prompts and its page a channel set up, so both are checked too.
  expect((await p.call('PATCH', `/api/v1/AgentConfigRecord/${agent.id}`, { json: { description: 'Helps.', starter_prompts: ['What can you do?'], channels: { email: {} } } })).status).toBe(200)
  const memberPassword = 'accessible-member-password'
  const member = await p.createUser({ password: memberPassword })
  for (const who of ['anonymous', 'superadmin', 'member'] as const) {
    const context = await browser.newContext({ viewport: { width: 1280, height: 800 } })
    await watchContext(context, [p.adminUrl], watched)
    visitors.set(who, { context })
  }
  await signIn(visitors.get('superadmin')!.context, p.root.username, ADMIN_PASSWORD)
  await signIn(visitors.get('member')!.context, member.username, memberPassword)
  memberId = member.userId
  agentId = agent.id
  // The superadmin's artifacts page lists one, pinned, so its table and buttons are checked too; the member's is empty.
  const artifact = await p.call('POST', '/api/artifacts', { json: { title: 'Figures', kind: 'csv', content: 'a,b\n1,2' } })
  await p.call('POST', `/api/artifacts/${artifact.body.id}/pin`)
  // Switched off, so testing it answers at once without starting anything.
  const program = await p.call('POST', '/api/v1/McpCommand', { json: { name: 'idle', command: 'true' } })
  serverId = (await p.call('POST', '/api/v1/McpServer', { json: { name: 'idle', transport: 'stdio', command_id: program.body.id, enabled: false } })).body.id
  for (const who of SIGNED_IN) {
    const visitor = visitors.get(who)!
    visitor.conversation = await conversationWithAnswer(visitor.context, agent.id, who === 'superadmin' ? member.username : undefined)
    await unreadConversation(visitor.context, who === 'superadmin' ? p.root : member, agent.id)
  }
}, 60_000)

afterAll(async () => {
  await browser?.close()
  await p?.close()
})

describe.each(PAGES.flatMap((page) => page.who.map((who) => [`${page.name} as ${who}`, page, who] as const)))('%s', (label, console_, who) => {
  test.skipIf(!HAS_CHROMIUM)(
    'passes axe with no serious or critical violation, has one h1, a lang and a main landmark',
    async () => {
      const visitor = visitors.get(who)!
      const page = await visitor.context.newPage()
      try {
        const path = console_.path.replace('{conversation}', visitor.conversation ?? '').replace('{member}', memberId).replace('{agent}', agentId).replace('{server}', serverId).replace('{company}', p.root.companyId!)
        const response = await page.goto(`${p.adminUrl}${path}`)
        const status = response?.status() ?? 0
        if (console_.status !== undefined) expect(status).toBe(console_.status)
        else expect(status).toBeLessThan(400)
        // A signed-in visitor really sees the page, not the sign-in form it would be sent to without a session.
        if (who !== 'anonymous') expect(new URL(page.url()).pathname).not.toBe('/login')
        await console_.prepare?.(page)
        await checkPageStructure(page, label)
        await checkAccessibility(page, label)
        await screenshot(page, label.replace(' as ', '.'))
      } finally {
        await page.close()
      }
    },
    30_000,
  )
})

// The shipped dark theme is held to the same checks (contrast above all), on the pages with the most colours.
describe.skipIf(!HAS_CHROMIUM)('with the dark theme on', () => {
  beforeAll(async () => {
    expect((await p.call('POST', '/api/plugins/theme-dark/enable')).status).toBe(200)
  })
  afterAll(async () => {
    await p.call('POST', '/api/plugins/theme-dark/disable')
  })
  for (const path of ['/', '/agents/new', '/agents/{agent}', '/companies', '/permissions', '/chat', '/chat/{conversation}', '/me']) {
    test(`${path} passes axe`, async () => {
      const visitor = visitors.get('superadmin')!
      const page = await visitor.context.newPage()
      try {
        await page.goto(`${p.adminUrl}${path.replace('{conversation}', visitor.conversation ?? '').replace('{agent}', agentId)}`)
        // The agent page's channel status loads after the page: checked once it is in.
        if (path === '/agents/{agent}') await page.locator('#record-channels-email-live dl').waitFor()
        expect(await page.evaluate(() => getComputedStyle(document.documentElement).colorScheme)).toBe('dark')
        await checkAccessibility(page, `${path} (dark)`)
        await screenshot(page, `dark${path.replaceAll('/', '.').replace('{conversation}', 'conversation').replace('{agent}', 'agent')}`)
      } finally {
        await page.close()
      }
    }, 30_000)
  }
})

// The checks above pass only if axe really ran: a page with faults it must name fails, naming rule and place.
test.skipIf(!HAS_CHROMIUM)('the check fails on a page with faults, naming the rule, its impact and where', async () => {
  const page = await visitors.get('anonymous')!.context.newPage()
  try {
    await page.goto(`${p.adminUrl}/login`)
    await page.evaluate(() => {
      const faint = document.createElement('p')
      faint.id = 'faint'
      faint.textContent = 'Text too pale to read'
      faint.style.color = '#d0d0d0'
      const unlabelled = document.createElement('input')
      unlabelled.id = 'unlabelled'
      document.querySelector('main')!.append(faint, unlabelled)
      document.querySelector('h1')!.after(document.createElement('h1'))
    })
    const failure = await checkAccessibility(page, 'login with faults').then(
      () => new Error('no violation reported'),
      (error: Error) => error,
    )
    expect(failure.message).toContain('login with faults')
    expect(failure.message).toMatch(/color-contrast \[serious\] .*\n\s+at #faint/)
    expect(failure.message).toMatch(/label \[critical\] .*\n\s+at #unlabelled/)
    await expect(checkPageStructure(page, 'login with faults')).rejects.toThrow('has 2 <h1> elements')
  } finally {
    await page.close()
  }
})

// ---- the keyboard ------------------------------------------------------------------------------------------------

/** What has the focus: its id, or its tag and text. */
const focused = (page: Page) => page.evaluate(() => {
  const el = document.activeElement
  if (!el || el === document.body) return ''
  return el.id ? `#${el.id}` : `${el.tagName.toLowerCase()}:${el.textContent?.trim() ?? ''}`
})

/** Presses Tab until `selector`'s element has the focus, at most `limit` times; what was focused on the way. */
async function tabTo(page: Page, selector: string, limit = 25): Promise<string[]> {
  const path: string[] = []
  for (let i = 0; i < limit; i++) {
    await page.keyboard.press('Tab')
    path.push(await focused(page))
    if (await page.locator(selector).first().evaluate((el) => el === document.activeElement)) return path
  }
  throw new Error(`${limit} presses of Tab never reached ${selector}; the focus went ${path.join(' → ')}`)
}

/** A focus ring a person sees: the focused style differs from the resting one by a clear outline or shadow. */
function expectVisibleFocus(what: string, resting: FocusStyle, focus: FocusStyle): void {
  const outline = focus.outlineStyle !== 'none' && Number.parseFloat(focus.outlineWidth) >= 2
  const shadow = focus.boxShadow !== 'none' && focus.boxShadow !== resting.boxShadow
  const changed = JSON.stringify({ ...resting, background: '' }) !== JSON.stringify({ ...focus, background: '' })
  if (!changed || !(outline || shadow)) throw new Error(`${what}: no visible focus indicator (resting ${JSON.stringify(resting)}, focused ${JSON.stringify(focus)})`)
  // WCAG 1.4.11: the ring stands out from what is behind it at 3:1 at least.
  if (outline) expect(contrastRatio(focus.outlineColor, focus.background)).toBeGreaterThanOrEqual(3)
}

test.skipIf(!HAS_CHROMIUM)(
  'Tab from the top of /users reaches the search box, then its button, each with a visible focus ring',
  async () => {
    const page = await visitors.get('superadmin')!.context.newPage()
    try {
      await page.goto(`${p.adminUrl}/users`)
      expect(await focused(page)).toBe('')
      const restingSearch = await focusStyle(page, '#q')
      const restingButton = await focusStyle(page, 'main button')

      const restingFirst = await focusStyle(page, 'body a')

      // The first stop is at the top: a "skip to content" link or the first link of the header, ringed.
      await page.keyboard.press('Tab')
      const first = await page.evaluate(() => {
        const el = document.activeElement as HTMLElement
        return { tag: el.tagName, atTop: el.classList.contains('skip-link') || el.closest('header') !== null, isFirstLink: el === document.querySelector('body a') }
      })
      expect(first).toEqual({ tag: 'A', atTop: true, isFirstLink: true })
      expectVisibleFocus('the first link', restingFirst, await focusStyle(page, 'body a'))
      // A skip link, where the layout has one, takes the keyboard straight to the content.
      if (await page.locator('.skip-link').count()) {
        await page.keyboard.press('Enter')
        expect(await page.evaluate(() => document.activeElement?.closest('main') !== null)).toBe(true)
      }

      await tabTo(page, '#q')
      expect(await page.locator('#q').evaluate((el) => el.matches(':focus-visible'))).toBe(true)
      expectVisibleFocus('the search box', restingSearch, await focusStyle(page, '#q'))

      // The next stop is the first button of the page's content: the search form's own.
      await page.keyboard.press('Tab')
      expect(await page.locator('main button').first().evaluate((el) => el === document.activeElement)).toBe(true)
      expect(await focused(page)).toBe('button:Search')
      expectVisibleFocus('the Search button', restingButton, await focusStyle(page, 'main button'))
      await screenshot(page, 'users.keyboard-focus')

      // And the keyboard works it: typing filters the list, Enter on the button searches too.
      await page.keyboard.press('Shift+Tab')
      await page.keyboard.type('zzz-nobody')
      await untilEqual(() => page.locator('#rows tbody tr').count(), 0, 'the list to narrow to nobody as one types')
    } finally {
      await page.close()
    }
  },
  30_000,
)

test.skipIf(!HAS_CHROMIUM)(
  'the chat by keyboard alone: a starter prompt starts a conversation, the composer sends, Ctrl+K finds it again',
  async () => {
    const page = await visitors.get('member')!.context.newPage()
    try {
      await page.goto(`${p.adminUrl}/chat`)
      const starter = page.locator('.agent-card', { hasText: 'helper' }).getByRole('button', { name: 'What can you do?' })
      await tabTo(page, '.agent-card button.starter', 40)
      expect(await starter.evaluate((el) => el === document.activeElement)).toBe(true)
      expect(await starter.evaluate((el) => el.matches(':focus-visible'))).toBe(true)
      await Promise.all([page.waitForURL(/\/chat\/[0-9a-f-]{36}$/), page.keyboard.press('Enter')])
      await page.locator('#messages li.msg-agent[data-status=complete]', { hasText: 'What can you do?' }).waitFor()

      await tabTo(page, '#composer-text', 60)
      await page.keyboard.type('First line')
      await page.keyboard.press('Shift+Enter')
      await page.keyboard.type('second line')
      await page.keyboard.press('Enter')
      await page.locator('#messages li.msg-user', { hasText: 'second line' }).waitFor()
      expect(await page.locator('#messages li.msg-user').last().textContent()).toContain('First line\nsecond line')
      await untilEqual(() => page.locator('#messages li.msg-agent[data-status=complete]').count(), 2, 'the second answer')

      await page.keyboard.press('Control+k')
      expect(await focused(page)).toBe('#chat-search')
      await page.keyboard.type('second line')
      const found = page.locator('#conversation-list li.conversation a').first()
      await untilEqual(() => page.locator('#conversation-list li.conversation').count(), 1, 'the search to find the conversation')
      await tabTo(page, '#conversation-list li.conversation a', 10)
      expect(await found.evaluate((el) => el === document.activeElement)).toBe(true)
    } finally {
      await page.close()
    }
  },
  60_000,
)

test.skipIf(!HAS_CHROMIUM)(
  'the agent page by keyboard alone: to the Channels part, a channel unfolded, filled in and saved',
  async () => {
    const walker = await echoAgent(p, 'keyboard-walker')
    const page = await visitors.get('superadmin')!.context.newPage()
    try {
      await page.goto(`${p.adminUrl}/agents/${walker.id}`)
      const parts = page.getByRole('navigation', { name: 'Parts of the form' })
      await tabTo(page, '.form-parts a[href="#part-channels"]', 40)
      await page.keyboard.press('Enter')
      // Following a fragment link is a navigation the page finishes after the key's event returns.
      await page.waitForURL((url) => url.hash === '#part-channels', { timeout: 5000 })
      expect(await parts.count()).toBe(1)
      // From the part reached, Tab goes on inside it: the web chat's box, then the folded Telegram channel.
      await page.keyboard.press('Tab')
      expect(await focused(page)).toBe('#record-channels-webchat-enabled')
      await tabTo(page, '#record-channels-telegram-field summary', 5)
      await page.keyboard.press('Enter')
      await page.keyboard.press('Tab')
      expect(await focused(page)).toBe('#record-channels-telegram-enabled')
      await page.keyboard.press('Space')
      await page.keyboard.press('Tab')
      expect(await focused(page)).toBe('#record-channels-telegram-bot_token_secret')
      await page.keyboard.type('telegram/walker-bot')
      await tabTo(page, '#record-form .form-footer button[type=submit]', 80)
      await page.keyboard.press('Enter')
      await page.locator('#record-form .notice', { hasText: 'Saved agent keyboard-walker.' }).waitFor()
      const saved = (await p.call('GET', `/api/v1/AgentConfigRecord/${walker.id}`)).body
      expect(saved.channels?.telegram).toEqual({ enabled: true, bot_token_secret: 'telegram/walker-bot', unknown_senders: 'invite' })
      await screenshot(page, 'agent.keyboard-saved')
    } finally {
      await page.close()
    }
  },
  60_000,
)

test.skipIf(!HAS_CHROMIUM)('no page broke its Content-Security-Policy, loaded anything from another origin or opened a dialog', async () => {
  expect(watched.violations).toEqual([])
  expect(watched.foreign).toEqual([])
  expect(watched.dialogs).toEqual([])
})
