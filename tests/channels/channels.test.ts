import { beforeAll, beforeEach, describe, expect, test } from 'bun:test'
import { join } from 'node:path'
import type { InboundMessage } from '../../src/channels/contract.ts'
import type { Loopback } from '../fixtures/plugins/channels/channel-loopback/index.ts'
import { startTestPlatform, useStarted, type Principal } from '../helpers/platform.ts'
import { expectProblem } from '../helpers/problem.ts'
import { until } from '../helpers/until.ts'
import { LINK_TRIES_PER_ACCOUNT, LINK_TRIES_PER_COMPANY } from '../../src/channels/deliveries.ts'

// The kernel's side of every channel, through a loopback plugin that serves the telegram platform in place of the
// shipped one: its webhook takes an InboundMessage signed with a shared secret, and it keeps what it sends.
const FIXTURES = join(import.meta.dir, '..', 'fixtures', 'plugins', 'channels')
const SECRET = 'loopback-shared-secret'

const platformOf = useStarted(() => startTestPlatform({ SWITCHBOARD_PLUGIN_PATHS: FIXTURES, SWITCHBOARD_CHANNEL_RETRY_MS: '20' }))
const loop = () => (globalThis as { channelLoopback?: Loopback }).channelLoopback!

let agentId: string
let person: Principal
let serial = 0

function message(overrides: Partial<InboundMessage> & { from?: string; chat?: string } = {}): InboundMessage {
  const { from = '1001', chat = from, ...rest } = overrides
  return { deliveryId: `d-${Date.now()}-${serial++}`, sender: { id: from, username: `tg${from}` }, thread: { key: chat, target: { chat_id: chat } }, text: 'hello there', ...rest }
}

async function deliver(body: InboundMessage, secret = SECRET, agent = agentId) {
  return platformOf().call('POST', `/channels/loopback/${agent}`, { json: body, headers: { 'x-loopback-secret': secret }, as: null })
}

const sentTo = (chat: string) => loop().sent.filter((s) => s.target.chat_id === chat && s.agentId === agentId)
/** Everything sent to the chat as one text: the loopback cuts messages at 50 characters. */
const textTo = (chat: string, agent = agentId) =>
  loop()
    .sent.filter((s) => s.target.chat_id === chat && s.agentId === agent)
    .map((s) => s.text)
    .join(' ')

/**
 * A barrier for checks that something was *not* sent: a thread's inbox and outbox rows go one after the other, in
 * order, so once a later message in the same chat is answered, whatever the earlier ones would send has been sent.
 * Answers the barrier's own echo, to leave out of what is compared. (The sender must be one the agent answers.)
 */
async function barrier(chat: string, from = '1001'): Promise<string> {
  const text = `barrier ${serial++}`
  await deliver(message({ from, chat, text }))
  await until(() => sentTo(chat).some((s) => s.text === `Echo: ${text}`), { what: `the barrier message in ${chat} to be answered` })
  return `Echo: ${text}`
}

async function makeAgent(name: string, channel: Record<string, unknown> = {}) {
  const reply = await platformOf().call('POST', '/api/v1/AgentConfigRecord', {
    json: { name, runner: 'echo', model: 'echo-1', channels: { telegram: { bot_token_secret: 'loop/secret', ...channel } } },
  })
  expect(reply.status).toBe(201)
  return reply.body.id as string
}

async function link(user: Principal, platformUserId: string) {
  const reply = await platformOf().call('POST', '/api/v1/UserPlatform', { json: { user_id: user.userId, platform: 'telegram', platform_user_id: platformUserId } })
  expect(reply.status).toBe(201)
}

beforeAll(async () => {
  const platform = platformOf()
  // The shipped telegram plugin is switched off: the loopback serves the platform instead.
  expect((await platform.call('POST', '/api/plugins/channel-telegram/disable')).status).toBe(200)
  const secret = await platform.call('PUT', '/api/vault/secrets', { json: { scope: 'company', name: 'loop/secret', value: SECRET } })
  expect(secret.status).toBe(200)
  agentId = await makeAgent('courier')
  person = await platform.createUser()
  await link(person, '1001')
})

