import { afterAll, beforeAll, expect, test } from 'bun:test'
import { tmpdir } from 'node:os'
import type { Browser, Page } from 'playwright-core'
import { addSessionCookie, HAS_CHROMIUM, launchChromium, socketOpen, untilEqual, warnWithoutChromium, watchContext, type Watched } from '../helpers/browser.ts'
import { signIn } from '../helpers/web-chat.ts'
import { echoAgent, startChatPlatform, type ChatPlatform } from '../helpers/web-chat.ts'

// A phone (390 × 844, as an iPhone 14 shows pages) and a laptop: the menu, the chat's drawer, and no page wider than
// the screen. A member lands in the chat; the menu offers each role only what it can use.

warnWithoutChromium()

let browser: Browser
let p: ChatPlatform
const watched: Watched = { violations: [], foreign: [], dialogs: [] }
const PHONE = { width: 390, height: 844 }
const ADMIN_PASSWORD = 'mobile-admin-password'
/** Where the screenshots to look at go: SCREENSHOT_DIR, or the system's temporary directory. */
const SCREENSHOTS = process.env.SCREENSHOT_DIR ?? tmpdir()

beforeAll(async () => {
  if (!HAS_CHROMIUM) return
  ;[browser, p] = await Promise.all([launchChromium(), startChatPlatform({ SWITCHBOARD_ADMIN_PASSWORD: ADMIN_PASSWORD })])
}, 30_000)

afterAll(async () => {
  await browser?.close()
  await p?.close()
})

async function pageAs(cookie: string, viewport = PHONE): Promise<Page> {
  const context = await browser.newContext({ viewport, hasTouch: viewport.width < 500, isMobile: viewport.width < 500 })
  await watchContext(context, [p.adminUrl], watched)
  await addSessionCookie(context, p.adminUrl, cookie)
  return context.newPage()
}

/** How far the page reaches past the screen's right edge, in CSS pixels (0: nothing overflows). */
const overflow = (page: Page) => page.evaluate(() => document.documentElement.scrollWidth - document.documentElement.clientWidth)

test.skipIf(!HAS_CHROMIUM)('on a phone a member lands in the chat, opens the list as a drawer, and chats with Send on screen', async () => {
  const [member, agent] = await Promise.all([p.person(), echoAgent(p)])
  const page = await pageAs(member.cookie)
  await page.goto(`${p.adminUrl}/`)
  expect(new URL(page.url()).pathname).toBe('/chat')
  expect(await overflow(page)).toBe(0)
  // With no conversation open the list shows; the menu is behind its button.
  expect(await page.isVisible('#chat-side')).toBe(true)
  expect(await page.isVisible('#site-nav')).toBe(false)
  await page.click('#menu-toggle')
  expect(await page.isVisible('#site-nav')).toBe(true)
  expect(await page.getAttribute('#menu-toggle', 'aria-expanded')).toBe('true')
  await page.click('#menu-toggle')

  await page.selectOption('#new-agent', agent.id)
  await Promise.all([page.waitForURL(/\/chat\/[0-9a-f-]{36}$/), page.click('.new-chat button[type=submit]')])
  await socketOpen(page)
  // In a conversation the list is a closed drawer, opened and closed by its button.
  expect(await page.isVisible('#chat-side')).toBe(false)
  await page.click('#list-toggle')
  expect(await page.isVisible('#chat-side')).toBe(true)
  await page.click('#list-toggle')
  expect(await page.isVisible('#chat-side')).toBe(false)

  const send = await page.locator('#send').boundingBox()
  expect(send!.x + send!.width).toBeLessThanOrEqual(PHONE.width)
  await page.fill('#composer-text', 'hello from a phone')
  await page.tap('#send')
  await page.locator('#messages li.msg-agent[data-status=complete]', { hasText: 'Echo: hello from a phone' }).waitFor()
  expect(await overflow(page)).toBe(0)
  await page.screenshot({ path: `${SCREENSHOTS}/chat-390.png` })
  expect(watched.violations).toEqual([])
  await page.context().close()
})

