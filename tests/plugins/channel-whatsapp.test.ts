import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { whatsappDriver } from '../../plugins/channel-whatsapp/driver.ts'
import { ChannelSendError, type ChannelEndpoint } from '../../src/plugin-host/sdk.ts'
import { audioNotification, newWamid, signedWebhook, startFakeWhatsApp, statusNotification, textNotification } from '../fixtures/channels/whatsapp-api.ts'
import { openAIRunnerEnv, startFakeOpenAI } from '../helpers/fake-openai.ts'
import { HAS_SPEECH_TOOLS, isOggOpus, speech } from '../helpers/speech.ts'
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts'
import { expectProblem } from '../helpers/problem.ts'
import { until } from '../helpers/until.ts'
import type { OpenApiDocument } from '../helpers/openapi.ts'

const PHONE_NUMBER_ID = '106540352242922'
/** Another number of the same Meta app: its messages reach the same webhook, and are not this agent's. */
const OTHER_PHONE_NUMBER_ID = '106540352242999'
const ACCESS_TOKEN = 'EAAJB-access-token-for-tests'
const APP_SECRET = 'app-secret-for-tests'
const VERIFY_TOKEN = 'verify-token-for-tests'

const fake = startFakeWhatsApp({ accessToken: ACCESS_TOKEN, phoneNumberIds: [PHONE_NUMBER_ID, OTHER_PHONE_NUMBER_ID] })
const provider = startFakeOpenAI()
let p: TestPlatform
let agent: string

let numbers = 0
/** A WhatsApp id no other test uses, so each test has its own thread. */
const newNumber = () => `1650555${String(1000 + numbers++).padStart(4, '0')}`

async function createAgent(name: string, whatsapp: Record<string, unknown>, extra: Record<string, unknown> = {}): Promise<string> {
  const reply = await p.call('POST', '/api/v1/AgentConfigRecord', {
    json: { name, runner: 'echo', model: 'echo-1', channels: { whatsapp: { phone_number_id: PHONE_NUMBER_ID, access_token_secret: 'wa/token', app_secret_secret: 'wa/app', ...whatsapp } }, ...extra },
  })
  expect(reply.status).toBe(201)
  return reply.body.id
}

beforeAll(async () => {
  p = await startTestPlatform({ SWITCHBOARD_PLUGIN_CHANNEL_WHATSAPP_API_BASE_URL: fake.url, SWITCHBOARD_CHANNEL_RETRY_MS: '20', ...openAIRunnerEnv(provider) })
  for (const [name, value] of [
    ['wa/token', ACCESS_TOKEN],
    ['wa/app', APP_SECRET],
    ['wa/verify', VERIFY_TOKEN],
  ]) {
    expect((await p.call('PUT', '/api/vault/secrets', { json: { scope: 'company', owner_id: p.root.companyId, name, value } })).status).toBe(200)
  }
  agent = await createAgent('helpdesk', { verify_token_secret: 'wa/verify' })
})
afterAll(async () => {
  await p.close()
  fake.stop()
  provider.stop()
})

/** A number linked to a new member of the company: what the agent answers. */
async function linkedSender(): Promise<string> {
  const number = newNumber()
  const user = await p.createUser()
  const reply = await p.call('POST', '/api/v1/UserPlatform', { json: { user_id: user.userId, platform: 'whatsapp', platform_user_id: number } })
  expect(reply.status).toBe(201)
  return number
}

/** Meta delivering `payload` to an agent's webhook, signed with the app secret. */
function deliver(payload: unknown, { to = agent } = {}) {
  const { body, headers } = signedWebhook(APP_SECRET, payload)
  return p.call('POST', `/channels/whatsapp/${to}`, { body, headers, as: null })
}

const answersTo = (number: string) => fake.calls.filter((call) => call.body.type === 'text' && call.body.to === number && call.status === 200)

async function inboxRows(deliveryId: string) {
  return p.store.db.selectFrom('channel_inbox').select(['id', 'agent_id']).where('delivery_id', '=', deliveryId).execute()
}

