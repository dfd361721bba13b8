import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { createHmac } from 'node:crypto'
import { startFakeTelegram } from '../fixtures/channels/telegram-api.ts'
import { startTestPlatform, type Principal, type TestPlatform } from '../helpers/platform.ts'
import { expectProblem } from '../helpers/problem.ts'
import { until } from '../helpers/until.ts'
import type { OpenApiDocument } from '../helpers/openapi.ts'

const BASE_URL = 'https://switchboard.example.com'
const TOKEN = '7000000001:AAH-helpdesk_token-0123456789abcdefghij'
/** The Telegram account linked to `person`; its private chat with the bot has the same id. */
const ADA = 424_242
const STRANGER = 999_001

// One line of the personality, far longer than a Telegram message: "/quote long-line-marker" makes the echo
// runner answer it whole.
const LONG_LINE = `long-line-marker ${Array.from({ length: 1400 }, (_, i) => `word${i}`).join(' ')}`

const fake = startFakeTelegram()
fake.addBot(TOKEN)
let p: TestPlatform
let agent: string
let person: Principal

const webhookPath = (agentId: string) => `/channels/telegram/${agentId}`
const derivedSecret = (token: string, agentId: string) => createHmac('sha256', token).update(`switchboard telegram webhook ${agentId}`).digest('hex')

async function storeSecret(name: string, value: string) {
  const reply = await p.call('PUT', '/api/vault/secrets', { json: { scope: 'company', owner_id: p.root.companyId, name, value } })
  expect(reply.status).toBeLessThan(300)
}

async function createAgent(name: string, telegram: Record<string, unknown>, extra: Record<string, unknown> = {}): Promise<string> {
  const reply = await p.call('POST', '/api/v1/AgentConfigRecord', { json: { name, runner: 'echo', model: 'echo-1', channels: { telegram }, ...extra } })
  expect(reply.status).toBe(201)
  // A reload runs ON_STARTUP, where the plugin registers the webhooks.
  expect((await p.call('POST', `/api/agents/${reply.body.id}/reload`)).status).toBe(200)
  return reply.body.id
}

/** Delivers an update to the webhook the bot registered, as Telegram would. */
function deliver(update: ReturnType<typeof fake.update>, forged: Parameters<typeof fake.webhookRequest>[2] = {}, token = TOKEN) {
  const { path, body, headers } = fake.webhookRequest(token, update, forged)
  return p.call('POST', path, { body, headers, as: null })
}

const texts = (chatId: number, token = TOKEN) => fake.sent(token, chatId).map((m) => m.text)
const answered = (chatId: number, text: string) => until(() => texts(chatId).includes(text), { what: `"${text}" to reach chat ${chatId}` })
const inbox = (agentId: string) => p.store.db.selectFrom('channel_inbox').select(['delivery_id', 'message']).where('agent_id', '=', agentId).execute()
const channelState = async (agentId: string) => (await p.call('GET', `/api/agents/${agentId}/channels`)).body.data.find((s) => s.platform === 'telegram')!

beforeAll(async () => {
  p = await startTestPlatform({
    SWITCHBOARD_PLUGIN_CHANNEL_TELEGRAM_API_BASE_URL: fake.url,
    SWITCHBOARD_CHANNEL_RETRY_MS: '20',
    SWITCHBOARD_BASE_URL: BASE_URL,
  })
  await storeSecret('tg/token', TOKEN)
  agent = await createAgent('Helpdesk', { bot_token_secret: 'tg/token' }, { personality: `You help.\n${LONG_LINE}` })
  person = await p.createUser()
  const link = await p.call('POST', '/api/v1/UserPlatform', { json: { user_id: person.userId, platform: 'telegram', platform_user_id: String(ADA) } })
  expect(link.status).toBe(201)
})
afterAll(async () => {
  await p.close()
  fake.stop()
})