test.skipIf(!HAS_CHROMIUM)('the console’s pages fit a phone: nothing reaches past the screen, wide tables scroll within themselves', async () => {
  const admin = await signIn(p.adminUrl, 'admin', ADMIN_PASSWORD)
  const page = await pageAs(admin)
  const wide: Array<{ path: string; overflow: number; widest: string }> = []
  // An agent with a channel set up (its status loads into the form) and starter prompts (its card in the chat's picker).
  const agent = await p.call('POST', '/api/v1/AgentConfigRecord', { json: { name: 'phone-agent', description: 'Answers from a phone.', channels: { email: {} }, starter_prompts: ['A rather long starter prompt that has to wrap on a phone screen'] } })
  expect(agent.status).toBe(201)
  for (const path of ['/', '/agents', '/agents/new', `/agents/${agent.body.id}`, '/users', '/mcp-servers', '/permissions', '/runners', '/plugins', '/vault', '/usage', '/budgets', '/audit', '/companies', '/system-config', '/me', '/chat']) {
    await page.goto(`${p.adminUrl}${path}`)
    const reach = await overflow(page)
    // Named by the element that reaches furthest, so that a failure says what to mend.
    if (reach > 0) wide.push({ path, overflow: reach, widest: await page.evaluate(() => { const all = [...document.querySelectorAll('body *')]; const el = all.reduce((a, b) => (b.getBoundingClientRect().right > a.getBoundingClientRect().right ? b : a)); return `${el.tagName.toLowerCase()}${el.id ? `#${el.id}` : ''}.${[...el.classList].join('.')}` }) })
  }
  expect(wide).toEqual([])
  await page.goto(`${p.adminUrl}/agents`)
  await page.screenshot({ path: `${SCREENSHOTS}/agents-390.png`, fullPage: true })
  await page.goto(`${p.adminUrl}/agents/${agent.body.id}`)
  await page.locator('#record-channels-email-live dl').waitFor()
  expect(await overflow(page)).toBe(0)
  await page.screenshot({ path: `${SCREENSHOTS}/agent-390.png`, fullPage: true, caret: 'initial' })
  await page.goto(`${p.adminUrl}/chat`)
  await page.screenshot({ path: `${SCREENSHOTS}/chat-agents-390.png`, fullPage: true, caret: 'initial' })
  await page.context().close()
})

test.skipIf(!HAS_CHROMIUM)('on a laptop the menu is one row of groups, each opening as a list that Esc and a click elsewhere close', async () => {
  const admin = await signIn(p.adminUrl, 'admin', ADMIN_PASSWORD)
  const page = await pageAs(admin, { width: 1280, height: 800 })
  await page.goto(`${p.adminUrl}/agents`)
  expect(await page.isVisible('#menu-toggle')).toBe(false)
  // One row: every entry of the menu sits on the same line.
  const tops = await page.locator('#site-nav > a, #site-nav > details > summary').evaluateAll((els) => els.map((el) => Math.round(el.getBoundingClientRect().top)))
  expect(new Set(tops).size).toBe(1)
  expect(await page.locator('#site-nav > details > summary').allTextContents()).toEqual(['Agents', 'Tools', 'People', 'Platform'])
  expect(await page.locator('#site-nav summary.here').textContent()).toBe('Agents')

  await page.click('#site-nav summary:text-is("Platform")')
  expect(await page.isVisible('#site-nav a[href="/audit"]')).toBe(true)
  await page.click('#site-nav summary:text-is("Tools")')
  expect(await page.isVisible('#site-nav a[href="/audit"]')).toBe(false)
  await page.keyboard.press('Escape')
  expect(await page.isVisible('#site-nav a[href="/permissions"]')).toBe(false)
  expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Tools')
  await page.click('#site-nav summary:text-is("People")')
  await page.mouse.click(1100, 700)
  expect(await page.isVisible('#site-nav a[href="/users"]')).toBe(false)
  await page.context().close()
})

test.skipIf(!HAS_CHROMIUM)('each role is offered only what it can use', async () => {
  const member = await p.person()
  const page = await pageAs(member.cookie, { width: 1280, height: 800 })
  await page.goto(`${p.adminUrl}/chat`)
  const offered = await page.locator('#site-nav a').evaluateAll((els) => els.map((el) => el.getAttribute('href')))
  expect(offered.filter((href) => href?.startsWith('/'))).toEqual(['/chat', '/agents', '/mcp-servers', '/approvals', '/usage', '/vault'])
  await page.context().close()

  const admin = await signIn(p.adminUrl, 'admin', ADMIN_PASSWORD)
  const theirs = await pageAs(admin, { width: 1280, height: 800 })
  await theirs.goto(`${p.adminUrl}/`)
  expect(new URL(theirs.url()).pathname).toBe('/')
  const all = await theirs.locator('#site-nav a').evaluateAll((els) => els.map((el) => el.getAttribute('href')))
  expect(all).toContain('/system-config')
  expect(all).toContain('/audit')
  await untilEqual(() => theirs.title(), 'Overview · Switchboard', 'the overview')
  await theirs.context().close()
})