describe('a text message in', () => {
  test('is answered on WhatsApp, to the sender’s wa_id, with the access token, as a plain text message', async () => {
    const from = await linkedSender()
    // Accents and an emoji: Meta escapes them as \uXXXX in the bytes it signs.
    const reply = await deliver(textNotification({ phoneNumberId: PHONE_NUMBER_ID, from, name: 'Zoë Ribeiro', text: 'Olá, está aí? ☕' }))
    expect(reply.status).toBe(200)
    const [sent] = await until(() => (answersTo(from).length > 0 ? answersTo(from) : undefined), { what: 'the answer to reach WhatsApp' })
    expect(sent!.phoneNumberId).toBe(PHONE_NUMBER_ID)
    expect(sent!.authorization).toBe(`Bearer ${ACCESS_TOKEN}`)
    expect(sent!.body).toEqual({ messaging_product: 'whatsapp', recipient_type: 'individual', to: from, type: 'text', text: { body: 'Echo: Olá, está aí? ☕', preview_url: false } })
  })

  test('shows the agent typing against the message that came in', async () => {
    const from = await linkedSender()
    const id = newWamid()
    expect((await deliver(textNotification({ phoneNumberId: PHONE_NUMBER_ID, from, id, text: 'are you there?' }))).status).toBe(200)
    const typing = await until(() => fake.typings().find((call) => call.body.message_id === id), { what: 'the typing indicator' })
    expect(typing.authorization).toBe(`Bearer ${ACCESS_TOKEN}`)
    expect(typing.body).toEqual({ messaging_product: 'whatsapp', status: 'read', message_id: id, typing_indicator: { type: 'text' } })
    expect(typing.status).toBe(200)
  })

  test('from a number nobody linked gets the invitation to link, and no answer of the agent', async () => {
    const from = newNumber()
    expect((await deliver(textNotification({ phoneNumberId: PHONE_NUMBER_ID, from, text: 'who are you?' }))).status).toBe(200)
    const [sent] = await until(() => (answersTo(from).length > 0 ? answersTo(from) : undefined), { what: 'the invitation' })
    expect(sent!.body.text.body).toContain('does not know this WhatsApp account')
    expect(sent!.body.text.body).toContain('/link <code>')
    expect(sent!.body.text.body).not.toContain('Echo:')
  })

  test('longer than WhatsApp takes is sent in pieces of at most 4096 characters, nothing lost', async () => {
    const from = await linkedSender()
    const text = Array.from({ length: 1200 }, (_, i) => `word${i}`).join(' ')
    expect((await deliver(textNotification({ phoneNumberId: PHONE_NUMBER_ID, from, text }))).status).toBe(200)
    const parts = await until(() => (answersTo(from).some((call) => call.body.text.body.endsWith('word1199')) ? answersTo(from) : undefined), { what: 'the last piece' })
    expect(parts.length).toBeGreaterThan(1)
    for (const part of parts) expect(part.body.text.body.length).toBeLessThanOrEqual(4096)
    expect(parts.map((part) => part.body.text.body).join(' ')).toBe(`Echo: ${text}`)
  })
})

describe.skipIf(!HAS_SPEECH_TOOLS)('a voice note in', () => {
  test('is fetched from the Graph API, heard as its transcript, and answered in text and as a WhatsApp voice note', async () => {
    const listener = await createAgent('listener', {}, { voice: { enabled: true, provider: 'openai' } })
    const from = await linkedSender()
    const note = speech('when does the shop open')
    provider.willHear(note, 'When does the shop open?')
    const mediaId = fake.serveMedium(note)
    expect((await deliver(audioNotification({ phoneNumberId: PHONE_NUMBER_ID, from, mediaId }), { to: listener })).status).toBe(200)
    await until(() => answersTo(from).some((call) => call.body.text.body === 'Echo: When does the shop open?'), { what: 'the transcript’s answer' })
    // The very bytes Meta served reached the transcription.
    const heard = provider.audio.find((a) => a.path === '/v1/audio/transcriptions' && Buffer.from(a.file!.bytes).equals(Buffer.from(note)))
    expect(heard).toBeDefined()
    const voice = await until(() => fake.audios().find((a) => a.to === from), { what: 'the spoken answer to be sent' })
    expect(voice.medium.mimeType).toBe('audio/ogg')
    expect(isOggOpus(voice.medium.bytes)).toBe(true)
    await p.call('DELETE', `/api/v1/AgentConfigRecord/${listener}`)
  })

  test('that cannot be fetched is named back to the sender instead of met with silence', async () => {
    const listener = await createAgent('listener-2', {}, { voice: { enabled: true, provider: 'openai' } })
    const from = await linkedSender()
    expect((await deliver(audioNotification({ phoneNumberId: PHONE_NUMBER_ID, from, mediaId: '123456789012' }), { to: listener })).status).toBe(200)
    const told = await until(() => answersTo(from).find((call) => call.body.text.body.startsWith('Not read: voice note')), { what: 'the sender to be told' })
    expect(told.body.text.body).toContain('does not exist')
    await p.call('DELETE', `/api/v1/AgentConfigRecord/${listener}`)
  })
})

