import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { createHmac } from 'node:crypto'
import { slackDriver } from '../../plugins/channel-slack/driver.ts'
import { silentLogger } from '../../src/logger.ts'
import { ChannelSendError, type ChannelEndpoint } from '../../src/plugin-host/sdk.ts'
import { appMention, directMessage, eventCallback, signedEvent, SLACK_APP, slackTs, startFakeSlack, type SignOptions } from '../fixtures/channels/slack-api.ts'
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts'
import { openAIRunnerEnv, startFakeOpenAI } from '../helpers/fake-openai.ts'
import { HAS_SPEECH_TOOLS, isOggOpus, speech } from '../helpers/speech.ts'
import { expectProblem } from '../helpers/problem.ts'
import { until } from '../helpers/until.ts'
import type { OpenApiDocument } from '../helpers/openapi.ts'

const TOKEN = 'xoxb-1111-2222-switchboard-tests'
const SIGNING_SECRET = '8f742231b10e8888abcd99yyyzzz85a5'
/** The Slack user linked to the platform's superadmin. */
const PERSON = 'U0PERSON1'

const fake = startFakeSlack({ token: TOKEN })
const provider = startFakeOpenAI()
let p: TestPlatform
let agent: string

const putSecret = (name: string, value: string) => p.call('PUT', '/api/vault/secrets', { json: { scope: 'company', name, value } })
const createAgent = async (name: string, slack: Record<string, unknown>) =>
  (await p.call('POST', '/api/v1/AgentConfigRecord', { json: { name, runner: 'echo', model: 'echo-1', channels: { slack } } })).body.id as string

beforeAll(async () => {
  p = await startTestPlatform({ SWITCHBOARD_PLUGIN_CHANNEL_SLACK_API_BASE_URL: fake.url, SWITCHBOARD_CHANNEL_RETRY_MS: '20', ...openAIRunnerEnv(provider) })
  expect((await putSecret('slack/token', TOKEN)).status).toBe(200)
  expect((await putSecret('slack/signing', SIGNING_SECRET)).status).toBe(200)
  agent = await createAgent('helpdesk', { bot_token_secret: 'slack/token', signing_secret_secret: 'slack/signing', app_id: SLACK_APP.appId })
  const link = await p.call('POST', '/api/v1/UserPlatform', { json: { user_id: p.root.userId, platform: 'slack', platform_user_id: PERSON } })
  expect(link.status).toBe(201)
})
afterAll(async () => {
  await p.close()
  fake.stop()
  provider.stop()
})

/** Posts `body` to the agent's Request URL as Slack would, signed with `secret`. */
function deliver(body: unknown, options: SignOptions & { secret?: string; to?: string } = {}) {
  const signed = signedEvent(body, options.secret ?? SIGNING_SECRET, options)
  return p.call('POST', `/channels/slack/${options.to ?? agent}`, { body: signed.body, headers: signed.headers, as: null })
}

const postsTo = (channel: string) => fake.posts.filter((post) => post.channel === channel)
const postCallsTo = (channel: string) => fake.calls.filter((call) => call.method === 'chat.postMessage' && call.args.channel === channel)
const waitForPosts = (channel: string, count = 1) =>
  until(() => (postsTo(channel).length >= count ? postsTo(channel) : undefined), { what: `${count} message(s) posted to ${channel}` })

async function inboxRows(deliveryId: string) {
  return p.store.db.selectFrom('channel_inbox').select(['delivery_id', 'thread_key']).where('delivery_id', '=', deliveryId).execute()
}

