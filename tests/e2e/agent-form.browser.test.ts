import { afterAll, beforeAll, expect, test } from 'bun:test'
import { tmpdir } from 'node:os'
import type { Browser } from 'playwright-core'
import { startFakeTelegram } from '../fixtures/channels/telegram-api.ts'
import { addSessionCookie, HAS_CHROMIUM, launchChromium, warnWithoutChromium, watchContext, type Watched } from '../helpers/browser.ts'
import { until } from '../helpers/until.ts'
import { signIn, startChatPlatform, type ChatPlatform } from '../helpers/web-chat.ts'

// A newcomer puts an agent on Telegram with the console's forms alone, no JSON and no README: the secret in the
// vault, the agent with its Telegram part, the webhook URL and connection check on its page, and then a message
// to the bot answered through the platform fake.

warnWithoutChromium()

/** Where the screenshots to look at go: SCREENSHOT_DIR, or the system's temporary directory. */
const SCREENSHOTS = process.env.SCREENSHOT_DIR ?? tmpdir()
const PASSWORD = 'agent-form-admin-password'
const TOKEN = '7000000002:AAH-newcomer_token-0123456789abcdefghij'
const STRANGER = 777_001
const fake = startFakeTelegram()
fake.addBot(TOKEN)
let browser: Browser
let p: ChatPlatform
const watched: Watched = { violations: [], foreign: [], dialogs: [] }

beforeAll(async () => {
  if (!HAS_CHROMIUM) return
  ;[browser, p] = await Promise.all([
    launchChromium(),
    startChatPlatform({
      SWITCHBOARD_ADMIN_PASSWORD: PASSWORD,
      SWITCHBOARD_PLUGIN_CHANNEL_TELEGRAM_API_BASE_URL: fake.url,
      SWITCHBOARD_CHANNEL_RETRY_MS: '20',
      // Telegram takes only HTTPS webhooks: the address people reach the platform at, behind its TLS proxy.
      SWITCHBOARD_BASE_URL: 'https://switchboard.example.com',
    }),
  ])
}, 30_000)

afterAll(async () => {
  await browser?.close()
  await p?.close()
  fake.stop()
})

test.skipIf(!HAS_CHROMIUM)('an agent with a Telegram channel, made from forms, answers on Telegram', async () => {
  const context = await browser.newContext({ viewport: { width: 1280, height: 900 } })
  await watchContext(context, [p.adminUrl], watched)
  await addSessionCookie(context, p.adminUrl, await signIn(p.adminUrl, 'admin', PASSWORD))
  const page = await context.newPage()

  // The bot's token goes into the vault; the agent will name it.
  await page.goto(`${p.adminUrl}/vault`)
  await page.getByLabel('Name', { exact: true }).fill('telegram/newcomer-bot')
  await page.getByLabel('Value', { exact: true }).fill(TOKEN)
  await page.getByRole('button', { name: 'Save secret' }).click()
  await page.getByRole('cell', { name: 'telegram/newcomer-bot', exact: true }).waitFor()

  await page.goto(`${p.adminUrl}/agents`)
  await page.getByRole('link', { name: 'New agent' }).click()
  await page.getByLabel('Name', { exact: true }).fill('Courier')
  await page.getByRole('navigation', { name: 'Parts of the form' }).getByRole('link', { name: 'Channels' }).click()
  // A channel not set up is folded away: one line each, opened to set it up.
  const telegram = page.locator('#record-channels-telegram-field')
  await telegram.getByText('Set up Telegram').click()
  // Ticked on but without its token: refused, the error beside the field, the message linking to it.
  await telegram.getByLabel('Answers on Telegram').check()
  await page.getByRole('button', { name: 'Create agent' }).click()
  const problem = page.locator('.form-footer .problem')
  await problem.waitFor()
  await problem.getByRole('link', { name: 'Telegram › Bot token (vault name)' }).click()
  expect(new URL(page.url()).hash).toBe('#record-channels-telegram-bot_token_secret')
  expect(await page.locator('#record-channels-telegram-bot_token_secret-error').textContent()).not.toBe('')
  await page.locator('#record-channels-telegram-bot_token_secret').fill('telegram/newcomer-bot')
  await telegram.getByLabel('Someone not linked to a person of the company').selectOption('refuse')
  await Promise.all([page.waitForURL(/\/agents\/[0-9a-f-]{36}\?created=1$/), page.getByRole('button', { name: 'Create agent' }).click()])
  const agentId = /\/agents\/([0-9a-f-]{36})/.exec(page.url())![1]!
  expect(await page.locator('.form-footer .notice').textContent()).toBe('Created agent Courier.')

  // Saving registered the bot's webhook with Telegram; the agent's page shows the URL and that Telegram delivers there.
  expect(fake.bot(TOKEN).webhook.url).toBe(`https://switchboard.example.com/channels/telegram/${agentId}`)
  const live = page.locator('#record-channels-telegram-live')
  expect(await live.locator('#webhook-telegram').inputValue()).toBe(fake.bot(TOKEN).webhook.url!)
  await live.getByText(`Telegram delivers to ${fake.bot(TOKEN).webhook.url}`).waitFor()
  await page.screenshot({ path: `${SCREENSHOTS}/agent-1280.png`, fullPage: true, caret: 'initial' })
  // The connection check asks again: a Telegram that reports failed deliveries is shown in its words.
  fake.bot(TOKEN).webhook.last_error_message = 'Wrong response from the webhook: 502 Bad Gateway'
  await live.getByRole('button', { name: 'Check the connection' }).click()
  await live.getByText('its last delivery failed').waitFor()
  expect(await live.textContent()).toContain('502 Bad Gateway')
  delete fake.bot(TOKEN).webhook.last_error_message

  // Someone writes to the bot: the agent answers as its form said for a stranger.
  const { path, body, headers } = fake.webhookRequest(TOKEN, fake.update({ from: { id: STRANGER, is_bot: false, first_name: 'Sam' }, text: 'hello?' }))
  expect((await p.call('POST', path, { body, headers, as: null })).status).toBe(200)
  await until(() => fake.sent(TOKEN, STRANGER).length > 0, { what: 'the answer to reach Telegram' })
  expect(fake.sent(TOKEN, STRANGER)[0]!.text).toContain('Courier only talks to the people of its organisation')

  const stored = (await p.call('GET', `/api/v1/AgentConfigRecord/${agentId}`)).body
  expect(stored.channels).toEqual({ webchat: { enabled: true }, telegram: { enabled: true, bot_token_secret: 'telegram/newcomer-bot', unknown_senders: 'refuse' } })
  expect(watched).toEqual({ violations: [], foreign: [], dialogs: [] })
  await context.close()
})