describe('the signature', () => {
  const forgeries: Array<[string, (payload: unknown) => { body: string; headers: Record<string, string> }]> = [
    ['signed with another secret', (payload) => signedWebhook('not-the-app-secret', payload)],
    [
      'without X-Hub-Signature-256',
      (payload) => {
        const { body, headers } = signedWebhook(APP_SECRET, payload)
        delete headers['x-hub-signature-256']
        return { body, headers }
      },
    ],
    [
      'with the body changed after signing',
      (payload) => {
        const { body, headers } = signedWebhook(APP_SECRET, payload)
        return { body: body.replace('please', 'PLEASE'), headers }
      },
    ],
    [
      'with the bare hex, no sha256= prefix',
      (payload) => {
        const { body, headers } = signedWebhook(APP_SECRET, payload)
        return { body, headers: { ...headers, 'x-hub-signature-256': headers['x-hub-signature-256']!.slice('sha256='.length) } }
      },
    ],
    ['signed as SHA-1 (the old X-Hub-Signature)', (payload) => ({ body: JSON.stringify(payload), headers: { 'content-type': 'application/json', 'x-hub-signature': 'sha1=0000' } })],
  ]

  test.each(forgeries)('a notification %s is refused with 401, and nothing is kept or sent', async (_, forge) => {
    const from = await linkedSender()
    const id = newWamid()
    const callsBefore = fake.calls.length
    const { body, headers } = forge(textNotification({ phoneNumberId: PHONE_NUMBER_ID, from, id, text: 'please run this' }))
    expectProblem(await p.call('POST', `/channels/whatsapp/${agent}`, { body, headers, as: null }), 401, 'unauthorized')
    expect(await inboxRows(id)).toEqual([])
    // A genuine message from the same number afterwards is answered, and it is the only thing that was.
    expect((await deliver(textNotification({ phoneNumberId: PHONE_NUMBER_ID, from, text: 'genuine' }))).status).toBe(200)
    await until(() => answersTo(from).length > 0, { what: 'the genuine message’s answer' })
    expect(answersTo(from).map((call) => call.body.text.body)).toEqual(['Echo: genuine'])
    expect(fake.calls.slice(callsBefore).some((call) => JSON.stringify(call.body).includes('please run this'))).toBe(false)
  })

  test('an agent without an app secret in the vault refuses every notification with 401', async () => {
    const id = await createAgent('no-app-secret', { app_secret_secret: 'wa/missing' })
    const message = textNotification({ phoneNumberId: PHONE_NUMBER_ID, from: newNumber(), text: 'hello' })
    expectProblem(await deliver(message, { to: id }), 401, 'unauthorized')
    expect(await inboxRows(message.entry[0]!.changes[0]!.value.messages![0]!.id)).toEqual([])
  })
})

