import { afterAll, beforeAll, expect, test } from 'bun:test'
import { answerCode } from '../../src/channels/approvals.ts'
import { buttonPress, directMessage, eventCallback, signedEvent, SLACK_APP, startFakeSlack } from '../fixtures/channels/slack-api.ts'
import { startFakeTelegram } from '../fixtures/channels/telegram-api.ts'
import { signedWebhook, startFakeWhatsApp, textNotification } from '../fixtures/channels/whatsapp-api.ts'
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts'
import { until } from '../helpers/until.ts'

// A turn on Telegram that reaches a tool behind a person's yes: the request is said in the chat with a code, and
// the person's `YES <code>` or `NO <code>` answers it, taken when the webhook delivers it (the turn is still
// running, and a thread's messages are otherwise answered one after the other).

const TOKEN = '7000000003:AAH-approvals_token-0123456789abcdefghij'
const ADA = 515_151
const STRANGER = 626_262
const fake = startFakeTelegram()
fake.addBot(TOKEN)
const SLACK_TOKEN = 'xoxb-3333-4444-approvals-tests'
const SLACK_SIGNING = '0a1b2c3d4e5f60718293a4b5c6d7e8f9'
const SLACK_PERSON = 'U0APPROVE1'
const slack = startFakeSlack({ token: SLACK_TOKEN })
let slackAgent: string
const WA_PHONE = '106540352242977'
const WA_TOKEN = 'EAAJB-approvals-token'
const WA_SECRET = 'approvals-app-secret'
const WA_PERSON = '16505559001'
const whatsapp = startFakeWhatsApp({ accessToken: WA_TOKEN, phoneNumberIds: [WA_PHONE] })
let whatsappAgent: string
let p: TestPlatform
let updateId = 90_000

beforeAll(async () => {
  p = await startTestPlatform({
    SWITCHBOARD_PLUGIN_CHANNEL_TELEGRAM_API_BASE_URL: fake.url,
    SWITCHBOARD_PLUGIN_CHANNEL_SLACK_API_BASE_URL: slack.url,
    SWITCHBOARD_PLUGIN_CHANNEL_WHATSAPP_API_BASE_URL: whatsapp.url,
    SWITCHBOARD_CHANNEL_RETRY_MS: '20',
    SWITCHBOARD_BASE_URL: 'https://switchboard.example.com',
  })
  for (const [name, value] of [['slack/approvals-token', SLACK_TOKEN], ['slack/approvals-signing', SLACK_SIGNING], ['wa/approvals-token', WA_TOKEN], ['wa/approvals-secret', WA_SECRET]]) {
    expect((await p.call('PUT', '/api/vault/secrets', { json: { scope: 'company', name, value } })).status).toBe(200)
  }
  const onSlack = await p.call('POST', '/api/v1/AgentConfigRecord', {
    json: { name: 'Slacker', runner: 'echo', model: 'echo-1', plugins: { enabled: ['mcp-planning'] }, channels: { slack: { bot_token_secret: 'slack/approvals-token', signing_secret_secret: 'slack/approvals-signing', app_id: SLACK_APP.appId } } },
  })
  expect(onSlack.status).toBe(201)
  slackAgent = onSlack.body.id
  expect((await p.call('POST', '/api/v1/UserPlatform', { json: { user_id: p.root.userId, platform: 'slack', platform_user_id: SLACK_PERSON } })).status).toBe(201)
  const onWhatsApp = await p.call('POST', '/api/v1/AgentConfigRecord', {
    json: { name: 'Wary', runner: 'echo', model: 'echo-1', plugins: { enabled: ['mcp-planning'] }, channels: { whatsapp: { phone_number_id: WA_PHONE, access_token_secret: 'wa/approvals-token', app_secret_secret: 'wa/approvals-secret' } } },
  })
  expect(onWhatsApp.status).toBe(201)
  whatsappAgent = onWhatsApp.body.id
  expect((await p.call('POST', '/api/v1/UserPlatform', { json: { user_id: p.root.userId, platform: 'whatsapp', platform_user_id: WA_PERSON } })).status).toBe(201)
  expect((await p.call('PUT', '/api/vault/secrets', { json: { scope: 'company', owner_id: p.root.companyId, name: 'tg/approvals', value: TOKEN } })).status).toBeLessThan(300)
  const agent = await p.call('POST', '/api/v1/AgentConfigRecord', {
    json: { name: 'Careful', runner: 'echo', model: 'echo-1', plugins: { enabled: ['mcp-planning'] }, channels: { telegram: { bot_token_secret: 'tg/approvals' } } },
  })
  expect(agent.status).toBe(201)
  for (const rule of [
    { server: 'mcp-planning', tool: '*', effect: 'allow' },
    { server: 'mcp-planning', tool: 'plan_create', effect: 'approve' },
  ]) {
    expect((await p.call('POST', '/api/v1/McpPermission', { json: rule })).status).toBe(201)
  }
  expect((await p.call('POST', '/api/v1/UserPlatform', { json: { user_id: p.root.userId, platform: 'telegram', platform_user_id: String(ADA) } })).status).toBe(201)
})
afterAll(async () => {
  await p.close()
  fake.stop()
  slack.stop()
  whatsapp.stop()
})

