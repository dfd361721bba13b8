import { afterAll, beforeAll, expect, test } from 'bun:test'
import { join } from 'node:path'
import type { Browser, Page } from 'playwright-core'
import { addSessionCookie, HAS_CHROMIUM, launchChromium, socketOpen, warnWithoutChromium, watchContext, type Watched } from '../helpers/browser.ts'
import { chatTurn } from '../helpers/chat.ts'
import { addProgram } from '../helpers/mcp.ts'
import { HAS_BWRAP, type Principal } from '../helpers/platform.ts'
import { signIn, startChatPlatform, type ChatPlatform } from '../helpers/web-chat.ts'
import { fieldsOf } from '../helpers/typed-call.ts'

// Every name, title, description, display name, message and MCP tool description a tenant (or a server) sets is
// shown on the console, the portal and the web chat as text, in the light theme and the dark one: what would be
// markup, an attribute, a closing tag or an htmx attribute stays characters on the page, nothing it carries runs,
// and the pages show the value, so a page that stopped escaping it would fail here.

warnWithoutChromium()

const HOSTILE_SERVER = join(import.meta.dir, '..', 'fixtures', 'mcp', 'hostile-server.ts')

/**
 * One value for every context: it closes a text area, a title and a script, breaks out of a double- and a
 * single-quoted attribute, and brings an element with an inline handler, an htmx trigger and a marker attribute.
 */
const HOSTILE = `</textarea></script>"'><img src=x data-pwn onerror=alert(1) hx-get=/ hx-trigger=load>`

/** Marked-up answers of agents are rendered (and sanitized): their allowed markup may keep the marker, no more. */
const MARKDOWN = '.md'

interface Visit {
  /** The page, as whom. */
  path: string
  as: 'root' | 'person'
  /** Something to do on the page before judging it (a button that loads more of what a server says). */
  then?: (page: Page) => Promise<void>
}

let browser: Browser
let p: ChatPlatform
let person: Principal & { cookie: string }
let rootCookie: string
const ids: Record<string, string> = {}

beforeAll(async () => {
  if (!HAS_CHROMIUM) return
  ;[browser, p] = await Promise.all([launchChromium(), startChatPlatform(HAS_BWRAP ? {} : { SWITCHBOARD_MCP_SANDBOX: 'none' })])
  rootCookie = await signIn(p.adminUrl, 'admin', (await import('../helpers/platform.ts')).ADMIN_PASSWORD)
  person = await p.person()
  const made = async (path: string, json: Record<string, unknown>, as?: Principal) => {
    const reply = await p.call('POST', path, { json, as })
    expect(reply.status, `${path}: ${JSON.stringify(reply.body)}`).toBe(201)
    return fieldsOf(reply.body).id as string
  }
  // The superadmin's records, in the root company.
  ids.agent = await made('/api/v1/AgentConfigRecord', { name: HOSTILE, description: HOSTILE, personality: HOSTILE, runner: 'echo', model: 'echo-1' })
  const command = (ids.command = await addProgram(p, { name: 'hostile', description: HOSTILE, command: process.execPath, args: [HOSTILE_SERVER], variables: ['HOSTILE_TEXT'] }))
  ids.server = await made('/api/v1/McpServer', { name: 'hostile', description: HOSTILE, transport: 'stdio', command_id: command, env: { HOSTILE_TEXT: { value: HOSTILE } } })
  await made('/api/v1/McpPermission', { server: '*', tool: '*', effect: 'allow' })
  ids.company = await made('/api/v1/Company', { name: HOSTILE, slug: `hostile-${crypto.randomUUID().slice(0, 6)}` })
  ids.colleague = (await p.createUser()).userId
  expect((await p.call('PATCH', `/api/v1/User/${ids.colleague}`, { json: { display_name: HOSTILE } })).status).toBe(200)
  expect((await p.call('PATCH', `/api/v1/User/${person.userId}`, { json: { display_name: HOSTILE } })).status).toBe(200)

  // The person's own: a conversation with the agent, named, shared with the colleague, with a plan, a message and
  // an answer; an artifact and an API token.
  const first = await chatTurn(p, { agent_id: ids.agent, text: HOSTILE }, { as: person })
  ids.conversation = first[0]!.conversation_id
  expect((await p.call('PATCH', `/api/v1/WebchatConversation/${ids.conversation}`, { as: person, json: { title: HOSTILE } })).status).toBe(200)
  await made('/api/v1/WebchatParticipant', { conversation_id: ids.conversation, user_id: ids.colleague }, person)
  await made('/api/plans', { conversation_id: ids.conversation, title: HOSTILE, tasks: [{ title: HOSTILE, description: HOSTILE }] }, person)
  await made('/api/artifacts', { title: HOSTILE, kind: 'text', content: HOSTILE }, person)
  await made('/api/v1/ApiToken', { name: HOSTILE }, person)
}, 60_000)

afterAll(async () => {
  await browser?.close()
  await p?.close()
})

