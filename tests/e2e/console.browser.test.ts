import { afterAll, beforeAll, expect, test } from 'bun:test'
import { existsSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { chromium, type Browser, type Page } from 'playwright-core'
import { ADMIN_PASSWORD, startTestPlatform } from '../helpers/platform.ts'

// Debian's Chromium, never a downloaded browser. .ci/run installs it; elsewhere these tests skip, saying so.
const CHROMIUM = '/usr/bin/chromium'
const hasChromium = existsSync(CHROMIUM)
if (!hasChromium) console.warn(`Browser tests skipped: ${CHROMIUM} is not installed (apt-get install -y chromium).`)

const PASSWORD = ADMIN_PASSWORD
let browser: Browser
let page: Page
let console_: string
let apiBase: string
/** What the browser reported as blocked by a Content-Security-Policy, on any page of any test. */
const violations: string[] = []
let stop: () => Promise<void>

/** A server on a free port whose handler is set later, once the configuration can name both real ports. */
function listen() {
  let handler: (request: Request, server: Bun.Server<unknown>) => Response | Promise<Response> = () => new Response(null, { status: 503 })
  const server = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: (request, srv) => handler(request, srv) })
  return { server, serve: (fetch: typeof handler) => (handler = fetch) }
}

beforeAll(async () => {
  if (!hasChromium) return
  const [apiListener, adminListener] = [listen(), listen()]
  const p = await startTestPlatform({ SWITCHBOARD_API_PORT: String(apiListener.server.port), SWITCHBOARD_ADMIN_PORT: String(adminListener.server.port) })
  apiListener.serve(p.api.fetch)
  adminListener.serve(p.admin.fetch)
  const servers = [apiListener.server, adminListener.server]
  console_ = p.services.config.adminBaseUrl
  apiBase = p.services.config.baseUrl
  browser = await chromium.launch({
    executablePath: CHROMIUM,
    args: ['--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run', '--disable-background-networking', '--disable-component-update', '--disable-sync'],
  })
  page = await browser.newPage()
  // The browser's own CSP reports, as each page sees them; eval and inline code count as well as loads.
  await page.exposeFunction('reportCspViolation', (text: string) => violations.push(text))
  await page.addInitScript(() => {
    document.addEventListener('securitypolicyviolation', (e) =>
      (window as unknown as { reportCspViolation(text: string): void }).reportCspViolation(`${e.documentURI}: ${e.effectiveDirective} blocked ${e.blockedURI || 'inline'} (${e.sample})`),
    )
  })
  // Fail within a test's own time, naming the step, rather than at the runner's limit.
  page.setDefaultTimeout(10_000)
  stop = async () => {
    await browser.close()
    for (const server of servers) server.stop(true)
    await p.close()
  }
})
afterAll(() => stop?.())

test.skipIf(!hasChromium)('a deep link survives signing in', async () => {
  await page.goto(`${console_}/users?q=adm`)
  expect(new URL(page.url()).pathname).toBe('/login')
  await page.fill('#username', 'admin')
  await page.fill('#password', 'wrong password')
  await Promise.all([page.waitForURL(/\/login\?error=invalid/), page.click('button[type=submit]')])
  expect(await page.locator('[role=alert]').textContent()).toContain('Unknown username or wrong password.')
  await page.fill('#username', 'admin')
  await page.fill('#password', PASSWORD)
  await Promise.all([page.waitForURL(`${console_}/users?q=adm`), page.click('button[type=submit]')])
  expect(await page.inputValue('#q')).toBe('adm')
  expect(await page.locator('#rows tbody tr').count()).toBe(1)
  expect(await page.locator('#rows tbody').textContent()).toContain('admin@switchboard.local')
}, 30_000)

test.skipIf(!hasChromium)('create a user and see it in the list', async () => {
  await page.goto(`${console_}/users`)
  await Promise.all([page.waitForURL(`${console_}/users/new`), page.click('a:has-text("New user")')])
  await page.fill('#record-username', 'ada')
  await page.fill('#record-display_name', 'Ada Lovelace')
  await page.fill('#record-email', 'ada@example.com')
  await page.fill('#record-password', 'analytical-engine')
  await Promise.all([page.waitForURL(/\/users\/[0-9a-f-]{36}\?created=1$/), page.click('#record-form button[type=submit]')])
  expect(await page.locator('#record-form [role=status]').textContent()).toContain('Created user ada.')
  await page.goto(`${console_}/users`)
  await page.locator('#rows', { hasText: 'Ada Lovelace' }).waitFor()
  // The search box narrows the list as one types, without a page load, and the address follows.
  await page.fill('#q', 'ada')
  await page.locator('#rows tbody tr', { hasText: 'admin@switchboard.local' }).waitFor({ state: 'detached' })
  expect(await page.locator('#rows tbody tr').count()).toBe(1)
  await page.waitForURL(`${console_}/users?q=ada`)
}, 30_000)

test.skipIf(!hasChromium)('a validation error from the API is shown in the page, by the field', async () => {
  await page.goto(`${console_}/users/new`)
  await page.fill('#record-username', 'x')
  await page.fill('#record-email', 'x@example.com')
  await page.click('#record-form button[type=submit]')
  const invalid = page.locator('#record-username[aria-invalid=true]')
  await invalid.waitFor()
  expect(await page.locator('#record-username-error').textContent()).toContain('2 to 64 letters')
  expect(await page.inputValue('#record-email')).toBe('x@example.com')
  await page.screenshot({ path: join(tmpdir(), 'switchboard-console-validation.png'), fullPage: true })
}, 30_000)

test.skipIf(!hasChromium)('the API docs render under their policy', async () => {
  await page.goto(`${apiBase}/api/docs`)
  // Swagger UI draws only the operations in view; the first one shows the document was fetched and laid out.
  await page.locator('.opblock-summary', { hasText: '/auth/login' }).waitFor({ timeout: 20_000 })
  expect(await page.locator('.info .title').textContent()).toContain('Switchboard API')
}, 30_000)

test.skipIf(!hasChromium)('no page broke its Content-Security-Policy', () => {
  expect(violations).toEqual([])
})