describe('what the webhook acknowledges and leaves alone', () => {
  test('a message Meta delivers twice is acknowledged twice and answered once', async () => {
    const from = await linkedSender()
    const id = newWamid()
    const once = textNotification({ phoneNumberId: PHONE_NUMBER_ID, from, id, text: 'only once' })
    expect((await deliver(once)).status).toBe(200)
    expect((await deliver(once)).status).toBe(200)
    // The thread's messages are answered in order: once the next one is answered, a second answer would be out.
    expect((await deliver(textNotification({ phoneNumberId: PHONE_NUMBER_ID, from, text: 'and then' }))).status).toBe(200)
    await until(() => answersTo(from).some((call) => call.body.text.body === 'Echo: and then'), { what: 'the following message’s answer' })
    expect(answersTo(from).map((call) => call.body.text.body)).toEqual(['Echo: only once', 'Echo: and then'])
    expect(await inboxRows(id)).toHaveLength(1)
  })

  test('a change for another phone number of the app is not this agent’s', async () => {
    const from = await linkedSender()
    const theirs = textNotification({ phoneNumberId: OTHER_PHONE_NUMBER_ID, from, text: 'for the other number' })
    const ours = textNotification({ phoneNumberId: PHONE_NUMBER_ID, from, text: 'for this one' })
    // Both in one notification, as Meta batches changes of one business account.
    const both = { ...ours, entry: [{ ...ours.entry[0]!, changes: [...theirs.entry[0]!.changes, ...ours.entry[0]!.changes] }] }
    expect((await deliver(theirs)).status).toBe(200)
    expect((await deliver(both)).status).toBe(200)
    await until(() => answersTo(from).length > 0, { what: 'the answer to this number’s message' })
    expect(answersTo(from).map((call) => call.body.text.body)).toEqual(['Echo: for this one'])
    expect(await inboxRows(theirs.entry[0]!.changes[0]!.value.messages![0]!.id)).toEqual([])
    expect(fake.calls.filter((call) => call.phoneNumberId === OTHER_PHONE_NUMBER_ID)).toEqual([])
  })

  test('delivery receipts and messages that are not text are acknowledged and not answered', async () => {
    const from = await linkedSender()
    const image = textNotification({ phoneNumberId: PHONE_NUMBER_ID, from, text: 'unused' })
    const message = image.entry[0]!.changes[0]!.value.messages![0]! as Record<string, unknown>
    delete message.text
    Object.assign(message, { type: 'image', image: { id: '1479537139650973', mime_type: 'image/jpeg', sha256: 'abc' } })
    expect((await deliver(statusNotification(PHONE_NUMBER_ID, newWamid(), from, 'read'))).status).toBe(200)
    expect((await deliver(image)).status).toBe(200)
    expect(await inboxRows(String(message.id))).toEqual([])
    expect((await deliver(textNotification({ phoneNumberId: PHONE_NUMBER_ID, from, text: 'now text' }))).status).toBe(200)
    await until(() => answersTo(from).length > 0, { what: 'the text message’s answer' })
    expect(answersTo(from).map((call) => call.body.text.body)).toEqual(['Echo: now text'])
  })

  test('a well-signed body that is not JSON, or not a notification, is a 400 problem', async () => {
    const garbage = 'this is not json'
    const { headers } = signedWebhook(APP_SECRET, null)
    const signature = `sha256=${new Bun.CryptoHasher('sha256', APP_SECRET).update(garbage).digest('hex')}`
    expectProblem(await p.call('POST', `/channels/whatsapp/${agent}`, { body: garbage, headers: { ...headers, 'x-hub-signature-256': signature }, as: null }), 400, 'bad_request')
    expectProblem(await deliver({ object: 'page', entry: [] }), 400, 'bad_request')
    expectProblem(await deliver({ object: 'whatsapp_business_account', entry: [{ id: '1', changes: [{ field: 'messages', value: { messages: [{ type: 'text' }] } }] }] }), 400, 'bad_request')
  })

  test('an agent that does not exist, or whose WhatsApp channel is off, is a 404 problem', async () => {
    const message = textNotification({ phoneNumberId: PHONE_NUMBER_ID, from: newNumber(), text: 'hello' })
    expectProblem(await deliver(message, { to: '01936f3e-6d2a-7c41-9b1e-000000000000' }), 404, 'not_found')
    const off = await createAgent('whatsapp-off', { enabled: false })
    expectProblem(await deliver(message, { to: off }), 404, 'not_found')
    expectProblem(await deliver(message, { to: 'not-a-uuid' }), 400, 'bad_request')
  })
})