beforeEach(() => {
  loop().failures.clear()
})

describe('an agent whose web chat channel is off', () => {
  test('still answers on its other channels', async () => {
    const reply = await platformOf().call('POST', '/api/v1/AgentConfigRecord', {
      json: { name: 'no-web', runner: 'echo', model: 'echo-1', channels: { webchat: { enabled: false }, telegram: { bot_token_secret: 'loop/secret' } } },
    })
    expect(reply.status).toBe(201)
    const noWeb = reply.body.id as string
    await deliver(message({ chat: 'c-no-web', text: 'by phone' }), SECRET, noWeb)
    await until(() => textTo('c-no-web', noWeb) === 'Echo: by phone', { what: 'the answer on the channel' })
  })
})

describe('a budget', () => {
  test('nearly spent: the person is told on their channel, and answered; spent: told why there is no answer', async () => {
    const platform = platformOf()
    const someone = await platform.createUser()
    await link(someone, '3003')
    const made = await platform.call('POST', '/api/v1/Budget', { json: { user_id: someone.userId, metric: 'tokens', monthly_limit: 100 } })
    expect(made.status).toBe(201)
    const spend = (tokens: number) =>
      platform.store.db.insertInto('usage_records').values({ id: Bun.randomUUIDv7(), company_id: platform.root.companyId!, user_id: someone.userId, source: 'rlm', runner: 'echo', model: 'echo-1', input_tokens: tokens }).execute()
    await spend(85)
    platform.services.budgets.charged(platform.root.companyId!)
    await deliver(message({ from: '3003', chat: 'c-budget', text: 'still here?' }))
    await until(() => textTo('c-budget').includes('Echo: still here?'), { what: 'the answer' })
    expect(textTo('c-budget')).toContain('Your monthly budget is 85 % used (85 tokens of 100 tokens).')

    await spend(20)
    platform.services.budgets.charged(platform.root.companyId!)
    await deliver(message({ from: '3003', chat: 'c-budget-spent', text: 'and now?' }))
    await until(() => textTo('c-budget-spent').includes('Work resumes'), { what: 'the refusal' })
    // 85 + 20 seeded, and what the echo turn itself counted.
    expect(textTo('c-budget-spent')).toMatch(/^courier could not answer: Your monthly budget is spent: 1\d\d tokens of 100 tokens this month\. Work resumes on \d{4}-\d\d-01/)
    expect(textTo('c-budget-spent')).not.toContain('Echo')
  })
})

