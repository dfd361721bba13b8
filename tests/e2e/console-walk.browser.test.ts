import { afterAll, beforeAll, expect, test } from 'bun:test'
import type { Browser, Page } from 'playwright-core'
import { HAS_CHROMIUM, launchChromium, untilEqual, warnWithoutChromium, watchContext, type Watched } from '../helpers/browser.ts'
import { EVERYTHING } from '../helpers/mcp.ts'
import { ADMIN_PASSWORD } from '../helpers/platform.ts'
import { startChatPlatform, type ChatPlatform } from '../helpers/web-chat.ts'

// A newcomer's first hour with the console, in Chromium: everything through the pages, as a person clicks.

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

async function freshPage(): Promise<Page> {
  const context = await browser.newContext()
  await watchContext(context, [p.adminUrl], watched)
  // Confirmations (hx-confirm) are accepted: the person means it.
  context.on('page', (page) => page.on('dialog', (dialog) => void dialog.accept().catch(() => {})))
  return context.newPage()
}

async function signIn(page: Page, username: string, password: string): Promise<void> {
  await page.goto(`${p.adminUrl}/login`)
  await page.fill('#username', username)
  await page.fill('#password', password)
  await Promise.all([page.waitForURL((url) => url.pathname === "/" || url.pathname === "/chat") /* home: the overview for admins, the chat for members */, page.click('button[type=submit]')])
}

/** Submits the record form and waits for the record's own page, which says it was made. */
async function create(page: Page, what: string): Promise<string> {
  await Promise.all([page.waitForURL(/\/[0-9a-f-]{36}\?created=1$/), page.click('#record-form button[type=submit]')])
  await page.locator('#record-form .notice', { hasText: `Created ${what}` }).waitFor()
  return /\/([0-9a-f-]{36})\?created=1$/.exec(page.url())![1]!
}

test.skipIf(!HAS_CHROMIUM)('a newcomer sets up an agent with a tool, gives one person that tool, and that person uses it', async () => {
  const admin = await freshPage()
  await signIn(admin, 'admin', ADMIN_PASSWORD)

  // The program into the platform's catalogue (a superadmin's job), then the company's server running it.
  await admin.goto(`${p.adminUrl}/mcp-commands/new`)
  await admin.fill('#record-name', 'everything')
  await admin.fill('#record-command', EVERYTHING)
  await create(admin, 'program everything')

  await admin.goto(`${p.adminUrl}/mcp-servers/new`)
  await admin.fill('#record-name', 'everything')
  await admin.selectOption('#record-transport', 'stdio')
  await admin.selectOption('#record-command_id', { label: 'everything' })
  await create(admin, 'MCP server everything')
  await admin.click('#connection button[type=submit]')
  await admin.locator('#connection .notice', { hasText: 'Connected' }).waitFor({ timeout: 20_000 })
  expect(await admin.locator('#connection ul.tools code', { hasText: /^echo$/ }).count()).toBe(1)

  // The agent, on the echo runner, may use everything's echo tool only.
  await admin.goto(`${p.adminUrl}/agents/new`)
  await admin.fill('#record-name', 'walker')
  await admin.selectOption('#record-runner', 'echo')
  const server = admin.locator('.tool-server', { has: admin.locator('label', { hasText: /^everything$/ }) })
  await server.locator('select').selectOption('only')
  await server.getByRole('group', { name: 'Tools of everything', exact: true }).getByText('echo', { exact: true }).click()
  await create(admin, 'agent walker')
  await untilEqual(async () => (await p.call('GET', '/api/v1/AgentConfigRecord?name=eq.walker')).body.data[0]?.mcp_permissions, { servers: { everything: { allow: ['echo'], deny: [] } } }, 'the agent’s tools to be stored')

  // A colleague, who may use echo by a rule of their own; the preview shows it.
  await admin.goto(`${p.adminUrl}/users/new`)
  await admin.fill('#record-username', 'newcomer')
  await admin.fill('#record-email', 'newcomer@example.com')
  await admin.fill('#record-password', 'newcomer-password')
  await create(admin, 'user newcomer')

  await admin.goto(`${p.adminUrl}/permissions`)
  await admin.selectOption('#rule-user_id', { label: 'newcomer' })
  await admin.selectOption('#rule-server', 'everything')
  await admin.fill('#rule-tool', 'echo')
  await admin.selectOption('#rule-effect', 'allow')
  await admin.click('#rules button:has-text("Add rule")')
  await admin.locator('#rules .notice', { hasText: 'Rule added.' }).waitFor()
  await admin.selectOption('#preview-user_id', { label: 'newcomer' })
  await admin.click('#preview button:has-text("Show")')
  await admin.locator('#preview li.allowed', { hasText: 'echo' }).waitFor({ timeout: 20_000 })
  expect(await admin.locator('#preview li.denied').count()).toBeGreaterThan(0)

  // The colleague signs in, starts a conversation with the agent, and the agent uses the tool for them.
  const newcomer = await freshPage()
  await signIn(newcomer, 'newcomer', 'newcomer-password')
  await newcomer.goto(`${p.adminUrl}/chat`)
  await newcomer.selectOption('#new-agent', { label: 'walker' })
  await Promise.all([newcomer.waitForURL(/\/chat\/[0-9a-f-]{36}$/), newcomer.click('.new-chat button[type=submit]')])
  await newcomer.fill('#composer-text', '/tool everything__echo {"message": "hello from the walk"}')
  await newcomer.press('#composer-text', 'Enter')
  await newcomer.locator('#messages li.msg-agent[data-status=complete]', { hasText: 'hello from the walk' }).waitFor({ timeout: 20_000 })
  expect(await newcomer.locator('#messages li.msg-agent .body').last().textContent()).toContain('The tool answered')

  expect(watched.violations).toEqual([])
  expect(watched.foreign).toEqual([])
}, 120_000)

test.skipIf(!HAS_CHROMIUM)('a plugin switched off answers 404 at once and answers again when switched on; the theme switches without a restart', async () => {
  const admin = await freshPage()
  await signIn(admin, 'admin', ADMIN_PASSWORD)
  const query = () => p.call('POST', '/rlm-query', { json: { prompt: 'hi' } })
  expect((await query()).status).toBe(200)

  await admin.goto(`${p.adminUrl}/plugins`)
  await admin.click('#plugin-rlm button:has-text("Switch off")')
  await admin.locator('#plugin-rlm td', { hasText: /^off$/ }).waitFor()
  expect((await query()).status).toBe(404)
  await admin.click('#plugin-rlm button:has-text("Switch on")')
  await admin.locator('#plugin-rlm td', { hasText: /^on$/ }).waitFor()
  expect((await query()).status).toBe(200)

  const background = () => admin.evaluate(() => getComputedStyle(document.documentElement).backgroundColor)
  const light = await background()
  await Promise.all([admin.waitForEvent('load'), admin.click('#plugin-theme-dark button:has-text("Switch on")')])
  await admin.locator('#plugin-theme-dark td', { hasText: /^on$/ }).waitFor()
  const dark = await background()
  expect(dark).not.toBe(light)
  // Another page, and the chat, wear it too.
  await admin.goto(`${p.adminUrl}/chat`)
  expect(await background()).toBe(dark)
  await admin.goto(`${p.adminUrl}/plugins`)
  await Promise.all([admin.waitForEvent('load'), admin.click('#plugin-theme-dark button:has-text("Switch off")')])
  expect(await background()).toBe(light)
}, 60_000)