describe('webhook registration', () => {
  test('start-up points the bot at our URL with the secret token derived from the bot token, for messages and button presses', () => {
    const webhook = fake.bot(TOKEN).webhook
    expect(webhook.url).toBe(`${BASE_URL}${webhookPath(agent)}`)
    expect(webhook.secret_token).toBe(derivedSecret(TOKEN, agent))
    expect(webhook.allowed_updates).toEqual(['message', 'callback_query'])
  })

  test('a reload registers the webhook again, so a changed secret reaches Telegram', async () => {
    const before = fake.calls.filter((c) => c.method === 'setWebhook').length
    expect((await p.call('POST', `/api/agents/${agent}/reload`)).status).toBe(200)
    expect(fake.calls.filter((c) => c.method === 'setWebhook').length).toBe(before + 1)
    expect(fake.calls.filter((c) => c.method === 'setWebhook').at(-1)!.params).toMatchObject({ url: `${BASE_URL}${webhookPath(agent)}`, secret_token: derivedSecret(TOKEN, agent) })
  })

  test('the console reads getWebhookInfo: reachable at our URL, until Telegram reports a failed delivery', async () => {
    const state = await channelState(agent)
    expect(state).toMatchObject({ configured: true, reachable: true, webhook_url: `${BASE_URL}${webhookPath(agent)}` })
    expect(state.reachable_detail).toContain(`${BASE_URL}${webhookPath(agent)}`)
    const webhook = fake.bot(TOKEN).webhook
    Object.assign(webhook, { last_error_message: 'Wrong response from the webhook: 502 Bad Gateway', last_error_date: 1_700_000_000, pending_update_count: 3 })
    try {
      const failing = await channelState(agent)
      expect(failing.reachable).toBe(false)
      expect(failing.reachable_detail).toContain('502 Bad Gateway')
      expect(failing.reachable_detail).toContain('3 updates waiting')
    } finally {
      Object.assign(webhook, { last_error_message: undefined, last_error_date: undefined, pending_update_count: 0 })
    }
  })

  test('with register_webhooks off, start-up leaves the bots’ webhooks to the operator', async () => {
    const off = await p.call('PUT', '/api/plugins/channel-telegram/settings', { json: { register_webhooks: false } })
    expect(off.status).toBe(200)
    const token = '7000000003:AAH-manual_bot-0123456789abcdefghijklmn'
    fake.addBot(token)
    await storeSecret('tg/manual', token)
    const manual = await createAgent('Manual', { bot_token_secret: 'tg/manual' })
    expect(fake.calls.filter((c) => c.token === token)).toEqual([])
    expect((await p.call('PUT', '/api/plugins/channel-telegram/settings', { json: {} })).status).toBe(200)
    await until(() => fake.bot(token).webhook.url === `${BASE_URL}${webhookPath(manual)}`, { what: 'the webhook to be registered once the setting is back on' })
    await p.call('DELETE', `/api/v1/AgentConfigRecord/${manual}`)
  })

  test('a bot Telegram refuses is reported on the channel, and the platform goes on; the token is never shown', async () => {
    const token = '7000000099:AAH-revoked_token-0123456789abcdefghijk'
    await storeSecret('tg/revoked', token)
    const other = await createAgent('Revoked', { bot_token_secret: 'tg/revoked' })
    const state = await until(async () => {
      const s = await channelState(other)
      return s?.last_error ? s : undefined
    }, { what: 'the refused registration to be reported' })
    expect(state.last_error).toContain('could not be registered')
    expect(state.last_error).toContain('401 Unauthorized')
    expect(state.last_error).not.toContain(token)
    expect(state.reachable).toBeNull()
    await p.call('DELETE', `/api/v1/AgentConfigRecord/${other}`)
  })

  test('a webhook secret named in the settings is the one registered, and the derived one no longer opens the door', async () => {
    const token = '7000000002:AAH-second_bot-0123456789abcdefghijklmn'
    fake.addBot(token)
    await storeSecret('tg/second', token)
    await storeSecret('tg/hook', 'chosen_webhook-secret_42')
    const second = await createAgent('Second', { bot_token_secret: 'tg/second', webhook_secret_secret: 'tg/hook' })
    expect(fake.bot(token).webhook.secret_token).toBe('chosen_webhook-secret_42')
    const refused = await deliver(fake.update({ text: 'with the derived secret' }), { secret: derivedSecret(token, second) }, token)
    expectProblem(refused, 401, 'unauthorized')
    expect((await deliver(fake.update({ text: 'hello second' }), {}, token)).status).toBe(200)
    await until(() => fake.sent(token, ADA).some((m) => m.text === 'Echo: hello second'), { what: 'the second bot to answer' })
    await p.call('DELETE', `/api/v1/AgentConfigRecord/${second}`)
  })
})