describe('the subscription handshake', () => {
  const handshake = (to: string, query: Record<string, string>) => p.call('GET', `/channels/whatsapp/${to}?${new URLSearchParams(query)}`, { as: null })
  const seenAt = async (id: string) =>
    (await p.store.db.selectFrom('channel_status').select('last_seen_at').where('agent_id', '=', id).where('platform', '=', 'whatsapp').executeTakeFirst())?.last_seen_at ?? null

  test('answers the challenge as text when the verify token is right, and marks the webhook seen', async () => {
    const id = await createAgent('handshake', { verify_token_secret: 'wa/verify' })
    expect(await seenAt(id)).toBeNull()
    const reply = await handshake(id, { 'hub.mode': 'subscribe', 'hub.verify_token': VERIFY_TOKEN, 'hub.challenge': '1158201444' })
    expect(reply.status).toBe(200)
    expect(reply.headers.get('content-type')).toStartWith('text/plain')
    expect(reply.body).toBe('1158201444')
    expect(await seenAt(id)).not.toBeNull()
  })

  // Not hex, so it cannot turn up by chance in the problem's request_id.
  const CHALLENGE = 'challenge-not-for-you'
  test.each([
    ['a wrong verify token', { 'hub.mode': 'subscribe', 'hub.verify_token': 'guessed', 'hub.challenge': CHALLENGE }],
    ['the token with a character more', { 'hub.mode': 'subscribe', 'hub.verify_token': `${VERIFY_TOKEN}x`, 'hub.challenge': CHALLENGE }],
    ['no verify token', { 'hub.mode': 'subscribe', 'hub.challenge': CHALLENGE }],
    ['another mode', { 'hub.mode': 'unsubscribe', 'hub.verify_token': VERIFY_TOKEN, 'hub.challenge': CHALLENGE }],
  ])('refuses %s with 403, echoing nothing', async (_, query) => {
    const body = expectProblem(await handshake(agent, query), 403, 'forbidden')
    expect(JSON.stringify(body)).not.toContain(CHALLENGE)
  })

  test('refuses every handshake of an agent without a verify token set', async () => {
    const id = await createAgent('no-verify-token', {})
    expectProblem(await handshake(id, { 'hub.mode': 'subscribe', 'hub.verify_token': '', 'hub.challenge': '42' }), 403, 'forbidden')
    expectProblem(await handshake(id, { 'hub.mode': 'subscribe', 'hub.verify_token': VERIFY_TOKEN, 'hub.challenge': '42' }), 403, 'forbidden')
  })
})

