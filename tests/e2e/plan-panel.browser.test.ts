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

test.skipIf(!HAS_CHROMIUM)('a change that arrives while the panel is redrawing is shown, not lost behind the redraw', async () => {
  const person = await p.person()
  const agent = await p.call('POST', '/api/v1/AgentConfigRecord', { as: person, json: { name: 'racer', runner: 'echo', model: 'echo-1', plugins: { enabled: ['mcp-planning'] } } })
  const conversation = (await p.call('POST', '/api/v1/WebchatConversation', { as: person, json: { agent_id: agent.body.id } })).body.id
  const made = await p.call('POST', '/api/plans', { as: person, json: { conversation_id: conversation, title: 'Race', tasks: [{ title: 'One' }] } })
  expect(made.status).toBe(201)
  const context = await browser.newContext()
  await watchContext(context, [p.adminUrl], { violations: [], foreign: [], dialogs: [] })
  await addSessionCookie(context, p.adminUrl, person.cookie)
  const page = await context.newPage()
  try {
    // The first redraw's answer is held until the second change has been announced to the page: the second refresh
    // is asked for while the first is in flight.
    let heldAnswer: () => void = () => {}
    const answerHeld = new Promise<void>((resolve) => {
      let first = true
      void page.route(`${p.adminUrl}/chat/${conversation}/plan`, async (route) => {
        if (!first) return route.continue()
        first = false
        const response = await route.fetch()
        resolve()
        await new Promise<void>((release) => (heldAnswer = release))
        await route.fulfill({ response })
      })
    })
    await page.goto(`${p.adminUrl}/chat/${conversation}`)
    await socketOpen(page)
    await page.evaluate(() => {
      ;(window as any).stale = 0
      document.body.addEventListener('chat-plan-stale', () => (window as any).stale++)
    })
    expect((await p.call('POST', `/api/plans/${made.body.id}/update`, { as: person, json: { action: 'execute' } })).status).toBe(200)
    await answerHeld
    expect((await p.call('POST', `/api/plans/${made.body.id}/tasks/status`, { as: person, json: { task: 1, status: 'in_progress' } })).status).toBe(200)
    await untilEqual(() => page.evaluate(() => (window as any).stale), 2, 'the second change to be announced')
    heldAnswer()
    await untilEqual(() => taskStates(page), ['One: in progress'], 'the second change in the panel')
    expect(await planStatus(page)).toBe('active')
  } finally {
    await context.close()
  }
}, 30_000)
