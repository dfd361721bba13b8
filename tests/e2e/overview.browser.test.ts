import { afterAll, beforeAll, expect, test } from 'bun:test'
import type { Browser } from 'playwright-core'
import { queuedReply } from '../helpers/outbox.ts'
import { addSessionCookie, HAS_CHROMIUM, launchChromium, warnWithoutChromium, watchContext, type Watched } from '../helpers/browser.ts'
import { echoAgent, signIn, startChatPlatform, type ChatPlatform } from '../helpers/web-chat.ts'

// The overview answers "is everything all right?": a reply a channel could not deliver shows there, with the agent
// it concerns one click away.

warnWithoutChromium()

let browser: Browser
let p: ChatPlatform
const PASSWORD = 'overview-admin-password'
const watched: Watched = { violations: [], foreign: [], dialogs: [] }

beforeAll(async () => {
  if (!HAS_CHROMIUM) return
  ;[browser, p] = await Promise.all([launchChromium(), startChatPlatform({ SWITCHBOARD_ADMIN_PASSWORD: PASSWORD })])
}, 30_000)

afterAll(async () => {
  await browser?.close()
  await p?.close()
})

test.skipIf(!HAS_CHROMIUM)('a channel reply that failed shows on the overview, in words, linking to its agent', async () => {
  const agent = await echoAgent(p)
  const context = await browser.newContext()
  await watchContext(context, [p.adminUrl], watched)
  await addSessionCookie(context, p.adminUrl, await signIn(p.adminUrl, 'admin', PASSWORD))
  const page = await context.newPage()
  await page.goto(`${p.adminUrl}/`)
  expect(await page.locator('#health-title').textContent()).toBe('Everything is all right')

  await queuedReply(p.store.db, agent.id, 'failed', 'Forbidden: bot was blocked by the user')
  await page.reload()
  expect(await page.locator('#health-title').textContent()).toBe('1 thing needs a look')
  const failed = page.locator('.figure.alarm', { hasText: 'channel deliveries failed' })
  expect(await failed.locator('.figure-value').textContent()).toBe('1')
  const line = page.locator('.failures li')
  expect(await line.textContent()).toContain(`${agent.name} on telegram, a reply was not delivered: Forbidden: bot was blocked by the user`)
  // Its time is said in the reader's locale, not as the server's UTC.
  expect(await line.locator('time').textContent()).not.toContain('UTC')
  await Promise.all([page.waitForURL(`${p.adminUrl}/agents/${agent.id}`), line.locator('a').click()])
  expect(watched.violations).toEqual([])
  await context.close()
})
