import { afterAll, beforeAll, expect, test } from 'bun:test'
import type { Browser, Page } from 'playwright-core'
import { addSessionCookie, HAS_CHROMIUM, launchChromium, socketOpen, untilEqual, warnWithoutChromium, watchContext, type Watched } from '../helpers/browser.ts'
import { startChatPlatform, type ChatPlatform } from '../helpers/web-chat.ts'

// The plan panel of the web chat in Chromium: it shows the plan the agent made, follows every change live (made
// by the agent, by the API, by its own buttons), and its buttons execute, pause, resume and cancel.

warnWithoutChromium()

let browser: Browser
let p: ChatPlatform
const watched: Watched = { violations: [], foreign: [], dialogs: [] }

beforeAll(async () => {
  if (!HAS_CHROMIUM) return
  // Continuations wait an hour: the panel is checked against changes the test makes, one at a time.
  ;[browser, p] = await Promise.all([launchChromium(), startChatPlatform({ SWITCHBOARD_PLAN_CONTINUATION_DELAY_MS: '3600000' })])
  expect((await p.call('POST', '/api/v1/McpPermission', { json: { user_id: null, server: 'mcp-planning', tool: '*', effect: 'allow' } })).status).toBe(201)
}, 30_000)

afterAll(async () => {
  await browser?.close()
  await p?.close()
})

const taskStates = (page: Page) => page.locator('#plan .plan-tasks li').evaluateAll((els) => els.map((el) => `${el.querySelector('.task-title')?.textContent}: ${el.querySelector('.task-state')?.textContent}`))
const planStatus = (page: Page) => page.locator('#plan-title .tag').textContent()
const buttons = (page: Page) => page.locator('#plan .plan-actions button').evaluateAll((els) => els.map((el) => el.textContent?.trim()))

test.skipIf(!HAS_CHROMIUM)('the plan panel shows the tasks change live, and its buttons work', async () => {
  const person = await p.person()
  const agent = await p.call('POST', '/api/v1/AgentConfigRecord', { json: { name: 'planner', runner: 'echo', model: 'echo-1', plugins: { enabled: ['mcp-planning'] } } })
  const context = await browser.newContext()
  await watchContext(context, [p.adminUrl], watched)
  await addSessionCookie(context, p.adminUrl, person.cookie)
  const page = await context.newPage()
  try {
    await page.goto(`${p.adminUrl}/chat`)
    await page.selectOption('#new-agent', agent.body.id)
    await page.click('form.new-chat button[type=submit]')
    await page.waitForURL(/\/chat\/[0-9a-f-]{36}$/)
    await socketOpen(page)
    expect(await page.locator('#plan').textContent()).toContain('No plan.')

    // The agent makes a plan: the panel shows it without a reload.
    const tasks = [{ title: 'Gather figures' }, { title: 'Write it' }, { title: 'Send it' }]
    await page.fill('#composer-text', `/tool mcp-planning__plan_create ${JSON.stringify({ title: 'Quarterly report', tasks })}`)
    await page.press('#composer-text', 'Enter')
    await untilEqual(() => taskStates(page), ['Gather figures: pending', 'Write it: pending', 'Send it: pending'], 'the new plan in the panel')
    expect(await planStatus(page)).toBe('draft')
    expect(await buttons(page)).toEqual(['Execute', 'Cancel'])

    await page.click('#plan button[data-action=execute]')
    await untilEqual(() => planStatus(page), 'active', 'the plan to be active')
    expect(await buttons(page)).toEqual(['Pause', 'Cancel'])

    // Changes made elsewhere (here, the API as the same person) arrive live.
    const conversation = page.url().split('/').pop()!
    const plan = (await p.call('GET', `/api/chat/conversations/${conversation}/plan`, { as: person })).body
    const move = (task: number, status: string) => p.call('POST', `/api/plans/${plan.id}/tasks/status`, { as: person, json: { task, status } })
    expect((await move(1, 'in_progress')).status).toBe(200)
    await untilEqual(() => taskStates(page), ['Gather figures: in progress', 'Write it: pending', 'Send it: pending'], 'task 1 in progress')
    expect((await move(1, 'completed')).status).toBe(200)
    await untilEqual(() => taskStates(page), ['Gather figures: done', 'Write it: pending', 'Send it: pending'], 'task 1 done')

    // A failed task pauses the plan; Resume sets it going again.
    await move(2, 'in_progress')
    await move(2, 'failed')
    await untilEqual(() => planStatus(page), 'paused', 'the failure to pause the plan')
    expect(await taskStates(page)).toEqual(['Gather figures: done', 'Write it: failed', 'Send it: pending'])
    expect(await buttons(page)).toEqual(['Resume', 'Cancel'])
    await page.click('#plan button[data-action=resume]')
    await untilEqual(() => planStatus(page), 'active', 'the plan to resume')

    await page.click('#plan button[data-action=pause]')
    await untilEqual(() => planStatus(page), 'paused', 'the plan to pause')
    await page.click('#plan button[data-action=cancel]')
    await untilEqual(() => planStatus(page), 'cancelled', 'the plan to be cancelled')
    expect(await buttons(page)).toEqual([])
    expect((await p.call('GET', `/api/plans/${plan.id}`, { as: person })).body.status).toBe('cancelled')

    // After a reload the page shows the same plan, from the store.
    await page.reload()
    expect(await planStatus(page)).toBe('cancelled')
    expect(watched).toEqual({ violations: [], foreign: [], dialogs: [] })
  } finally {
    await context.close()
  }
}, 60_000)