describe('messages', () => {
  test('a message is answered in its chat, with a typing indicator meanwhile', async () => {
    const reply = await deliver(fake.update({ text: 'hello there' }))
    expect(reply.status).toBe(200)
    expect(reply.body).toEqual({ ok: true })
    await answered(ADA, 'Echo: hello there')
    const sent = fake.sent(TOKEN, ADA).find((m) => m.text === 'Echo: hello there')!
    expect(sent.message_thread_id).toBeUndefined()
    expect(fake.calls.some((c) => c.method === 'sendChatAction' && c.params.chat_id === ADA && c.params.action === 'typing')).toBe(true)
  })

  test('a message in a forum topic is answered in that topic of that group', async () => {
    const group = -1_001_234_567_890
    expect((await deliver(fake.update({ text: 'in the topic', chat: { id: group, type: 'supergroup' }, topic: 77 }))).status).toBe(200)
    await answered(group, 'Echo: in the topic')
    expect(fake.sent(TOKEN, group).find((m) => m.text === 'Echo: in the topic')!.message_thread_id).toBe(77)
  })

  test('a command addressed to the bot in a group reads as the bare command', async () => {
    const group = -1_001_234_567_891
    await deliver(fake.update({ text: '/quote@switchboard_1_bot long-line-marker word0', chat: { id: group, type: 'supergroup' } }))
    await until(() => texts(group).some((t) => t.startsWith('Quoted: long-line-marker')), { what: 'the addressed command to be understood' })
  })

  test('a replayed update is acknowledged and answered once', async () => {
    const update = fake.update({ text: 'only once' })
    expect((await deliver(update)).status).toBe(200)
    expect((await deliver(update)).status).toBe(200)
    await answered(ADA, 'Echo: only once')
    // A later message is answered after the replay would have been: the replay still has no answer.
    await deliver(fake.update({ text: 'after the replay' }))
    await answered(ADA, 'Echo: after the replay')
    expect(texts(ADA).filter((t) => t === 'Echo: only once')).toHaveLength(1)
    expect((await inbox(agent)).filter((row) => row.delivery_id === String(update.update_id))).toHaveLength(1)
  })

  test('an answer longer than 4096 characters goes out in several messages, in order', async () => {
    const before = texts(ADA).length
    await deliver(fake.update({ text: '/quote long-line-marker' }))
    const whole = `Quoted: ${LONG_LINE}`
    const parts = await until(
      () => {
        const sent = texts(ADA).slice(before)
        return sent.join(' ').replace(/\s+/g, ' ').length >= whole.length ? sent : undefined
      },
      { what: 'every part of the long answer' },
    )
    expect(parts.length).toBeGreaterThanOrEqual(3)
    for (const part of parts) expect(part.length).toBeLessThanOrEqual(4096)
    expect(parts.map((part) => part.trim()).join(' ')).toBe(whole)
  })

  test('edits, and messages with nothing to read, are acknowledged and not answered', async () => {
    const edit = fake.update({ text: 'edited words', edited: true })
    const sticker = fake.update({})
    expect((await deliver(edit)).status).toBe(200)
    expect((await deliver(sticker)).status).toBe(200)
    const ids = (await inbox(agent)).map((row) => row.delivery_id)
    expect(ids).not.toContain(String(edit.update_id))
    expect(ids).not.toContain(String(sticker.update_id))
  })
})

