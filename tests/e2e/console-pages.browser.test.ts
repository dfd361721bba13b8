import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import type { Browser, Page } from 'playwright-core'
import { HAS_CHROMIUM, launchChromium, warnWithoutChromium, watchContext, type Watched } from '../helpers/browser.ts'
import { ADMIN_PASSWORD } from '../helpers/platform.ts'
import { startChatPlatform, type ChatPlatform } from '../helpers/web-chat.ts'
import { fieldsOf } from '../helpers/typed-call.ts'

// Every console page over a model, in Chromium: a bad value is shown by its field, a save over someone else's newer
// one is refused and said so, and a member is refused what only admins may do (the page says so; the API said 403).

warnWithoutChromium()

let browser: Browser
let p: ChatPlatform
const watched: Watched = { violations: [], foreign: [], dialogs: [] }
let admin: Page
let member: Page

beforeAll(async () => {
  if (!HAS_CHROMIUM) return
  ;[browser, p] = await Promise.all([launchChromium(), startChatPlatform()])
  admin = await signedIn('admin', ADMIN_PASSWORD)
  const someone = await p.createUser({ role: 'member', password: 'member-password-1' })
  member = await signedIn(someone.username, 'member-password-1')
}, 30_000)

afterAll(async () => {
  await browser?.close()
  await p?.close()
})

async function signedIn(username: string, password: string): Promise<Page> {
  const context = await browser.newContext()
  await watchContext(context, [p.adminUrl], watched)
  const page = await context.newPage()
  await page.goto(`${p.adminUrl}/login`)
  await page.fill('#username', username)
  await page.fill('#password', password)
  await Promise.all([page.waitForURL((url) => url.pathname === "/" || url.pathname === "/chat") /* home: the overview for admins, the chat for members */, page.click('button[type=submit]')])
  return page
}

/** Saves the record form and answers the status the console's answer had (the API's, passed on). */
async function save(page: Page): Promise<number> {
  const [response] = await Promise.all([page.waitForResponse((r) => r.request().method() === 'POST'), page.click('#record-form button[type=submit]')])
  return response.status()
}

interface Case {
  path: string
  model: string
  /** A record to open (made through the API as the superadmin). */
  make: () => Record<string, unknown>
  /** A field and a value the API refuses, by that field. */
  bad: [field: string, value: string]
  /** A harmless change someone else saves in the meantime. */
  theirs: Record<string, unknown>
  /** A field the member tries to change. */
  mine: [field: string, value: string]
  /** Whether a member can open the record at all (else the page itself is the refusal). */
  memberReads: boolean
}

const unique = () => crypto.randomUUID().slice(0, 8)
const CASES: Case[] = [
  { path: '/agents', model: 'AgentConfigRecord', make: () => ({ name: `agent-${unique()}` }), bad: ['timeout_seconds', '0'], theirs: { description: 'theirs' }, mine: ['name', 'mine'], memberReads: true },
  { path: '/users', model: 'User', make: () => ({ username: `u-${unique()}`, email: `${unique()}@example.com` }), bad: ['email', 'not-an-email'], theirs: { display_name: 'Theirs' }, mine: ['display_name', 'Mine'], memberReads: false },
  { path: '/companies', model: 'Company', make: () => ({ name: `Firm ${unique()}`, slug: `firm-${unique()}` }), bad: ['slug', 'Not A Slug!'], theirs: { name: 'Theirs' }, mine: ['name', 'Mine'], memberReads: false },
  { path: '/mcp-commands', model: 'McpCommand', make: () => ({ name: `prog-${unique()}`, command: 'true' }), bad: ['name', 'Bad Name'], theirs: { description: 'theirs' }, mine: ['description', 'mine'], memberReads: false },
  { path: '/system-config', model: 'SystemConfig', make: () => ({ key: `k.${unique().replace(/[^a-z0-9]/g, 'x')}`, value: 1 }), bad: ['key', 'Not A Key'], theirs: { value: 2 }, mine: ['description', 'mine'], memberReads: false },
  { path: '/model-acls', model: 'ModelAcl', make: () => ({ model: 'WebchatMessage', verb: 'delete', min_role: 'owner' }), bad: ['min_role', 'emperor'], theirs: { min_role: 'admin' }, mine: ['min_role', 'member'], memberReads: false },
]