describe('a delivery', () => {
  test('is answered as the linked person, in the conversation of its thread, and the platform hears it typed', async () => {
    const typedBefore = loop().typing
    const reply = await deliver(message({ chat: 'c-answer', text: 'what time is it' }))
    expect(reply.status).toBe(200)
    expect(reply.body).toEqual({ fresh: true })
    const sent = await until(() => sentTo('c-answer')[0], { what: 'the answer to reach the platform' })
    expect(sent.text).toBe('Echo: what time is it')
    expect(loop().typing).toBeGreaterThan(typedBefore)

    // The conversation is the person's own, in their web chat too.
    const thread = await platformOf().store.db.selectFrom('channel_threads').selectAll().where('thread_key', '=', 'c-answer').executeTakeFirstOrThrow()
    expect(thread.user_id).toBe(person.userId)
    const mine = await platformOf().call('GET', `/api/v1/WebchatConversation/${thread.conversation_id}`, { as: person })
    expect(mine.status).toBe(200)
    const messages = await platformOf().store.db.selectFrom('webchat_messages').select(['role', 'text', 'sender_id']).where('conversation_id', '=', thread.conversation_id).orderBy('created_at').execute()
    expect(messages).toMatchObject([{ role: 'user', text: 'what time is it', sender_id: person.userId }, { role: 'agent', text: 'Echo: what time is it' }])
  })

  test('of the same thread continues its conversation; another thread starts another', async () => {
    await deliver(message({ chat: 'c-thread', text: 'first' }))
    await until(() => sentTo('c-thread').length === 1, { what: 'the first answer' })
    await deliver(message({ chat: 'c-thread', text: 'second' }))
    await until(() => sentTo('c-thread').length === 2, { what: 'the second answer' })
    await deliver(message({ chat: 'c-other', text: 'elsewhere' }))
    await until(() => sentTo('c-other').length === 1, { what: 'the other thread’s answer' })
    const threads = await platformOf().store.db.selectFrom('channel_threads').select(['thread_key', 'conversation_id']).where('thread_key', 'in', ['c-thread', 'c-other']).execute()
    expect(threads).toHaveLength(2)
    expect(threads[0]!.conversation_id).not.toBe(threads[1]!.conversation_id)
    const id = threads.find((t) => t.thread_key === 'c-thread')!.conversation_id
    const count = await platformOf().store.db.selectFrom('webchat_messages').select((eb) => eb.fn.countAll<number>().as('n')).where('conversation_id', '=', id).executeTakeFirstOrThrow()
    expect(Number(count.n)).toBe(4)
  })

  test('with a thread key longer than an index holds (an email’s References) is answered in its thread', async () => {
    const chat = `c-long-key-${'x'.repeat(5000)}`
    await deliver(message({ chat, text: 'long key' }))
    const sent = await until(() => sentTo(chat)[0], { what: 'the answer' })
    expect(sent.text).toBe('Echo: long key')
    await deliver(message({ chat, text: 'again' }))
    await until(() => sentTo(chat).length === 2, { what: 'the second answer' })
    const threads = await platformOf().store.db.selectFrom('channel_threads').select('thread_key').where('thread_key', 'like', 'sha256:%').execute()
    expect(threads).toHaveLength(1)
  })

  test('seen before (the platform retried) is acknowledged and not answered again', async () => {
    const once = message({ chat: 'c-replay', text: 'only once' })
    expect((await deliver(once)).body).toEqual({ fresh: true })
    expect((await deliver(once)).body).toEqual({ fresh: false })
    await until(() => sentTo('c-replay').length === 1, { what: 'the answer' })
    // A third copy while the first was answered: still one answer, one stored user message.
    expect((await deliver(once)).body).toEqual({ fresh: false })
    const after = await barrier('c-replay')
    expect(sentTo('c-replay').map((s) => s.text)).toEqual(['Echo: only once', after])
    const rows = await platformOf().store.db.selectFrom('channel_inbox').select('status').where('delivery_id', '=', once.deliveryId).execute()
    expect(rows).toEqual([{ status: 'done' }])
  })

  test('with a bad or missing signature is refused and nothing is kept', async () => {
    const forged = message({ chat: 'c-forged' })
    expectProblem(await deliver(forged, 'not-the-secret'), 401, 'unauthorized')
    expectProblem(await platformOf().call('POST', `/channels/loopback/${agentId}`, { json: forged, as: null }), 401, 'unauthorized')
    const kept = await platformOf().store.db.selectFrom('channel_inbox').select('id').where('delivery_id', '=', forged.deliveryId).execute()
    expect(kept).toEqual([])
    const after = await barrier('c-forged')
    expect(sentTo('c-forged').map((s) => s.text)).toEqual([after])
  })

  test('to an agent that is disabled, unknown, or has the channel off finds no channel', async () => {
    const off = await makeAgent('courier-off', { enabled: false })
    expectProblem(await deliver(message(), SECRET, off), 404, 'not_found')
    expectProblem(await deliver(message(), SECRET, '01936f3e-6d2a-7c41-9b1e-2f3a4b5c6d7e'), 404, 'not_found')
    expectProblem(await deliver(message(), SECRET, 'not-a-uuid'), 404, 'not_found')
  })
})