/** Ada (or someone else) writes to the bot, as Telegram delivers it. */
async function write(text: string, from = ADA) {
  const { path, body, headers } = fake.webhookRequest(TOKEN, fake.update({ updateId: ++updateId, from: { id: from, is_bot: false, first_name: 'Ada' }, text }))
  expect((await p.call('POST', path, { body, headers, as: null })).status).toBe(200)
}

const said = (chat = ADA) => fake.sent(TOKEN, chat).map((m) => m.text)
const saidAfter = (count: number, what: string, chat = ADA) => until(() => said(chat).slice(count).find((t) => t.includes(what)), { what: `"${what}" on Telegram` })
const planTitles = async () => (await p.store.db.selectFrom('plans').select('title').execute()).map((r) => r.title)
const pending = async () => p.store.db.selectFrom('tool_approvals').select(['id', 'status']).where('status', '=', 'pending').execute()

test('the request is said in the chat with a code and buttons; pressing Approve runs the tool, and the agent answers', async () => {
  const before = said().length
  await write(`/tool mcp-planning__plan_create ${JSON.stringify({ title: 'Telegram plan', tasks: [{ title: 'one' }] })}`)
  const asked = await saidAfter(before, 'Careful wants to call plan_create on mcp-planning')
  const [request] = await pending()
  expect(asked).toContain(`Reply YES ${answerCode(request!.id)} to let it, or NO ${answerCode(request!.id)} to refuse.`)
  expect(asked).toContain('"title": "Telegram plan"')

  // The request came with buttons; Ada presses Approve, which says the words for her.
  const asking = fake.calls.filter((c) => c.method === 'sendMessage' && String(c.params.text).includes('wants to call')).at(-1)!
  const keyboard = (typeof asking.params.reply_markup === 'string' ? JSON.parse(asking.params.reply_markup) : asking.params.reply_markup) as { inline_keyboard: Array<Array<{ text: string; callback_data: string }>> }
  expect(keyboard.inline_keyboard).toEqual([[{ text: 'Approve', callback_data: `YES ${answerCode(request!.id)}` }, { text: 'Deny', callback_data: `NO ${answerCode(request!.id)}` }]])
  const press = fake.buttonPress(ADA, keyboard.inline_keyboard[0]![0]!.callback_data)
  const { path, body, headers } = fake.webhookRequest(TOKEN, press)
  expect((await p.call('POST', path, { body, headers, as: null })).status).toBe(200)
  await saidAfter(before, 'Approved by')
  // The press was acknowledged, so Telegram stops showing the button busy.
  expect(fake.calls.some((c) => c.method === 'answerCallbackQuery' && c.params.callback_query_id === (press as { callback_query: { id: string } }).callback_query.id)).toBe(true)
  await saidAfter(before, 'The tool answered: Created the plan')
  expect(await planTitles()).toContain('Telegram plan')
})