describe.skipIf(!HAS_CHROMIUM)('every record page', () => {
  for (const c of CASES) {
    test(`${c.path}: field error by its field, a stale save refused, a member refused`, async () => {
      const made = await p.call('POST', `/api/v1/${c.model}`, { json: c.make() })
      expect(made.status).toBe(201)
      const id = fieldsOf(made.body).id as string
      const [field, value] = c.bad

      await admin.goto(`${p.adminUrl}${c.path}/${id}`)
      const control = admin.locator(`#record-${field}`)
      if ((await control.evaluate((el) => el.tagName)) === 'SELECT') {
        // A value the page does not offer, as a hand-made request would send it.
        await control.evaluate((el, v) => el.insertAdjacentHTML('beforeend', `<option value="${v}">${v}</option>`), value)
        await control.selectOption(value)
      } else await control.fill(value)
      expect(await save(admin)).toBe(422)
      await admin.locator(`#record-${field}-field .field-error`).waitFor()
      expect(await admin.getAttribute(`#record-${field}`, 'aria-invalid')).toBe('true')

      // Opened again, someone else saves, then this page's save is refused and says why.
      await admin.goto(`${p.adminUrl}${c.path}/${id}`)
      expect((await p.call('PATCH', `/api/v1/${c.model}/${id}`, { json: c.theirs })).status).toBe(200)
      const [mine, mineValue] = c.mine
      const mineControl = admin.locator(`#record-${mine}`)
      if ((await mineControl.evaluate((el) => el.tagName)) === 'SELECT') await mineControl.selectOption(mineValue)
      else await mineControl.fill(mineValue)
      expect(await save(admin)).toBe(412)
      await admin.locator('#record-form .problem', { hasText: 'changed by someone else' }).waitFor()
      expect((await p.call('GET', `/api/v1/${c.model}/${id}`)).body).toMatchObject(c.theirs)

      // A member: either the page is refused whole, or it is shown with nothing to change.
      const [response] = await Promise.all([member.waitForResponse((r) => r.url().startsWith(`${p.adminUrl}${c.path}`)), member.goto(`${p.adminUrl}${c.path}/${id}`)])
      if (c.memberReads) {
        expect(response.status()).toBe(200)
        expect(await member.locator(`#record-${mine}`).isDisabled()).toBe(true)
        expect(await member.locator('#record-form button[type=submit]').count()).toBe(0)
        expect(await member.locator('#delete-form').count()).toBe(0)
        await member.getByText('You may read this').waitFor()
      } else {
        expect([403, 404]).toContain(response.status())
        await member.locator('main [role=alert]').waitFor()
      }
      expect((await p.call('GET', `/api/v1/${c.model}/${id}`)).body).toMatchObject(c.theirs)
    }, 30_000)
  }

  test('plugin settings: a field error by its field and a stale save refused; members cannot switch plugins', async () => {
    await admin.goto(`${p.adminUrl}/plugins/rlm`)
    await admin.locator('#settings-form').waitFor()
    const [first] = await admin.locator('#settings-form [name]:not([type=hidden])').evaluateAll((els) => els.map((el) => (el as HTMLInputElement).name))
    expect(first).toBeString()
    // Someone else saves the same settings in between: this page's version is stale.
    const current = await p.call('GET', '/api/plugins/rlm/settings')
    expect((await p.call('PUT', '/api/plugins/rlm/settings', { json: current.body.values, headers: { 'if-match': current.headers.get('etag')! } })).status).toBe(200)
    const [response] = await Promise.all([admin.waitForResponse((r) => r.request().method() === 'POST'), admin.click('#settings-form button[type=submit]')])
    expect(response.status()).toBe(412)
    await admin.locator('#settings-form .problem', { hasText: 'changed by someone else' }).waitFor()

    await member.goto(`${p.adminUrl}/plugins`)
    const [refused] = await Promise.all([member.waitForResponse((r) => r.request().method() === 'POST'), member.click('#plugin-rlm button')])
    expect(refused.status()).toBe(403)
    await member.locator('#plugin-rlm [role=alert]').waitFor()
  }, 30_000)

  test('no page reported a CSP violation or reached another origin', () => {
    expect(watched.violations).toEqual([])
    expect(watched.foreign).toEqual([])
  })
})