describe('a stranger', () => {
  test('is invited to link their account, and no turn runs', async () => {
    await deliver(message({ from: '2002', chat: 'c-stranger', text: 'hi' }))
    const invitation = await until(() => textTo('c-stranger').includes('/link') && textTo('c-stranger'), { what: 'the invitation' })
    expect(invitation).toContain('/me/channels')
    const threads = await platformOf().store.db.selectFrom('channel_threads').select('id').where('thread_key', '=', 'c-stranger').execute()
    expect(threads).toEqual([])
  })

  test('who keeps writing is told once an hour, not after every message', async () => {
    await deliver(message({ from: '2012', chat: 'c-pest', text: 'one' }))
    await deliver(message({ from: '2012', chat: 'c-pest', text: 'two' }))
    await deliver(message({ from: '2012', chat: 'c-pest', text: 'three' }))
    await until(async () => (await platformOf().store.db.selectFrom('channel_inbox').select('status').where('thread_key', '=', 'c-pest').execute()).every((r) => r.status === 'done'), {
      what: 'the three messages to be handled',
    })
    await until(() => textTo('c-pest').includes('/link'), { what: 'the invitation' })
    expect(textTo('c-pest').match(/Hello!/g)).toHaveLength(1)
  })

  test('is only refused when the agent says so', async () => {
    const refusing = await makeAgent('courier-strict', { unknown_senders: 'refuse' })
    await deliver(message({ from: '2003', chat: 'c-refused' }), SECRET, refusing)
    const refusal = await until(() => textTo('c-refused', refusing).endsWith('one it knows.') && textTo('c-refused', refusing), { what: 'the refusal' })
    expect(refusal).toContain('only talks to the people of its organisation')
    expect(refusal).not.toContain('/link')
  })

  test('that the platform cannot vouch for is not answered at all, and the console hears of it', async () => {
    // A linked identity, claimed by a message whose sender the platform did not authenticate (a forged From).
    await deliver(message({ from: '1001', chat: 'c-unverified', sender: { id: '1001', verified: false } }))
    await until(
      async () => (await platformOf().store.db.selectFrom('channel_status').select('last_error').where('agent_id', '=', agentId).executeTakeFirst())?.last_error?.includes('not authenticated'),
      { what: 'the error to be recorded' },
    )
    const after = await barrier('c-unverified')
    expect(sentTo('c-unverified').map((s) => s.text)).toEqual([after])
  })

  test('links their account with a code from /me, then speaks as that person', async () => {
    const newcomer = await platformOf().createUser()
    const issued = await platformOf().call('POST', '/api/me/channel-links', { as: newcomer })
    expect(issued.status).toBe(201)
    expect(issued.body.code).toMatch(/^[0-9A-Z]{5}-[0-9A-Z]{5}$/)

    // Telegram's deep link arrives as "/start CODE"; lower case and no dash work too.
    await deliver(message({ from: '3003', chat: 'c-link', text: `/start ${issued.body.code.replace('-', '').toLowerCase()}` }))
    await until(() => textTo('c-link').endsWith('anything.'), { what: 'the link confirmation' })
    expect(textTo('c-link')).toStartWith('Linked')
    const confirmation = sentTo('c-link').length
    const links = await platformOf().call('GET', '/api/me/platforms', { as: newcomer })
    expect(links.body.data).toMatchObject([{ platform: 'telegram', platform_user_id: '3003', user_id: newcomer.userId }])

    await deliver(message({ from: '3003', chat: 'c-link', text: 'now me' }))
    await until(() => sentTo('c-link').length === confirmation + 1, { what: 'the answer as the linked person' })
    expect(sentTo('c-link').at(-1)!.text).toBe('Echo: now me')
    const thread = await platformOf().store.db.selectFrom('channel_threads').select('user_id').where('thread_key', '=', 'c-link').executeTakeFirstOrThrow()
    expect(thread.user_id).toBe(newcomer.userId)

    // The code worked once.
    await deliver(message({ from: '3004', chat: 'c-link-again', text: `/link ${issued.body.code}` }))
    await until(() => textTo('c-link-again').includes('not valid'), { what: 'the refusal of a used code' })
  })

  test('cannot link with an expired code or another company’s code', async () => {
    const newcomer = await platformOf().createUser()
    const { body } = await platformOf().call('POST', '/api/me/channel-links', { as: newcomer })
    await platformOf().store.db.updateTable('channel_link_codes').set({ expires_at: new Date(Date.now() - 1000) }).where('user_id', '=', newcomer.userId).execute()
    await deliver(message({ from: '4004', chat: 'c-expired', text: `/link ${body.code}` }))
    await until(() => textTo('c-expired').includes('not valid'), { what: 'the refusal of an expired code' })

    const otherCompany = await platformOf().createCompany()
    const outsider = await platformOf().createUser({ companyId: otherCompany })
    const foreign = await platformOf().call('POST', '/api/me/channel-links', { as: outsider })
    expect(foreign.status).toBe(201)
    await deliver(message({ from: '4005', chat: 'c-foreign', text: `/link ${foreign.body.code}` }))
    await until(() => textTo('c-foreign').includes('not valid'), { what: 'the refusal of another company’s code' })
    const links = await platformOf().store.db.selectFrom('user_platforms').select('id').where('platform_user_id', 'in', ['4004', '4005']).execute()
    expect(links).toEqual([])
  })
})

