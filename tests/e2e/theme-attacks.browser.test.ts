import { afterAll, beforeAll, expect, test } from 'bun:test'
import { join } from 'node:path'
import type { Browser } from 'playwright-core'
import { addSessionCookie, HAS_CHROMIUM, launchChromium, warnWithoutChromium, watchContext, type Watched } from '../helpers/browser.ts'
import { startChatPlatform, type ChatPlatform } from '../helpers/web-chat.ts'

// A theme whose stylesheet and logo try to reach another site and run script, switched on and shown in Chromium:
// the console's Content-Security-Policy refuses every load, and nothing runs. (Themes are installed by the
// operator, but a theme copied from somewhere is exactly what this guards against.)

warnWithoutChromium()

const HOSTILE_THEME = join(import.meta.dir, '..', 'fixtures', 'plugins', 'hostile-theme')

let browser: Browser
let p: ChatPlatform

beforeAll(async () => {
  if (!HAS_CHROMIUM) return
  ;[browser, p] = await Promise.all([launchChromium(), startChatPlatform({ SWITCHBOARD_PLUGIN_PATHS: HOSTILE_THEME })])
  expect((await p.call('POST', '/api/plugins/theme-hostile/enable')).status).toBe(200)
}, 30_000)

afterAll(async () => {
  await browser?.close()
  await p?.close()
})

test.skipIf(!HAS_CHROMIUM)('a theme’s stylesheet and logo reach no other site and run nothing, on the console and on their own', async () => {
  const person = await p.person()
  const watched: Watched = { violations: [], foreign: [], dialogs: [] }
  const context = await browser.newContext()
  await watchContext(context, [p.adminUrl], watched)
  await addSessionCookie(context, p.adminUrl, person.cookie)
  // Chromium reports a request the policy blocks as made; a response is what would show it left.
  const reached: string[] = []
  context.on('response', (response) => {
    if (!response.url().startsWith(p.adminUrl)) reached.push(response.url())
  })
  try {
    const page = await context.newPage()
    for (const path of ['/me', '/chat', '/login']) {
      const response = await page.goto(`${p.adminUrl}${path}`)
      expect(response?.status(), path).toBe(200)
      // The theme is on: its logo is on the page.
      expect(await page.locator('img.logo').count(), path).toBe(1)
      await page.evaluate(() => document.fonts.ready)
    }
    // The logo opened on its own: an SVG document under its own policy, where its script cannot run either.
    await page.goto(`${p.adminUrl}/static/theme/logo`)
    await page.waitForTimeout(200)

    expect(watched.dialogs).toEqual([])
    expect(reached).toEqual([])
    // Every load of another site was tried and refused by the policy, so the silence above is the policy's doing.
    const blocked = new Set(watched.violations.map((v) => v.blocked))
    expect(watched.foreign.filter((url) => !blocked.has(url) && !(url.startsWith('javascript:') && blocked.has('javascript')))).toEqual([])
    const refused = new Set(watched.violations.filter((v) => v.blocked.startsWith('https://evil.example/')).map((v) => v.directive))
    expect([...refused].sort()).toEqual(['font-src', 'img-src', 'style-src-elem'])
    // The logo's script, opened on its own, was refused too.
    expect(watched.violations.filter((v) => v.directive.startsWith('script-src')).map((v) => v.page)).toEqual([`${p.adminUrl}/static/theme/logo`, `${p.adminUrl}/static/theme/logo`])
  } finally {
    await context.close()
  }
})