const VISITS: Visit[] = [
  { path: '/agents', as: 'root' },
  { path: '/agents/{agent}', as: 'root' },
  { path: '/mcp-commands/{command}', as: 'root' },
  {
    path: '/mcp-servers/{server}',
    as: 'root',
    // The server's own words about its tool come from the connection test.
    async then(page) {
      await page.click('#connection button[type=submit]')
      await page.locator('#connection ul.tools li', { hasText: 'lure' }).waitFor({ timeout: 30_000 })
    },
  },
  { path: '/companies', as: 'root' },
  { path: '/companies/{company}', as: 'root' },
  { path: '/users', as: 'root' },
  { path: '/users/{colleague}', as: 'root' },
  { path: '/chat', as: 'person' },
  { path: '/chat/{conversation}', as: 'person', then: (page) => socketOpen(page) },
  { path: '/me', as: 'person' },
  { path: '/me/artifacts', as: 'person' },
]

/** What on the page came from a value instead of from the platform's own markup; empty when everything was escaped. */
function injected(page: Page): Promise<string[]> {
  return page.evaluate((markdown) => {
    const found: string[] = []
    for (const el of document.querySelectorAll('*')) {
      const inMarkdown = el.closest(markdown) !== null
      for (const attribute of el.attributes) {
        if (attribute.name.startsWith('on')) found.push(`${el.tagName} ${attribute.name}`)
        if (attribute.name === 'data-pwn' && !inMarkdown) found.push(`${el.tagName} data-pwn`)
        if (inMarkdown && /^(data-)?hx-/.test(attribute.name)) found.push(`${el.tagName} ${attribute.name} in an answer`)
        if (/^\s*javascript:/i.test(attribute.value)) found.push(`${el.tagName} ${attribute.name}=${attribute.value}`)
      }
    }
    return found
  }, MARKDOWN)
}

/** How often the value shows on the page as itself: in the text, or as the value of a field or an option. */
function shown(page: Page): Promise<number> {
  return page.evaluate((value) => {
    let count = document.body.innerText.split(value).length - 1
    for (const field of document.querySelectorAll<HTMLInputElement | HTMLTextAreaElement>('input, textarea')) if (field.value.includes(value)) count++
    for (const option of document.querySelectorAll('option')) if (option.textContent?.includes(value)) count++
    return count
  }, HOSTILE)
}

async function walk(theme: string): Promise<void> {
  const watched: Watched = { violations: [], foreign: [], dialogs: [] }
  const contexts = await Promise.all([browser.newContext(), browser.newContext()])
  const pages: Record<Visit['as'], Page> = {} as never
  for (const [as, context, cookie] of [['root', contexts[0], rootCookie], ['person', contexts[1], person.cookie]] as const) {
    await watchContext(context, [p.adminUrl], watched)
    await addSessionCookie(context, p.adminUrl, cookie)
    pages[as] = await context.newPage()
    await pages[as].addInitScript(() => {
      // A payload that ran would say so here, whatever it did first.
      window.alert = () => ((window as unknown as { pwned: boolean }).pwned = true)
    })
  }
  try {
    for (const visit of VISITS) {
      const page = pages[visit.as]
      const path = visit.path.replace(/\{(\w+)\}/g, (_, key: string) => ids[key]!)
      const response = await page.goto(`${p.adminUrl}${path}`)
      expect(response?.status(), `${theme} ${visit.path}`).toBe(200)
      await visit.then?.(page)
      expect(await injected(page), `${theme} ${visit.path}`).toEqual([])
      expect(await shown(page), `${theme} ${visit.path} shows the value as text`).toBeGreaterThan(0)
      expect(await page.evaluate(() => (window as unknown as { pwned?: boolean }).pwned), `${theme} ${visit.path}`).toBeUndefined()
      // The theme in use is the one asked for.
      expect(await page.locator('link[href="/static/theme.css"]').count(), `${theme} ${visit.path}`).toBe(1)
    }
    expect(watched.dialogs, theme).toEqual([])
    // An inline handler that reached the page would be refused by the policy, and reported: none was. Chromium also
    // reports the handler in the answer's markup while the sanitizer parses it in its scriptless document (where no
    // handler ever runs), before it is removed: that report is the sanitizer at work, not the page.
    expect(watched.violations.filter((v) => !v.source.includes('/static/vendor/purify.js')), theme).toEqual([])
  } finally {
    await Promise.all(contexts.map((context) => context.close()))
  }
}

test.skipIf(!HAS_CHROMIUM)('hostile values are text on every page that shows them, in the light theme', () => walk('light'), 120_000)

test.skipIf(!HAS_CHROMIUM)('and in the dark theme', async () => {
  expect((await p.call('POST', '/api/plugins/theme-dark/enable')).status).toBe(200)
  try {
    const css = await (await fetch(`${p.adminUrl}/static/theme.css`)).text()
    expect(css.length).toBeGreaterThan(0)
    await walk('dark')
  } finally {
    await p.call('POST', '/api/plugins/theme-dark/disable')
  }
}, 120_000)