describe('a reply', () => {
  test('that fails twice, then goes through, is delivered once', async () => {
    loop().failures.set('c-outage', ['retry', 'retry'])
    await deliver(message({ chat: 'c-outage', text: 'through the outage' }))
    await until(() => sentTo('c-outage').length > 0, { what: 'the answer after two failures' })
    const after = await barrier('c-outage')
    expect(sentTo('c-outage').map((s) => s.text)).toEqual(['Echo: through the outage', after])
    const row = await platformOf().store.db.selectFrom('channel_outbox').select(['status', 'attempts']).where('thread_key', '=', 'c-outage').orderBy('created_at').executeTakeFirstOrThrow()
    expect(row).toEqual({ status: 'sent', attempts: 3 })
  })

  test('longer than the platform takes is cut into messages, and a failure midway resends only what is left', async () => {
    const words = Array.from({ length: 24 }, (_, i) => `word${i}`).join(' ')
    // The first part goes, the second fails once: the retry starts from the second.
    loop().failures.set('c-long', ['ok', 'retry'])
    const sentBefore = loop().sent.length
    await deliver(message({ chat: 'c-long', text: words }))
    await until(() => sentTo('c-long').map((s) => s.text).join(' ') === `Echo: ${words}`, { what: 'every part, in order' })
    const parts = sentTo('c-long').map((s) => s.text)
    expect(parts.length).toBeGreaterThan(3)
    for (const part of parts) expect(part.length).toBeLessThanOrEqual(50)
    expect(new Set(parts).size).toBe(parts.length)
    expect(loop().sent.length - sentBefore).toBe(parts.length)
  })

  test('the platform refuses for good is kept as failed, and the agent’s page says so', async () => {
    loop().failures.set('c-refuse', ['refuse'])
    await deliver(message({ chat: 'c-refuse', text: 'nowhere to go' }))
    await until(
      async () => (await platformOf().store.db.selectFrom('channel_outbox').select('status').where('thread_key', '=', 'c-refuse').executeTakeFirst())?.status === 'failed',
      { what: 'the reply to be failed' },
    )
    const row = await platformOf().store.db.selectFrom('channel_outbox').select(['last_error', 'attempts']).where('thread_key', '=', 'c-refuse').executeTakeFirstOrThrow()
    expect(row).toEqual({ last_error: 'chat not found', attempts: 1 })
    const states = await platformOf().call('GET', `/api/agents/${agentId}/channels`)
    expect(states.status).toBe(200)
    expect(states.body.data).toMatchObject([
      {
        platform: 'telegram',
        configured: true,
        plugin: { name: 'channel-loopback', enabled: true },
        webhook_url: expect.stringContaining(`/channels/loopback/${agentId}`),
        reachable: true,
        last_error: 'Sending failed: chat not found',
      },
    ])
    expect(states.body.data[0]!.failed_replies).toBeGreaterThanOrEqual(1)
    expect(states.body.data[0]!.last_delivery_at).toBeString()
  })

  test('said later in a channel’s conversation (a task’s result) reaches the platform too', async () => {
    await deliver(message({ chat: 'c-later', text: 'start' }))
    await until(() => sentTo('c-later').length === 1, { what: 'the first answer' })
    const thread = await platformOf().store.db.selectFrom('channel_threads').select('conversation_id').where('thread_key', '=', 'c-later').executeTakeFirstOrThrow()
    const event = { type: 'message', text: 'The task is done.', agent: 'courier', message_id: Bun.randomUUIDv7(), task_id: Bun.randomUUIDv7() } as const
    await platformOf().services.events.publish('chat.event', { conversation_id: thread.conversation_id, event })
    await platformOf().services.events.publish('chat.event', { conversation_id: thread.conversation_id, event })
    await until(() => sentTo('c-later').length === 2, { what: 'the later message' })
    const after = await barrier('c-later')
    expect(sentTo('c-later').map((s) => s.text)).toEqual(['Echo: start', 'The task is done.', after])
  })
})