describe('who may talk', () => {
  test('a message sent as a chat (an anonymous admin) or by a bot speaks for no one, even under a linked id', async () => {
    // Telegram's placeholder sender of anonymous group admins, linked by someone: every anonymous admin shares it.
    const placeholder = 1_087_968_824
    const link = await p.call('POST', '/api/v1/UserPlatform', { json: { user_id: person.userId, platform: 'telegram', platform_user_id: String(placeholder) } })
    expect(link.status).toBe(201)
    const group = { id: -100_777, type: 'supergroup' as const }
    const anonymous = fake.update({ text: 'as the group', from: { id: placeholder, first_name: 'Group', username: 'GroupAnonymousBot' }, chat: group })
    Object.assign(anonymous.message!, { sender_chat: { id: group.id, type: 'supergroup', title: 'The team' } })
    const bot = fake.update({ text: 'beep', from: { id: 5_000_001, is_bot: true, first_name: 'Other bot' }, chat: group })
    expect((await deliver(anonymous)).status).toBe(200)
    expect((await deliver(bot)).status).toBe(200)
    const ids = (await inbox(agent)).map((row) => row.delivery_id)
    expect(ids).not.toContain(String(anonymous.update_id))
    expect(ids).not.toContain(String(bot.update_id))
  })

  test('a stranger is told how to link their account, once however often they write, and gets nothing else', async () => {
    const stranger = { id: STRANGER, first_name: 'Eve', username: 'eve' }
    await deliver(fake.update({ text: 'who are you?', from: stranger }))
    await deliver(fake.update({ text: 'hello?', from: stranger }))
    await until(
      async () => (await p.store.db.selectFrom('channel_inbox').select('status').where('thread_key', '=', String(STRANGER)).execute()).filter((r) => r.status === 'done').length === 2,
      { what: 'both messages to be handled' },
    )
    const told = await until(() => (texts(STRANGER).length >= 1 ? texts(STRANGER) : undefined), { what: 'the invitation' })
    // Both messages are handled, so whatever they would send is queued: once nothing of the thread is left to
    // send, what went out is all there is.
    const outbox = await until(
      async () => {
        const rows = await p.store.db.selectFrom('channel_outbox').select('status').where('thread_key', '=', String(STRANGER)).execute()
        return rows.every((row) => row.status !== 'pending') && rows
      },
      { what: 'the stranger’s thread to have nothing left to send' },
    )
    expect(outbox).toHaveLength(1)
    expect(texts(STRANGER)).toHaveLength(1)
    expect(told[0]).toContain('/link')
    expect(told[0]).toContain('/me/channels')
    expect(told[0]).not.toContain('Echo')
  })

  test('a code from /me links the account with "/start CODE", after which it is answered as that person', async () => {
    const newcomer = await p.createUser()
    const issued = await p.call('POST', '/api/me/channel-links', { as: newcomer })
    expect(issued.status).toBe(201)
    const from = { id: 555_000, first_name: 'Grace', last_name: 'Hopper', username: 'grace' }
    await deliver(fake.update({ text: '/start WRONG-CODE1', from }))
    await until(() => texts(555_000).some((t) => /not valid/.test(t)), { what: 'the wrong code to be refused' })
    await deliver(fake.update({ text: `/start ${issued.body.code}`, from }))
    await until(() => texts(555_000).some((t) => t.startsWith('Linked')), { what: 'the link to be confirmed' })
    const links = await p.call('GET', '/api/me/platforms', { as: newcomer })
    expect(links.body.data).toMatchObject([{ platform: 'telegram', platform_user_id: '555000' }])
    await deliver(fake.update({ text: 'now you know me', from }))
    await answered(555_000, 'Echo: now you know me')
  })

  test('a forged or missing secret token is refused: nothing is kept, nothing is sent', async () => {
    const sentBefore = fake.calls.filter((c) => c.method === 'sendMessage').length
    const inboxBefore = (await inbox(agent)).length
    const forgeries = [
      await deliver(fake.update({ text: 'forged: wrong secret' }), { secret: 'a'.repeat(64) }),
      await deliver(fake.update({ text: 'forged: no secret' }), { secret: null }),
      await deliver(fake.update({ text: 'forged: another agent’s secret' }), { secret: derivedSecret(TOKEN, crypto.randomUUID()) }),
      await deliver(fake.update({ text: 'forged: secret of the real token' }), { secret: TOKEN }),
    ]
    for (const reply of forgeries) expectProblem(reply, 401, 'unauthorized')
    expect((await inbox(agent)).length).toBe(inboxBefore)
    expect(fake.calls.filter((c) => c.method === 'sendMessage').length).toBe(sentBefore)
  })

  test('an agent whose bot token is not in the vault verifies nothing: every request is refused', async () => {
    const tokenless = await createAgent('Tokenless', { bot_token_secret: 'tg/absent' })
    const state = await until(async () => (await channelState(tokenless))?.last_error, { what: 'the missing token to be reported' })
    expect(state).toContain('tg/absent')
    const update = fake.update({ text: 'anyone home?' })
    const guesses = [derivedSecret('', tokenless), derivedSecret('undefined', tokenless), 'x']
    for (const secret of guesses) expectProblem(await deliver(update, { secret, path: webhookPath(tokenless) }), 401, 'unauthorized')
    expect(await inbox(tokenless)).toEqual([])
    await p.call('DELETE', `/api/v1/AgentConfigRecord/${tokenless}`)
  })

  test('an unknown agent is a 404, a bad body after a good secret a 400', async () => {
    const unknown = await deliver(fake.update({ text: 'hi' }), { path: webhookPath(crypto.randomUUID()) })
    expectProblem(unknown, 404, 'not_found')
    expectProblem(await deliver(fake.update({ text: 'hi' }), { path: webhookPath('not-an-agent-id') }), 400, 'bad_request')
    const bad = await p.call('POST', webhookPath(agent), { body: '{"update_id":', headers: { 'content-type': 'application/json', 'x-telegram-bot-api-secret-token': derivedSecret(TOKEN, agent) }, as: null })
    expectProblem(bad, 400, 'bad_request')
    const noId = await p.call('POST', webhookPath(agent), { body: '{"message":{}}', headers: { 'content-type': 'application/json', 'x-telegram-bot-api-secret-token': derivedSecret(TOKEN, agent) }, as: null })
    expectProblem(noId, 400, 'bad_request')
  })
})