test('NO and the code, typed, declines; a wrong code, or someone else’s answer, is an ordinary message or a refusal', async () => {
  const before = said().length
  await write(`/tool mcp-planning__plan_create ${JSON.stringify({ title: 'Refused plan', tasks: [{ title: 'one' }] })}`)
  await saidAfter(before, 'Careful wants to call plan_create')
  const [request] = await pending()
  // A code that names no waiting request is not an answer: nothing is decided.
  await write('YES 000000')
  expect((await pending()).map((r) => r.id)).toEqual([request!.id])
  // A stranger with the right code is not heard: their message goes where a stranger's goes.
  await write(`YES ${answerCode(request!.id)}`, STRANGER)
  await until(() => said(STRANGER).length > 0, { what: 'the stranger to be told who the agent talks to' })
  expect((await pending()).map((r) => r.id)).toEqual([request!.id])

  await write(`No ${answerCode(request!.id)}.`)
  await saidAfter(before, 'Declined by')
  await saidAfter(before, 'The tool answered: The person declined the call of mcp-planning/plan_create')
  expect(await planTitles()).not.toContain('Refused plan')
  // Answered twice (a retried webhook, or a second thought): the second hears how it ended.
  const count = said().length
  await write(`YES ${answerCode(request!.id)}`)
  await saidAfter(count, 'already answered: denied')
})

test('on Slack the request comes with Approve and Deny buttons; a press, signed as Slack signs it, answers', async () => {
  const channel = 'D0APPROVE1'
  const sent = await p.call('POST', `/channels/slack/${slackAgent}`, {
    ...signedEvent(eventCallback(directMessage(SLACK_PERSON, `/tool mcp-planning__plan_create ${JSON.stringify({ title: 'Slack plan', tasks: [{ title: 'one' }] })}`, channel)), SLACK_SIGNING),
    as: null,
  })
  expect(sent.status).toBe(200)
  const asking = await until(() => slack.posts.find((m) => m.channel === channel && m.text.includes('Slacker wants to call plan_create')), { what: 'the request on Slack' })
  const buttons = asking.blocks!.find((b) => b.type === 'actions')!.elements as Array<{ text: { text: string }; value: string }>
  expect(buttons.map((b) => b.text.text)).toEqual(['Approve', 'Deny'])
  // A press with a forged signature is refused and answers nothing.
  const press = buttonPress({ user: SLACK_PERSON, channel, value: buttons[0]!.value, messageTs: asking.ts })
  const forged = signedEvent(press, 'not-the-signing-secret')
  expect((await p.call('POST', `/channels/slack/${slackAgent}/interactions`, { body: forged.body, headers: { ...forged.headers, 'content-type': 'application/x-www-form-urlencoded' }, as: null })).status).toBe(401)
  expect((await pending()).length).toBe(1)

  const signed = signedEvent(press, SLACK_SIGNING)
  expect((await p.call('POST', `/channels/slack/${slackAgent}/interactions`, { body: signed.body, headers: { ...signed.headers, 'content-type': 'application/x-www-form-urlencoded' }, as: null })).status).toBe(200)
  await until(() => slack.posts.find((m) => m.channel === channel && m.text.startsWith('Approved by')), { what: 'the approval said on Slack' })
  await until(() => slack.posts.find((m) => m.channel === channel && m.text.includes('The tool answered: Created the plan')), { what: 'the agent’s answer on Slack' })
  expect(await planTitles()).toContain('Slack plan')
})

test('on WhatsApp, which has no buttons here, the code is typed: NO and the code declines', async () => {
  const send = (text: string) => {
    const { body, headers } = signedWebhook(WA_SECRET, textNotification({ phoneNumberId: WA_PHONE, from: WA_PERSON, text }))
    return p.call('POST', `/channels/whatsapp/${whatsappAgent}`, { body, headers, as: null })
  }
  const texts = () => whatsapp.calls.filter((c) => c.body.type === 'text' && c.body.to === WA_PERSON).map((c) => String((c.body.text as { body: string }).body))
  expect((await send(`/tool mcp-planning__plan_create ${JSON.stringify({ title: 'WhatsApp plan', tasks: [{ title: 'one' }] })}`)).status).toBe(200)
  const asking = await until(() => texts().find((t) => t.includes('Wary wants to call plan_create')), { what: 'the request on WhatsApp' })
  const code = /Reply YES ([0-9A-F]{6})/.exec(asking)![1]!
  expect((await send(`no ${code}`)).status).toBe(200)
  await until(() => texts().find((t) => t.startsWith('Declined by')), { what: 'the refusal said on WhatsApp' })
  await until(() => texts().find((t) => t.includes('The tool answered: The person declined')), { what: 'the agent to carry on' })
  expect(await planTitles()).not.toContain('WhatsApp plan')
})