describe('an agent’s channel settings', () => {
  test('stay an admin’s to change, even where a rule lets members edit agents', async () => {
    const platform = platformOf()
    const acl = await platform.call('POST', '/api/v1/ModelAcl', { json: { model: 'AgentConfigRecord', verb: 'update', min_role: 'member' } })
    expect(acl.status).toBe(201)
    try {
      const path = `/api/v1/AgentConfigRecord/${agentId}` as const
      expect((await platform.call('PATCH', path, { json: { description: 'a member may say this' }, as: person })).status).toBe(200)
      expectProblem(await platform.call('PATCH', path, { json: { channels: { telegram: { bot_token_secret: 'mine/secret' } } }, as: person }), 403, 'forbidden')
      expectProblem(await platform.call('PATCH', path, { json: { email: { authserv_id: 'mx.attacker.example' } }, as: person }), 403, 'forbidden')
      // Saying what an absent web chat setting means already (on), as the console's form does, changes nothing.
      expect((await platform.call('PATCH', path, { json: { channels: { webchat: { enabled: true } } }, as: person })).status).toBe(200)
      expectProblem(await platform.call('PATCH', path, { json: { channels: { webchat: { enabled: false } } }, as: person }), 403, 'forbidden')
      const agent = await platform.call('GET', path)
      expect(agent.body.channels?.telegram?.bot_token_secret).toBe('loop/secret')
      expect(agent.body.email?.authserv_id).toBeUndefined()
    } finally {
      expect((await platform.call('DELETE', `/api/v1/ModelAcl/${acl.body.id}`)).status).toBe(204)
    }
  })
})

describe('GET /api/agents/{id}/channels', () => {
  test('answers 401 without credentials, 403 to a member, 404 for another company’s agent or a malformed id', async () => {
    const platform = platformOf()
    expectProblem(await platform.call('GET', `/api/agents/${agentId}/channels`, { as: null }), 401, 'unauthorized')
    expectProblem(await platform.call('GET', `/api/agents/${agentId}/channels`, { as: person }), 403, 'forbidden')
    const otherCompany = await platform.createCompany()
    const otherAdmin = await platform.createUser({ companyId: otherCompany, role: 'admin' })
    expectProblem(await platform.call('GET', `/api/agents/${agentId}/channels`, { as: otherAdmin }), 404, 'not_found')
    expectProblem(await platform.call('GET', '/api/agents/nope/channels'), 404, 'not_found')
  })

  test('lists nothing for an agent without channels', async () => {
    const plain = await platformOf().call('POST', '/api/v1/AgentConfigRecord', { json: { name: 'no-channels', runner: 'echo', model: 'echo-1' } })
    const states = await platformOf().call('GET', `/api/agents/${plain.body.id}/channels`)
    expect(states.body).toEqual({ data: [] })
  })
})

