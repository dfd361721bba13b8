import { afterAll, beforeAll, expect, test } from 'bun:test'
import { tmpdir } from 'node:os'
import type { Browser, Page } from 'playwright-core'
import { checkAccessibility } from '../helpers/accessibility.ts'
import { addSessionCookie, HAS_CHROMIUM, launchChromium, socketOpen, warnWithoutChromium, watchContext, type Watched } from '../helpers/browser.ts'
import { startChatPlatform, type ChatPlatform } from '../helpers/web-chat.ts'

// A web chat turn that reaches a tool an approve rule guards pauses at a card: Approve runs the tool, Deny lets
// the agent answer without it, and a second participant sees the card, and its answer, live.

warnWithoutChromium()

const SCREENSHOTS = process.env.SCREENSHOT_DIR ?? tmpdir()
let browser: Browser
let p: ChatPlatform
let agent: string
const watched: Watched = { violations: [], foreign: [], dialogs: [] }

beforeAll(async () => {
  if (!HAS_CHROMIUM) return
  ;[browser, p] = await Promise.all([launchChromium(), startChatPlatform()])
  agent = (await p.call('POST', '/api/v1/AgentConfigRecord', { json: { name: 'careful', runner: 'echo', model: 'echo-1', plugins: { enabled: ['mcp-planning'] } } })).body.id
  expect((await p.call('POST', '/api/v1/McpPermission', { json: { user_id: null, server: 'mcp-planning', tool: '*', effect: 'allow' } })).status).toBe(201)
  expect((await p.call('POST', '/api/v1/McpPermission', { json: { user_id: null, server: 'mcp-planning', tool: 'plan_create', effect: 'approve' } })).status).toBe(201)
}, 30_000)

afterAll(async () => {
  await browser?.close()
  await p?.close()
})

async function open(cookie: string, conversation: string): Promise<Page> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } })
  await watchContext(context, [p.adminUrl], watched)
  await addSessionCookie(context, p.adminUrl, cookie)
  const page = await context.newPage()
  await page.goto(`${p.adminUrl}/chat/${conversation}`)
  await socketOpen(page)
  return page
}

/** In a conversation of two people the agent answers when addressed: `@careful` first, then the echo runner's command. */
const planCall = (args: Record<string, unknown>) => `@careful /tool mcp-planning__plan_create ${JSON.stringify(args)}`

test.skipIf(!HAS_CHROMIUM)('a turn pauses at an approval card; Approve runs the tool, Deny lets the agent go on without it; the other participant sees it live', async () => {
  const [asker, watcher] = await Promise.all([p.person(), p.person()])
  const made = await p.call('POST', '/api/v1/WebchatConversation', { json: { agent_id: agent }, as: asker })
  const conversation = made.body.id as string
  expect((await p.call('POST', '/api/v1/WebchatParticipant', { json: { conversation_id: conversation, user_id: watcher.userId }, as: asker })).status).toBe(201)
  const [mine, theirs] = await Promise.all([open(asker.cookie, conversation), open(watcher.cookie, conversation)])

  // The tool refuses a password field: the card shows what the call would send, the password masked.
  await mine.fill('#composer-text', planCall({ title: 'Offsite', tasks: [{ title: 'Book the room' }], password: 'hunter2' }))
  await mine.press('#composer-text', 'Enter')
  const card = mine.locator('li.approval')
  await card.getByRole('button', { name: 'Approve' }).waitFor()
  expect(await card.locator('strong').textContent()).toBe('Approval needed')
  expect(await card.locator('.approval-arguments').textContent()).toContain('"title": "Offsite"')
  expect(await card.locator('.approval-arguments').textContent()).toContain('"password": "•••• (hidden)"')
  expect(await card.textContent()).not.toContain('hunter2')
  // The other participant sees the card, without buttons: the answer is the asker's.
  const seen = theirs.locator('li.approval')
  await seen.waitFor()
  expect(await seen.getByRole('button').count()).toBe(0)
  expect(await seen.locator('.approval-outcome').textContent()).toContain('Waiting for an answer')
  await checkAccessibility(mine, 'approval card')
  await mine.screenshot({ path: `${SCREENSHOTS}/approval-1280.png`, caret: 'initial' })

  // A reload while it waits draws the card again, buttons and all.
  await mine.reload()
  await socketOpen(mine)
  await card.getByRole('button', { name: 'Deny' }).waitFor()

  await card.getByRole('button', { name: 'Deny' }).click()
  await card.locator('.approval-outcome', { hasText: 'Declined by you' }).waitFor()
  await seen.locator('.approval-outcome', { hasText: 'Declined by' }).waitFor()
  await mine.locator('#messages li.msg-agent[data-status=complete]').waitFor()
  expect(await p.store.db.selectFrom('plans').select('id').where('conversation_id', '=', conversation).execute()).toHaveLength(0)

  // Asked again, without the field the tool refuses, and approved: the tool runs and the plan panel shows its plan.
  await mine.fill('#composer-text', planCall({ title: 'Offsite', tasks: [{ title: 'Book the room' }] }))
  await mine.press('#composer-text', 'Enter')
  const second = mine.locator('li.approval.approval-pending')
  await second.getByRole('button', { name: 'Approve' }).click()
  await mine.locator('li.approval .approval-outcome', { hasText: 'Approved by you: the tool ran.' }).waitFor()
  await theirs.locator('li.approval .approval-outcome', { hasText: 'Approved by' }).waitFor()
  await mine.locator('#plan .plan-name', { hasText: 'Offsite' }).waitFor()
  await theirs.locator('#plan .plan-name', { hasText: 'Offsite' }).waitFor()
  expect(watched).toEqual({ violations: [], foreign: [], dialogs: [] })
  await Promise.all([mine.context().close(), theirs.context().close()])
})