describe('a person writing to the agent', () => {
  test('a direct message is answered in that DM, with the bot token', async () => {
    const envelope = eventCallback(directMessage(PERSON, 'hello there', 'D0DIRECT1'))
    const reply = await deliver(envelope)
    expect(reply.status).toBe(200)
    const [post] = await waitForPosts('D0DIRECT1')
    expect(post).toEqual({ channel: 'D0DIRECT1', text: 'Echo: hello there', ts: expect.stringMatching(/^\d+\.\d{6}$/) })
    const call = postCallsTo('D0DIRECT1')[0]!
    expect(call.authorization).toBe(`Bearer ${TOKEN}`)
    expect(call.contentType).toStartWith('application/x-www-form-urlencoded')
    expect(call.args.thread_ts).toBeUndefined()
    expect(await inboxRows(envelope.event_id)).toEqual([{ delivery_id: envelope.event_id, thread_key: 'D0DIRECT1' }])
  })

  test('a mention in a channel is answered in its thread, without the leading mention', async () => {
    const event = appMention(PERSON, `<@${SLACK_APP.botUserId}> what is new?`, 'C0GENERAL')
    expect((await deliver(eventCallback(event))).status).toBe(200)
    const [post] = await waitForPosts('C0GENERAL')
    expect(post).toMatchObject({ channel: 'C0GENERAL', thread_ts: event.ts, text: 'Echo: what is new?' })
    const threads = await p.store.db.selectFrom('channel_threads').select(['thread_key', 'target']).where('thread_key', '=', `C0GENERAL:${event.ts}`).execute()
    expect(threads).toMatchObject([{ target: { channel: 'C0GENERAL', thread_ts: event.ts } }])
  })

  test('a mention inside an existing thread is answered in that thread', async () => {
    const parent = slackTs()
    const event = appMention(PERSON, `<@${SLACK_APP.botUserId}> and in here?`, 'C0THREADS', parent)
    expect((await deliver(eventCallback(event))).status).toBe(200)
    const [post] = await waitForPosts('C0THREADS')
    expect(post).toMatchObject({ thread_ts: parent, text: 'Echo: and in here?' })
    expect(post!.thread_ts).not.toBe(event.ts)
  })

  test('what Slack escapes reaches the agent as typed, and the answer is escaped again for Slack', async () => {
    // Slack sends <, > and & of a person's text as entities.
    expect((await deliver(eventCallback(directMessage(PERSON, 'is 1 &lt; 2 &amp;&amp; 3 &gt; 2?', 'D0ESCAPE')))).status).toBe(200)
    const [post] = await waitForPosts('D0ESCAPE')
    expect(post!.text).toBe('Echo: is 1 &lt; 2 &amp;&amp; 3 &gt; 2?')
    const conversation = await p.store.db.selectFrom('channel_threads').select('conversation_id').where('thread_key', '=', 'D0ESCAPE').executeTakeFirstOrThrow()
    const said = await p.call('GET', `/api/v1/WebchatMessage?conversation_id=eq.${conversation.conversation_id}&role=eq.user`)
    expect(said.body.data.map((m: { text: string }) => m.text)).toEqual(['is 1 < 2 && 3 > 2?'])
  })

  test('an unknown sender is told how to link their account, and the agent does not answer them', async () => {
    expect((await deliver(eventCallback(directMessage('U0STRANGER', 'who are you?', 'D0STRANGER')))).status).toBe(200)
    const [post] = await waitForPosts('D0STRANGER')
    expect(post!.text).toContain('helpdesk')
    expect(post!.text).toMatch(/link/i)
    expect(post!.text).not.toContain('Echo')
    // The invitation's "<code>" is escaped, so Slack shows it rather than reading it as a link.
    expect(post!.text).not.toMatch(/<[^@#!]/)
  })

  test('a long answer is cut at Slack’s 4,000 characters, the parts in order in the same thread', async () => {
    const words = Array.from({ length: 1300 }, (_, i) => `word${i}`)
    const event = appMention(PERSON, `<@${SLACK_APP.botUserId}> ${words.join(' ')}`, 'C0LONG')
    expect((await deliver(eventCallback(event))).status).toBe(200)
    const posts = await waitForPosts('C0LONG', 3)
    await until(async () => (await p.store.db.selectFrom('channel_outbox').select('status').where('thread_key', '=', `C0LONG:${event.ts}`).executeTakeFirst())?.status === 'sent', {
      what: 'the long answer to be sent completely',
    })
    const parts = postsTo('C0LONG')
    expect(parts.length).toBe(posts.length)
    for (const part of parts) {
      expect(part.text.length).toBeLessThanOrEqual(4000)
      expect(part.thread_ts).toBe(event.ts)
    }
    expect(parts.map((part) => part.text).join(' ')).toBe(`Echo: ${words.join(' ')}`)
  })
})

describe.skipIf(!HAS_SPEECH_TOOLS)('an audio clip', () => {
  test('shared in a DM is fetched with the bot token, heard, and answered in text and as an audio file in the DM', async () => {
    expect((await p.call('PATCH', `/api/v1/AgentConfigRecord/${agent}`, { json: { voice: { enabled: true, provider: 'openai' } } })).status).toBe(200)
    try {
      const clip = speech('book a meeting room for friday', 'webm')
      provider.willHear(clip, 'Book a meeting room for Friday.')
      const file = fake.shareFile(clip, 'audio_message.webm', 'audio/webm', 'slack_audio')
      const event = { ...directMessage(PERSON, '', 'D0AUDIO'), subtype: 'file_share', files: [file] }
      expect((await deliver(eventCallback(event))).status).toBe(200)
      const [answer] = await waitForPosts('D0AUDIO')
      expect(answer!.text).toBe('Echo: Book a meeting room for Friday.')
      const upload = await until(() => fake.uploads().find((u) => u.channel === 'D0AUDIO'), { what: 'the spoken answer to be uploaded to the DM' })
      expect(upload.title).toBe('Spoken answer')
      expect(isOggOpus(upload.bytes!)).toBe(true)
    } finally {
      expect((await p.call('PATCH', `/api/v1/AgentConfigRecord/${agent}`, { json: { voice: { enabled: false } } })).status).toBe(200)
    }
  })

  test('whose download address is not Slack’s is not fetched: the bot token never leaves for another host', async () => {
    let hits = 0
    const lure = Bun.serve({ hostname: '127.0.0.2', port: 0, fetch: () => (hits++, new Response('caught')) })
    try {
      const event = {
        ...directMessage(PERSON, 'listen to this', 'D0LURE'),
        subtype: 'file_share',
        files: [{ id: 'F0LURE', name: 'a.ogg', mimetype: 'audio/ogg', url_private_download: `http://127.0.0.2:${lure.port}/steal` }],
      }
      expect((await deliver(eventCallback(event))).status).toBe(200)
      const told = await until(() => postsTo('D0LURE').find((post) => post.text.startsWith('Not read: a.ogg')), { what: 'the sender to be told' })
      expect(told.text).toContain('not Slack')
      // The words still reach the agent.
      await until(() => postsTo('D0LURE').some((post) => post.text === 'Echo: listen to this'), { what: 'the words to be answered' })
      expect(hits).toBe(0)
    } finally {
      lure.stop(true)
    }
  })
})

describe('what is not answered', () => {
  test('the bot’s own messages, other bots’ and edits are acknowledged and not kept', async () => {
    const ignored = [
      // The bot's answer in a DM comes back as a message.im event.
      eventCallback({ ...directMessage(SLACK_APP.botUserId, 'Echo: hi', 'D0IGNORED'), bot_id: SLACK_APP.botId, app_id: SLACK_APP.appId }),
      eventCallback({ ...directMessage(SLACK_APP.botUserId, 'without bot_id', 'D0IGNORED') }),
      eventCallback({ type: 'message', subtype: 'bot_message', channel: 'D0IGNORED', channel_type: 'im', bot_id: 'B0OTHER', text: 'beep', ts: slackTs() }),
      eventCallback({
        type: 'message',
        subtype: 'message_changed',
        channel: 'D0IGNORED',
        channel_type: 'im',
        hidden: true,
        message: { type: 'message', user: PERSON, text: 'edited', ts: slackTs() },
        ts: slackTs(),
      }),
      // Channel chatter that does not mention the app.
      eventCallback({ type: 'message', channel: 'C0CHATTER', channel_type: 'channel', user: PERSON, text: 'lunch?', ts: slackTs() }),
      eventCallback({ type: 'reaction_added', user: PERSON, reaction: 'thumbsup', item: { type: 'message', channel: 'D0IGNORED', ts: slackTs() }, event_ts: slackTs() }),
      // Another app's event reaching this agent's URL.
      eventCallback(directMessage(PERSON, 'for another app', 'D0IGNORED'), { appId: 'A0SOMEONEELSE' }),
    ]
    for (const envelope of ignored) {
      const reply = await deliver(envelope)
      expect(reply.status).toBe(200)
      expect(await inboxRows(envelope.event_id)).toEqual([])
    }
    expect(postCallsTo('D0IGNORED')).toEqual([])
    expect(postCallsTo('C0CHATTER')).toEqual([])
  })

  test('a delivery Slack retries (same event_id, X-Slack-Retry-Num) is acknowledged and answered once', async () => {
    const envelope = eventCallback(directMessage(PERSON, 'only once', 'D0RETRIED'))
    expect((await deliver(envelope)).status).toBe(200)
    await waitForPosts('D0RETRIED')
    const retried = await deliver(envelope, { retry: { num: 1, reason: 'http_timeout' } })
    expect(retried.status).toBe(200)
    expect(await inboxRows(envelope.event_id)).toHaveLength(1)
    // A later message in the same DM is answered after anything the retry could have queued.
    expect((await deliver(eventCallback(directMessage(PERSON, 'and then this', 'D0RETRIED')))).status).toBe(200)
    await waitForPosts('D0RETRIED', 2)
    expect(postsTo('D0RETRIED').map((post) => post.text)).toEqual(['Echo: only once', 'Echo: and then this'])
  })
})

describe('the signature', () => {
  test('a forged signature is refused with 401, and nothing is kept or sent', async () => {
    const envelope = eventCallback(directMessage(PERSON, 'transfer everything', 'D0FORGED'))
    const forged = await deliver(envelope, { secret: 'not-the-signing-secret' })
    expectProblem(forged, 401, 'unauthorized')
    const signed = signedEvent(envelope, SIGNING_SECRET)
    const tampered = await p.call('POST', `/channels/slack/${agent}`, { body: signed.body.replace('transfer everything', 'transfer everything!'), headers: signed.headers, as: null })
    expectProblem(tampered, 401, 'unauthorized')
    const { 'x-slack-signature': _, ...unsigned } = signed.headers
    expectProblem(await p.call('POST', `/channels/slack/${agent}`, { body: signed.body, headers: unsigned, as: null }), 401, 'unauthorized')
    const wrongScheme = { ...signed.headers, 'x-slack-signature': signed.headers['x-slack-signature']!.replace('v0=', 'v1=') }
    expectProblem(await p.call('POST', `/channels/slack/${agent}`, { body: signed.body, headers: wrongScheme, as: null }), 401, 'unauthorized')
    expect(await inboxRows(envelope.event_id)).toEqual([])
    expect(postCallsTo('D0FORGED')).toEqual([])
  })

  test('a correctly signed request older or newer than five minutes is refused, as is one without a timestamp', async () => {
    const now = Math.floor(Date.now() / 1000)
    const envelope = eventCallback(directMessage(PERSON, 'replayed later', 'D0STALE'))
    expectProblem(await deliver(envelope, { timestamp: now - 6 * 60 }), 401, 'unauthorized')
    expectProblem(await deliver(envelope, { timestamp: now + 6 * 60 }), 401, 'unauthorized')
    const signed = signedEvent(envelope, SIGNING_SECRET)
    const { 'x-slack-request-timestamp': _, ...untimed } = signed.headers
    expectProblem(await p.call('POST', `/channels/slack/${agent}`, { body: signed.body, headers: untimed, as: null }), 401, 'unauthorized')
    // A signature over "v0::<body>" does not stand in for a timestamp.
    const empty = `v0=${createHmac('sha256', SIGNING_SECRET).update(`v0::${signed.body}`).digest('hex')}`
    const blank = { ...untimed, 'x-slack-request-timestamp': '', 'x-slack-signature': empty }
    expectProblem(await p.call('POST', `/channels/slack/${agent}`, { body: signed.body, headers: blank, as: null }), 401, 'unauthorized')
    expect(await inboxRows(envelope.event_id)).toEqual([])
    // Within the window, the same delivery is fine.
    expect((await deliver(envelope, { timestamp: now - 4 * 60 })).status).toBe(200)
    await waitForPosts('D0STALE')
  })

  test('the url_verification handshake is answered with its challenge only when signed', async () => {
    const handshake = { token: 'deprecated-verification-token', challenge: '3eZbrw1aBm2rZgRNFdxV2595E9CY3gmdALWMmHkvFXO7tYXAYM8P', type: 'url_verification' }
    const reply = await deliver(handshake)
    expect(reply.status).toBe(200)
    expect(reply.body).toEqual({ challenge: handshake.challenge })
    expectProblem(await deliver(handshake, { secret: 'wrong' }), 401, 'unauthorized')
    expectProblem(await p.call('POST', `/channels/slack/${agent}`, { json: handshake, as: null }), 401, 'unauthorized')
  })

  test('an agent whose signing secret is not in the vault refuses everything with 401', async () => {
    const unsigned = await createAgent('no-secret', { bot_token_secret: 'slack/token', signing_secret_secret: 'slack/absent' })
    const envelope = eventCallback(directMessage(PERSON, 'hello', 'D0NOSECRET'))
    const reply = await deliver(envelope, { to: unsigned })
    expect(expectProblem(reply, 401, 'unauthorized').detail).toContain('slack/absent')
    expect(await inboxRows(envelope.event_id)).toEqual([])
  })
})

describe('bad requests', () => {
  test('an unknown agent, or one not on Slack, is 404; a malformed id is 400', async () => {
    const envelope = eventCallback(directMessage(PERSON, 'anyone?', 'D0NOBODY'))
    expectProblem(await deliver(envelope, { to: crypto.randomUUID() }), 404, 'not_found')
    const elsewhere = (await p.call('POST', '/api/v1/AgentConfigRecord', { json: { name: 'web-only', runner: 'echo', channels: { webchat: { enabled: true } } } })).body.id
    expectProblem(await deliver(envelope, { to: elsewhere }), 404, 'not_found')
    const off = await createAgent('slack-off', { enabled: false, bot_token_secret: 'slack/token', signing_secret_secret: 'slack/signing' })
    expectProblem(await deliver(envelope, { to: off }), 404, 'not_found')
    expect(expectProblem(await deliver(envelope, { to: 'not-a-uuid' }), 400, 'bad_request').errors).toEqual([{ path: 'param.agent_id', message: 'must be an id (a UUID)' }])
  })

  test('a signed body that is not JSON, or not an envelope as Slack sends it, is 400', async () => {
    expectProblem(await deliver('{"type": "event_callback", '), 400, 'bad_request')
    expectProblem(await deliver({ type: 'event_callback', event_id: 'Ev0NOEVENT' }), 400, 'bad_request')
    expectProblem(await deliver({ type: 'url_verification' }), 400, 'bad_request')
    expectProblem(await deliver(eventCallback({ type: 'app_mention', user: PERSON, text: 'no channel' })), 400, 'bad_request')
  })
})

describe('sending', () => {
  test('a reply that fails twice with 500 is retried and posted once', async () => {
    fake.failNext(2, 500)
    expect((await deliver(eventCallback(directMessage(PERSON, 'through the storm', 'D0FLAKY')))).status).toBe(200)
    await waitForPosts('D0FLAKY')
    await until(() => postCallsTo('D0FLAKY').length === 3, { what: 'three attempts to be recorded' })
    expect(postCallsTo('D0FLAKY').map((call) => call.status)).toEqual([500, 500, 200])
    expect(postsTo('D0FLAKY').map((post) => post.text)).toEqual(['Echo: through the storm'])
  })

  test('a rate limit is waited out for as long as Slack’s Retry-After says', async () => {
    fake.failNext(1, 429, 1)
    expect((await deliver(eventCallback(directMessage(PERSON, 'slow down', 'D0LIMITED')))).status).toBe(200)
    await waitForPosts('D0LIMITED')
    const [limited, sent] = postCallsTo('D0LIMITED')
    expect(limited!.status).toBe(429)
    expect(sent!.status).toBe(200)
    expect(sent!.at - limited!.at).toBeGreaterThanOrEqual(950)
    expect(postsTo('D0LIMITED')).toHaveLength(1)
  })

  test('a channel Slack does not know fails at once, without retries, and the console shows why', async () => {
    fake.missingChannels.add('D0GONE')
    const envelope = eventCallback(directMessage(PERSON, 'into the void', 'D0GONE'))
    expect((await deliver(envelope)).status).toBe(200)
    const failed = await until(
      async () => {
        const row = await p.store.db.selectFrom('channel_outbox').select(['status', 'last_error']).where('thread_key', '=', 'D0GONE').executeTakeFirst()
        return row?.status === 'failed' ? row : undefined
      },
      { what: 'the reply to D0GONE to be given up on' },
    )
    expect(failed.last_error).toContain('channel_not_found')
    expect(postCallsTo('D0GONE').map((call) => call.error)).toEqual(['channel_not_found'])
  })

  test('a bad bot token fails without retries, and the console says Slack refused it', async () => {
    expect((await putSecret('slack/wrong-token', 'xoxb-revoked')).status).toBe(200)
    const revoked = await createAgent('revoked', { bot_token_secret: 'slack/wrong-token', signing_secret_secret: 'slack/signing' })
    expect((await deliver(eventCallback(directMessage(PERSON, 'hello?', 'D0REVOKED')), { to: revoked })).status).toBe(200)
    await until(async () => (await p.store.db.selectFrom('channel_outbox').select('status').where('agent_id', '=', revoked).executeTakeFirst())?.status === 'failed', {
      what: 'the reply with a revoked token to be given up on',
    })
    expect(postCallsTo('D0REVOKED').map((call) => call.error)).toEqual(['invalid_auth'])
    const state = (await p.call('GET', `/api/agents/${revoked}/channels`)).body.data[0]!
    expect(state.reachable_detail).toContain('invalid_auth')
  })
})

describe('how the driver judges a failed send', () => {
  const endpoint = (secrets: Record<string, string>): ChannelEndpoint<'slack'> => ({
    agentId: crypto.randomUUID(),
    companyId: crypto.randomUUID(),
    agentName: 'direct',
    platform: 'slack',
    settings: { enabled: true, unknown_senders: 'invite', bot_token_secret: 'slack/bot', signing_secret_secret: 'slack/signing' },
    email: {},
    secret: async (name) => secrets[name],
  })
  const failure = async (send: Promise<void>) => {
    const error = await send.then(
      () => undefined,
      (thrown: unknown) => thrown,
    )
    expect(error).toBeInstanceOf(ChannelSendError)
    return error as ChannelSendError
  }
  const driver = slackDriver({ baseUrl: () => fake.url, log: silentLogger })
  const withToken = endpoint({ 'slack/bot': TOKEN })

  test('an outage or an unreachable Slack may pass: retryable', async () => {
    fake.failNext(1, 503)
    expect(await failure(driver.send(withToken, { channel: 'D0DIRECT' }, 'hi'))).toMatchObject({ retryable: true, message: 'Slack answered HTTP 503.' })
    const nowhere = slackDriver({ baseUrl: () => 'http://127.0.0.1:9/api/', log: silentLogger })
    const unreachable = await failure(nowhere.send(withToken, { channel: 'D0DIRECT' }, 'hi'))
    expect(unreachable.retryable).toBe(true)
    expect(unreachable.message).toStartWith('Slack could not be reached')
  })

  test('a rate limit is retryable after Slack’s Retry-After, in milliseconds', async () => {
    fake.failNext(1, 429, 7)
    expect(await failure(driver.send(withToken, { channel: 'D0DIRECT' }, 'hi'))).toMatchObject({ retryable: true, retryAfterMs: 7000 })
  })

  test('what will not change by waiting is not retryable', async () => {
    fake.missingChannels.add('C0ARCHIVED')
    expect(await failure(driver.send(withToken, { channel: 'C0ARCHIVED' }, 'hi'))).toMatchObject({ retryable: false, message: 'Slack refused the call: channel_not_found.' })
    expect(await failure(driver.send(endpoint({ 'slack/bot': 'xoxb-unknown' }), { channel: 'D0DIRECT' }, 'hi'))).toMatchObject({ retryable: false, message: 'Slack refused the call: invalid_auth.' })
    expect(await failure(driver.send(endpoint({}), { channel: 'D0DIRECT' }, 'hi'))).toMatchObject({ retryable: false, message: 'The Slack bot token slack/bot is not in the vault.' })
    expect((await failure(driver.send(withToken, { thread_ts: '1.2' }, 'hi'))).retryable).toBe(false)
    expect((await failure(driver.send(withToken, { channel: 'D0DIRECT', thread_ts: 12 }, 'hi'))).retryable).toBe(false)
  })

  test('a send goes to the channel and thread of its target', async () => {
    await driver.send(withToken, { channel: 'C0DIRECT', thread_ts: '1700000000.000001' }, 'in the thread')
    expect(fake.posts.at(-1)).toMatchObject({ channel: 'C0DIRECT', thread_ts: '1700000000.000001', text: 'in the thread' })
  })
})

describe('the console and the API document', () => {
  test('the channel state names the Request URL, the team the token works for, and the last signed request', async () => {
    const reply = await p.call('GET', `/api/agents/${agent}/channels`)
    expect(reply.status).toBe(200)
    const state = reply.body.data[0]!
    expect(state).toMatchObject({ platform: 'slack', configured: true, plugin: { name: 'channel-slack', enabled: true }, reachable: true })
    expect(state.webhook_url).toEndWith(`/channels/slack/${agent}`)
    expect(state.reachable_detail).toContain(`valid for team ${SLACK_APP.team}`)
    expect(fake.calls.filter((call) => call.method === 'auth.test').at(-1)!.authorization).toBe(`Bearer ${TOKEN}`)
  })

  test('/api/openapi.json lists the Events API route', async () => {
    const document = (await p.call('GET', '/api/openapi.json', { as: null })).body as OpenApiDocument
    const route = document.paths['/channels/slack/{agent_id}']!
    expect(route.post.operationId).toBe('receiveSlackEvents')
    expect(route.post.parameters).toEqual([expect.objectContaining({ name: 'agent_id', in: 'path' })])
    expect(Object.keys(route.post.responses).sort()).toEqual(['200', '400', '401', '404'])
  })
})