describe('/api/me/channel-links and /api/me/platforms', () => {
  test('need a signed-in member of a company', async () => {
    expectProblem(await platformOf().call('POST', '/api/me/channel-links', { as: null }), 401, 'unauthorized')
    expectProblem(await platformOf().call('GET', '/api/me/platforms', { as: null }), 401, 'unauthorized')
    const loner = await platformOf().createUser({ companyId: null })
    expectProblem(await platformOf().call('POST', '/api/me/channel-links', { as: loner }), 403, 'forbidden')
  })

  test('a person unlinks their own account, and not someone else’s', async () => {
    const owner = await platformOf().createUser()
    const other = await platformOf().createUser()
    await link(owner, '5005')
    const mine = (await platformOf().call('GET', '/api/me/platforms', { as: owner })).body.data[0]!
    expect((await platformOf().call('GET', '/api/me/platforms', { as: other })).body.data).toEqual([])
    expectProblem(await platformOf().call('DELETE', `/api/me/platforms/${mine.id}`, { as: other }), 404, 'not_found')
    expectProblem(await platformOf().call('DELETE', '/api/me/platforms/not-an-id', { as: owner }), 404, 'not_found')
    expect((await platformOf().call('DELETE', `/api/me/platforms/${mine.id}`, { as: owner })).status).toBe(204)
    expect((await platformOf().call('GET', '/api/me/platforms', { as: owner })).body.data).toEqual([])
  })
})

/** An agent on the loopback channel in a company of its own, whose owner keeps `secret` under the same name as ours. */
async function agentOfAnotherCompany(name: string, secret: string): Promise<{ companyId: string; agentId: string }> {
  const companyId = await platformOf().createCompany()
  const owner = await platformOf().createUser({ companyId, role: 'owner' })
  const agent = await platformOf().call('POST', '/api/v1/AgentConfigRecord', {
    as: owner,
    json: { name, runner: 'echo', model: 'echo-1', channels: { telegram: { bot_token_secret: 'loop/secret' } } },
  })
  expect(agent.status).toBe(201)
  expect(agent.body.company_id).toBe(companyId)
  expect((await platformOf().call('PUT', '/api/vault/secrets', { as: owner, json: { scope: 'company', owner_id: companyId, name: 'loop/secret', value: secret } })).status).toBe(200)
  return { companyId, agentId: agent.body.id }
}

describe('link codes guessed from a platform', () => {
  const tryCode = (from: string, code: string, agent = agentId) => deliver(message({ from, chat: `c-guess-${from}`, text: `/link ${code}` }), SECRET, agent)
  const answered = (from: string, agent = agentId) => loop().sent.filter((s) => s.target.chat_id === `c-guess-${from}` && s.agentId === agent).map((s) => s.text).join(' ')

  test(`one account may get ${LINK_TRIES_PER_ACCOUNT.burst} wrong in an hour; then even a right code waits, and it is told so once`, async () => {
    for (let i = 0; i < LINK_TRIES_PER_ACCOUNT.burst; i++) {
      await tryCode('6006', `AAAAA-0000${i}`)
      await until(() => answered('6006').split('not valid').length - 1 === i + 1, { what: `the refusal of wrong code ${i + 1}` })
    }
    const victim = await platformOf().createUser()
    const { body } = await platformOf().call('POST', '/api/me/channel-links', { as: victim })
    await tryCode('6006', body.code)
    await tryCode('6006', 'AAAAA-11111')
    await until(() => answered('6006').includes('Too many'), { what: 'the limit named' })
    // The barrier: a plain message after the codes, answered in order with the stranger's invitation.
    await deliver(message({ from: '6006', chat: 'c-guess-6006', text: 'hello?' }))
    await until(() => answered('6006').includes('does not know this'), { what: 'the answer to a message after the codes' })
    expect(answered('6006').split('Too many').length - 1).toBe(1)
    expect(answered('6006')).not.toContain('Linked')
    // The code was never tried, so it still works for its owner from another account.
    await tryCode('6007', body.code)
    await until(() => answered('6007').includes('Linked'), { what: 'the link from another account' })
  })

  test(`a company's accounts together may get ${LINK_TRIES_PER_COMPANY.burst} wrong in an hour; a code that works uses none of it`, async () => {
    // A company of its own, so the limit spent here is no other test's.
    const { companyId, agentId } = await agentOfAnotherCompany('guarded', SECRET)
    const member = await platformOf().createUser({ companyId })
    const right = await platformOf().call('POST', '/api/me/channel-links', { as: member })
    await tryCode('7000', right.body.code, agentId)
    await until(() => answered('7000', agentId).includes('Linked'), { what: 'a link that works' })

    for (let i = 1; i <= LINK_TRIES_PER_COMPANY.burst; i++) await tryCode(`7${String(i).padStart(3, '0')}`, `BBBBB-${String(i).padStart(5, '0')}`, agentId)
    await until(() => loop().sent.filter((s) => s.agentId === agentId && s.text.includes('not valid')).length === LINK_TRIES_PER_COMPANY.burst, {
      what: 'every wrong code refused',
      timeoutMs: 20_000,
    })
    const late = await platformOf().createUser({ companyId })
    const code = await platformOf().call('POST', '/api/me/channel-links', { as: late })
    await tryCode('7999', code.body.code, agentId)
    await until(() => answered('7999', agentId).includes('Too many'), { what: 'the company-wide limit' })
  })
})