describe('sending through the Graph API', () => {
  test('an answer that fails twice with 500 is sent on the third try, once', async () => {
    const from = await linkedSender()
    fake.failNext(2, 500)
    expect((await deliver(textNotification({ phoneNumberId: PHONE_NUMBER_ID, from, text: 'retry me' }))).status).toBe(200)
    await until(() => answersTo(from).length > 0, { what: 'the answer after two failures' })
    const tries = fake.calls.filter((call) => call.body.to === from && call.body.type === 'text')
    expect(tries.map((call) => call.status)).toEqual([500, 500, 200])
    expect(answersTo(from).map((call) => call.body.text.body)).toEqual(['Echo: retry me'])
  })

  test('a throughput limit (code 130429) is waited out too', async () => {
    const from = await linkedSender()
    fake.failNext(1, 400, { message: '(#130429) Rate limit hit', type: 'OAuthException', code: 130429 })
    expect((await deliver(textNotification({ phoneNumberId: PHONE_NUMBER_ID, from, text: 'slow down' }))).status).toBe(200)
    await until(() => answersTo(from).length > 0, { what: 'the answer after the rate limit' })
    expect(fake.calls.filter((call) => call.body.to === from && call.body.type === 'text').map((call) => call.status)).toEqual([400, 200])
  })

  test('a refusal that will not change (undeliverable) is tried once, and the reply fails with Meta’s reason', async () => {
    const from = await linkedSender()
    fake.failNext(1, 400)
    expect((await deliver(textNotification({ phoneNumberId: PHONE_NUMBER_ID, from, text: 'nobody home' }))).status).toBe(200)
    const failed = await until(
      () => p.store.db.selectFrom('channel_outbox').select(['status', 'last_error', 'attempts']).where('thread_key', '=', from).where('status', '=', 'failed').executeTakeFirst(),
      { what: 'the reply to fail' },
    )
    expect(failed.attempts).toBe(1)
    expect(failed.last_error).toContain('131026')
    expect(fake.calls.filter((call) => call.body.to === from && call.body.type === 'text')).toHaveLength(1)
  })

  describe('the driver’s verdicts on Graph errors', () => {
    const driver = whatsappDriver({ api_base_url: fake.url })
    const endpoint = (token: string | undefined, phoneNumberId = PHONE_NUMBER_ID) =>
      ({
        agentId: '01936f3e-6d2a-7c41-9b1e-000000000000',
        companyId: '01936f3e-6d2a-7c41-9b1e-000000000001',
        agentName: 'helpdesk',
        platform: 'whatsapp',
        settings: { enabled: true, unknown_senders: 'invite', phone_number_id: phoneNumberId, access_token_secret: 'wa/token', app_secret_secret: 'wa/app' },
        email: {},
        secret: async () => token,
      }) satisfies ChannelEndpoint<'whatsapp'>
    const target = { to: '16505550000', message_id: newWamid() }

    async function verdict(send: Promise<void>): Promise<{ retryable: boolean; message: string }> {
      const error = await send.then(
        () => undefined,
        (e: unknown) => e,
      )
      if (!(error instanceof ChannelSendError)) throw new Error(`expected a ChannelSendError, got ${String(error)}`)
      return { retryable: error.retryable, message: error.message }
    }

    test.each([
      [500, { message: 'An unknown error has occurred.', type: 'OAuthException', code: 1 }, true],
      [503, { message: 'Service temporarily unavailable', type: 'OAuthException', code: 2 }, true],
      [429, { message: '(#4) Application request limit reached', type: 'OAuthException', code: 4 }, true],
      [400, { message: '(#80007) Rate limit issues', type: 'OAuthException', code: 80007 }, true],
      [400, { message: '(#131048) Spam rate limit hit', type: 'OAuthException', code: 131048 }, true],
      [400, { message: '(#131056) Pair rate limit hit', type: 'OAuthException', code: 131056 }, true],
      [400, { message: '(#131026) Message undeliverable', type: 'OAuthException', code: 131026 }, false],
      [400, { message: '(#131047) Re-engagement message', type: 'OAuthException', code: 131047, error_subcode: 2494010 }, false],
      [403, { message: '(#200) Permissions error', type: 'OAuthException', code: 200 }, false],
    ])('HTTP %i %o: retryable %p', async (status, error, retryable) => {
      fake.failNext(1, status, error)
      const result = await verdict(driver.send(endpoint(ACCESS_TOKEN), target, 'hello'))
      expect(result.retryable).toBe(retryable)
      expect(result.message).toContain(`HTTP ${status}`)
      expect(result.message).toContain(`code ${error.code}`)
      expect(result.message).toContain(error.message)
    })

    test('a wrong access token is refused for good, and the token is not in the message', async () => {
      const result = await verdict(driver.send(endpoint('EAA-revoked-token'), target, 'hello'))
      expect(result).toMatchObject({ retryable: false })
      expect(result.message).toContain('code 190')
      expect(result.message).not.toContain('EAA-revoked-token')
    })

    test('a phone number the token cannot send from is refused for good', async () => {
      expect(await verdict(driver.send(endpoint(ACCESS_TOKEN, '999999999'), target, 'hello'))).toMatchObject({ retryable: false })
    })

    test('an access token missing from the vault is refused for good, naming the secret', async () => {
      const result = await verdict(driver.send(endpoint(undefined), target, 'hello'))
      expect(result.retryable).toBe(false)
      expect(result.message).toContain('wa/token')
    })

    test('a Graph API that cannot be reached is worth another try', async () => {
      const nowhere = whatsappDriver({ api_base_url: 'http://127.0.0.1:9/v21.0' })
      expect(await verdict(nowhere.send(endpoint(ACCESS_TOKEN), target, 'hello'))).toMatchObject({ retryable: true })
    })

    test('a thread without a recipient is refused for good', async () => {
      expect(await verdict(driver.send(endpoint(ACCESS_TOKEN), { message_id: newWamid() }, 'hello'))).toMatchObject({ retryable: false })
    })

    test('typing without a message to mark read sends nothing', async () => {
      const before = fake.calls.length
      await driver.typing!(endpoint(ACCESS_TOKEN), { to: '16505550000' })
      expect(fake.calls.length).toBe(before)
    })
  })
})

test('the OpenAPI document describes both webhook routes as public, with the notification’s schema', async () => {
  const document = (await p.call('GET', '/api/openapi.json', { as: null })).body as OpenApiDocument
  const item = document.paths['/channels/whatsapp/{agent_id}']!
  expect(Object.keys(item).sort()).toEqual(['get', 'post'])
  expect(item.get.security).toEqual([])
  expect(item.post.security).toEqual([])
  expect(item.get.parameters.map((param: { name: string }) => param.name)).toEqual(expect.arrayContaining(['agent_id', 'hub.mode', 'hub.verify_token', 'hub.challenge']))
  expect(item.post.requestBody.content['application/json'].schema).toEqual({ $ref: '#/components/schemas/WhatsAppNotification' })
  expect(document.components?.schemas?.WhatsAppNotification?.properties).toHaveProperty('entry')
})