describe('sending', () => {
  test('a reply that fails twice with 500 is retried and delivered once', async () => {
    fake.failNext(2, 500)
    await deliver(fake.update({ text: 'flaky telegram' }))
    await answered(ADA, 'Echo: flaky telegram')
    const attempts = fake.calls.filter((c) => c.method === 'sendMessage' && c.params.text === 'Echo: flaky telegram')
    expect(attempts.map((c) => c.status)).toEqual([500, 500, 200])
  })

  test('a 429 is retried no sooner than Telegram’s retry_after', async () => {
    fake.failNext(1, 429, 1)
    await deliver(fake.update({ text: 'slow down' }))
    await answered(ADA, 'Echo: slow down')
    const attempts = fake.calls.filter((c) => c.method === 'sendMessage' && c.params.text === 'Echo: slow down')
    expect(attempts.map((c) => c.status)).toEqual([429, 200])
    expect(attempts[1]!.at - attempts[0]!.at).toBeGreaterThanOrEqual(950)
  })

  test('a refusal such as a blocked bot is not retried, and the reply is kept as failed with the reason', async () => {
    fake.failNext(1, 403)
    await deliver(fake.update({ text: 'blocked me' }))
    const failed = await until(
      () => p.store.db.selectFrom('channel_outbox').select(['last_error', 'attempts']).where('agent_id', '=', agent).where('status', '=', 'failed').executeTakeFirst(),
      { what: 'the refused reply to be given up on' },
    )
    expect(failed.last_error).toContain('Forbidden: bot was blocked by the user')
    expect(fake.calls.filter((c) => c.method === 'sendMessage' && c.params.text === 'Echo: blocked me')).toHaveLength(1)
  })
})

describe('documents', () => {
  test('a document is fetched from Telegram and read by the agent', async () => {
    fake.bot(TOKEN).files.set('doc-1', { path: 'documents/file_1.txt', bytes: new TextEncoder().encode('Notes\nThe vault phrase is violet-otter.\n') })
    await deliver(fake.update({ caption: '/quote violet-otter', document: { file_id: 'doc-1', file_name: 'notes.txt', file_size: 40, mime_type: 'text/plain' } }))
    await until(() => texts(ADA).some((t) => t.startsWith('Quoted:') && t.includes('violet-otter')), { what: 'the agent to quote the document' })
    expect(fake.calls.some((c) => c.method === 'getFile' && c.params.file_id === 'doc-1')).toBe(true)
  })

  test('a document over the 20 MB download limit is not fetched; the words are answered and the console says why', async () => {
    await deliver(fake.update({ caption: 'see the big file', document: { file_id: 'doc-big', file_name: 'big.pdf', file_size: 21 * 1024 * 1024 } }))
    await answered(ADA, 'Echo: see the big file')
    expect(fake.calls.some((c) => c.method === 'getFile' && c.params.file_id === 'doc-big')).toBe(false)
    expect((await channelState(agent)).last_error).toContain('big.pdf')
  })
})

test('the webhook is described in the OpenAPI document', async () => {
  const document = (await p.call('GET', '/api/openapi.json')).body as OpenApiDocument
  const operation = document.paths['/channels/telegram/{agent_id}']?.post
  expect(operation).toMatchObject({ operationId: 'telegramWebhook' })
  expect(Object.keys(operation.responses).sort()).toEqual(['200', '400', '401', '404'])
})