describe('another company on the same platform', () => {
  test('its agent refuses deliveries signed with this company’s secret, and treats this company’s linked people as strangers', async () => {
    const theirSecret = 'another-company-secret'
    const { agentId } = await agentOfAnotherCompany('elsewhere', theirSecret)

    // Our secret (the same name in our vault) opens only our agent's door.
    const crossSigned = message({ from: '1001', chat: 'c-cross', text: 'signed by the wrong company' })
    expectProblem(await deliver(crossSigned, SECRET, agentId), 401, 'unauthorized')
    const kept = await platformOf().store.db.selectFrom('channel_inbox').select('id').where('agent_id', '=', agentId).execute()
    expect(kept).toEqual([])

    // 1001 is linked to one of our people; to their agent, that account is nobody.
    expect((await deliver(message({ from: '1001', chat: 'c-cross', text: 'who am I there?' }), theirSecret, agentId)).status).toBe(200)
    await until(() => textTo('c-cross', agentId).includes('does not know'), { what: 'the stranger’s invitation' })
    expect(textTo('c-cross', agentId)).not.toContain('Echo')
    const conversations = await platformOf().store.db.selectFrom('channel_threads').select('user_id').where('agent_id', '=', agentId).execute()
    expect(conversations).toEqual([])
  })
})

describe('speaking as someone else', () => {
  test('an admin cannot link a member to a platform account the admin holds: it takes the member’s own code', async () => {
    const companyAdmin = await platformOf().createUser({ role: 'admin' })
    const member = await platformOf().createUser()
    const made = await platformOf().call('POST', '/api/v1/UserPlatform', { as: companyAdmin, json: { user_id: member.userId, platform: 'telegram', platform_user_id: '8008' } })
    expectProblem(made, 403, 'forbidden')
    // Nor by moving an existing link (the admin's own) onto the member.
    await link(companyAdmin, '8009')
    const own = (await platformOf().call('GET', `/api/v1/UserPlatform?platform_user_id=eq.8009`, { as: companyAdmin })).body.data[0]!
    expectProblem(await platformOf().call('PATCH', `/api/v1/UserPlatform/${own.id}`, { as: companyAdmin, json: { user_id: member.userId } }), 403, 'forbidden')

    // From the account the admin holds, the agent hears a stranger, not the member.
    await deliver(message({ from: '8008', chat: 'c-impostor', text: 'as the member, please' }))
    await until(() => textTo('c-impostor').includes('does not know'), { what: 'the stranger’s invitation' })
    expect(textTo('c-impostor')).not.toContain('Echo')
  })
})
