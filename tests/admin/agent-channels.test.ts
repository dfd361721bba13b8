import { beforeAll, describe, expect, test } from 'bun:test'
import { join } from 'node:path'
import { ChannelsSection } from '../../src/admin/console/agent-channels.tsx'
import { queuedReply } from '../helpers/outbox.ts'
import { HAS_CHROMIUM, launchChromium, warnWithoutChromium, watchContext, type Watched } from '../helpers/browser.ts'
import { ADMIN_PASSWORD, useStarted } from '../helpers/platform.ts'
import { signIn, startChatPlatform } from '../helpers/web-chat.ts'
import { expectProblem } from '../helpers/problem.ts'

// The Channels section of the console's agent page: read through GET /api/agents/{id}/channels, lazily, since
// asking a platform how its webhook fares may take seconds. The loopback fixture serves the telegram platform, so
// no real platform is asked; what the section shows is set in the store directly.
const FIXTURES = join(import.meta.dir, '..', 'fixtures', 'plugins', 'channels')
const htmx = { 'hx-request': 'true', 'hx-request-type': 'partial' }

warnWithoutChromium()
const platformOf = useStarted(() => startChatPlatform({ SWITCHBOARD_PLUGIN_PATHS: FIXTURES }))
let root: string

beforeAll(async () => {
  const p = platformOf()
  // The shipped telegram plugin is switched off: the loopback serves the platform instead, and asks nobody.
  expect((await p.call('POST', '/api/plugins/channel-telegram/disable')).status).toBe(200)
  expect((await p.call('PUT', '/api/vault/secrets', { json: { scope: 'company', name: 'loop/secret', value: 'loopback-secret' } })).status).toBe(200)
  root = await signIn(p.adminUrl, 'admin', ADMIN_PASSWORD)
})

async function page(path: string, { cookie = root, fragment = false }: { cookie?: string; fragment?: boolean } = {}) {
  const headers: Record<string, string> = { cookie, origin: platformOf().adminUrl, ...(fragment ? htmx : {}) }
  const response = await platformOf().admin.request(path, { headers })
  return { status: response.status, headers: response.headers, text: await response.text() }
}

async function makeAgent(channels: Record<string, unknown>, as = platformOf().root): Promise<string> {
  const reply = await platformOf().call('POST', '/api/v1/AgentConfigRecord', { json: { name: `courier-${crypto.randomUUID().slice(0, 8)}`, runner: 'echo', model: 'echo-1', channels }, as })
  expect(reply.status).toBe(201)
  return reply.body.id as string
}

const telegram = { telegram: { bot_token_secret: 'loop/secret' } }

/** The text of each cell of a platform's row, tags taken out. */
function cells(html: string, platform: string): string[] {
  const row = new RegExp(`<tr id="channel-${platform}">([^]*?)</tr>`).exec(html)?.[1]
  if (row === undefined) throw new Error(`no row for ${platform} in:\n${html}`)
  return [...row.matchAll(/<t[hd][^>]*>([^]*?)<\/t[hd]>/g)].map(([, cell]) =>
    cell!
      .replace(/<[^>]+>/g, ' ')
      .replace(/\s+/g, ' ')
      .trim(),
  )
}

async function outbox(agentId: string, status: 'pending' | 'sent' | 'failed', count: number) {
  for (let i = 0; i < count; i++) await queuedReply(platformOf().store.db, agentId, status)
}

describe('the agent page', () => {
  test('each channel of the form loads its status after the page: the webhook URL to paste, and a connection check', async () => {
    const id = await makeAgent(telegram)
    const reply = await page(`/agents/${id}`)
    expect(reply.status).toBe(200)
    const slot = /<div class="group-live"[^>]*>/.exec(reply.text)?.[0]
    expect(slot).toContain(`hx-get="/agents/${id}/channels/telegram"`)
    expect(slot).toContain('hx-trigger="load"')
    // The page itself does not wait for the platforms, and a channel not set up has no status to load.
    expect(reply.text).not.toContain('id="webhook-telegram"')
    expect(reply.text).not.toContain(`/agents/${id}/channels/slack"`)

    const status = await page(`/agents/${id}/channels/telegram`, { fragment: true })
    expect(status.status).toBe(200)
    expect(status.text).not.toContain('<!DOCTYPE')
    const webhook = `${platformOf().services.config.baseUrl}/channels/loopback/${id}`
    expect(status.text).toContain(`<input id="webhook-telegram" type="text" readonly="" value="${webhook}"/>`)
    expect(status.text).toContain('No signed request from the platform yet.')
    // The check asks again, in place, without submitting the form it stands in.
    expect(status.text).toContain(`<button type="button" hx-get="/agents/${id}/channels/telegram" hx-target="closest .group-live" hx-swap="innerHTML">Check the connection</button>`)

    // A platform the agent has no settings for says how to get them; an unknown one, or another company's agent, is not found.
    expect((await page(`/agents/${id}/channels/slack`, { fragment: true })).text).toContain('Saved settings show here')
    expect((await page(`/agents/${id}/channels/discord`, { fragment: true })).status).toBe(404)
    expect((await page(`/agents/not-an-id/channels/telegram`, { fragment: true })).status).toBe(404)
  })

  test('the API answers for one platform when asked', async () => {
    const id = await makeAgent({ ...telegram, email: {} })
    const both = await platformOf().call('GET', `/api/agents/${id}/channels`)
    expect(both.body.data.map((s: { platform: string }) => s.platform)).toEqual(['telegram', 'email'])
    const one = await platformOf().call('GET', `/api/agents/${id}/channels?platform=email`)
    expect(one.body.data.map((s: { platform: string }) => s.platform)).toEqual(['email'])
    expect((await platformOf().call('GET', `/api/agents/${id}/channels?platform=slack`)).body.data).toEqual([])
    expectProblem(await platformOf().call('GET', `/api/agents/${id}/channels?platform=discord`), 400, 'bad_request')
  })

  test('the section shows each platform with the values from the store', async () => {
    const id = await makeAgent(telegram)
    const { db } = platformOf().store
    const { company_id } = await db.selectFrom('agent_configs').select('company_id').where('id', '=', id).executeTakeFirstOrThrow()
    await db
      .insertInto('channel_status')
      .values({
        agent_id: id,
        platform: 'telegram',
        company_id,
        last_seen_at: new Date('2030-01-02T03:04:05.000Z'),
        last_delivery_at: new Date('2030-01-02T03:04:06.000Z'),
        last_error: 'Telegram answered 401: Unauthorized',
        last_error_at: new Date('2030-01-02T03:04:07.000Z'),
      })
      .execute()
    await outbox(id, 'pending', 2)
    await outbox(id, 'failed', 3)
    await outbox(id, 'sent', 4)

    const reply = await page(`/agents/${id}/channels`, { fragment: true })
    expect(reply.status).toBe(200)
    expect(reply.text).toStartWith('<section id="channels"')
    expect(reply.text).not.toContain('<!DOCTYPE')
    const webhook = `${platformOf().services.config.baseUrl}/channels/loopback/${id}`
    expect(cells(reply.text, 'telegram')).toEqual([
      'Telegram',
      'yes',
      'channel-loopback',
      'yes Last signed request 2030-01-02T03:04:05.000Z.',
      '2030-01-02 03:04 UTC',
      'Telegram answered 401: Unauthorized 2030-01-02 03:04 UTC',
      '2',
      '3',
    ])
    // Times carry their exact moment, for the page's script to say in the reader's zone.
    expect(reply.text).toContain('<time datetime="2030-01-02T03:04:06.000Z">2030-01-02 03:04 UTC</time>')
    // The URL is there to be copied: a read-only field, whole, with its label.
    expect(reply.text).toContain(`<label for="webhook-telegram">Telegram webhook URL</label><input id="webhook-telegram" type="text" readonly="" value="${webhook}"/>`)
    // Refreshing asks again, in place.
    expect(reply.text).toMatch(new RegExp(`<form method="get" action="/agents/${id}/channels" hx-get="/agents/${id}/channels" hx-target="#channels" hx-swap="outerHTML">`))
  })

  test('a channel not heard from yet says so', async () => {
    const id = await makeAgent(telegram)
    const reply = await page(`/agents/${id}/channels`, { fragment: true })
    expect(cells(reply.text, 'telegram').slice(3)).toEqual(['not yet known No signed request from the platform yet.', 'never', 'none', '0', '0'])
  })

  test('a channel switched off in the settings is not configured; a plugin switched off says off', async () => {
    const id = await makeAgent({ telegram: { ...telegram.telegram, enabled: false } })
    expect(cells((await page(`/agents/${id}/channels`, { fragment: true })).text, 'telegram').slice(1, 2)).toEqual(['no'])

    const on = await makeAgent(telegram)
    expect((await platformOf().call('POST', '/api/plugins/channel-loopback/disable')).status).toBe(200)
    try {
      const reply = await page(`/agents/${on}/channels`, { fragment: true })
      // Both plugins serving telegram are off now; the console names one and says it is off, with no webhook.
      expect(cells(reply.text, 'telegram')[2]).toMatch(/^channel-(loopback|telegram) \(off\)$/)
      expect(reply.text).not.toContain('id="webhook-telegram"')
    } finally {
      expect((await platformOf().call('POST', '/api/plugins/channel-loopback/enable')).status).toBe(200)
    }
  })

  test('an agent without chat platforms gets the empty state', async () => {
    for (const channels of [{}, { webchat: { enabled: true } }]) {
      const id = await makeAgent(channels)
      const reply = await page(`/agents/${id}/channels`, { fragment: true })
      expect(reply.status).toBe(200)
      expect(reply.text).toContain('This agent is on no chat platform. Set one up in the Channels part of')
      expect(reply.text).not.toContain('<table')
    }
  })

  test('what the store holds is escaped: an error text is not markup', async () => {
    const id = await makeAgent(telegram)
    const { db } = platformOf().store
    const { company_id } = await db.selectFrom('agent_configs').select('company_id').where('id', '=', id).executeTakeFirstOrThrow()
    await db.insertInto('channel_status').values({ agent_id: id, platform: 'telegram', company_id, last_error: '<script>alert(1)</script>', last_error_at: new Date() }).execute()
    const reply = await page(`/agents/${id}/channels`, { fragment: true })
    expect(reply.text).not.toContain('<script>alert(1)')
    expect(reply.text).toContain('&lt;script&gt;alert(1)&lt;/script&gt;')
  })

  test('a platform that says the webhook is not reached shows no, with its reason', async () => {
    // The loopback cannot ask a platform, so the section is rendered with what the API says for one that can.
    const html = String(
      await ChannelsSection({
        agentId: '01936f3e-6d2a-7c41-9b1e-2f3a4b5c6d7e',
        states: [
          {
            platform: 'slack',
            configured: true,
            plugin: { name: 'channel-slack', enabled: true },
            webhook_url: 'https://switchboard.example/channels/slack/x',
            reachable: false,
            reachable_detail: 'Slack says: url_verification failed.',
            last_delivery_at: null,
            last_seen_at: null,
            last_error: null,
            last_error_at: null,
            pending_replies: 0,
            failed_replies: 0,
          },
        ],
      }),
    )
    expect(cells(html, 'slack').slice(0, 4)).toEqual(['Slack', 'yes', 'channel-slack', 'no Slack says: url_verification failed.'])
  })

  test('on its own, without htmx, the section is a page with a way back to the agent', async () => {
    const id = await makeAgent(telegram)
    const reply = await page(`/agents/${id}/channels`)
    expect(reply.status).toBe(200)
    expect(reply.text).toStartWith('<!DOCTYPE html>')
    expect(reply.text).toContain(`<a href="/agents/${id}">the agent</a>`)
    expect(reply.text).toContain('id="channel-telegram"')
  })
})

describe('who may see it', () => {
  test('a member of the company is told that only admins may, as the API said', async () => {
    const id = await makeAgent(telegram)
    const member = await platformOf().createUser({ role: 'member', password: 'member-password-1' })
    const cookie = await signIn(platformOf().adminUrl, member.username, 'member-password-1')
    const api = await platformOf().call('GET', `/api/agents/${id}/channels`, { as: member })
    const refused = expectProblem(api, 403, 'forbidden')
    const reply = await page(`/agents/${id}/channels`, { cookie, fragment: true })
    expect(reply.status).toBe(403)
    expect(reply.text).toContain(`<p class="problem" role="alert">${refused.detail}</p>`)
    expect(reply.text).not.toContain('/channels/loopback/')
  })

  test('another company’s admin sees neither the agent nor its channels', async () => {
    const id = await makeAgent(telegram)
    const stranger = await platformOf().createUser({ companyId: await platformOf().createCompany(), role: 'admin', password: 'stranger-password-1' })
    const cookie = await signIn(platformOf().adminUrl, stranger.username, 'stranger-password-1')
    expect((await page(`/agents/${id}`, { cookie })).status).toBe(404)
    const reply = await page(`/agents/${id}/channels`, { cookie, fragment: true })
    expect(reply.status).toBe(404)
    expect(reply.text).toContain('No agent has this id.')
    expect(reply.text).not.toContain('/channels/loopback/')
  })

  test('a malformed id is no page; signed out, to the sign-in page', async () => {
    expect((await page('/agents/..%2Fx/channels', { fragment: true })).status).toBe(404)
    expect((await page('/agents/not-an-id/channels')).status).toBe(404)
    const id = await makeAgent(telegram)
    const anonymous = await page(`/agents/${id}/channels`, { cookie: '' })
    expect(anonymous.status).toBe(303)
    expect(anonymous.headers.get('location')).toBe(`/login?post_login_redirect=${encodeURIComponent(`/agents/${id}/channels`)}`)
  })
})

describe.skipIf(!HAS_CHROMIUM)('in Chromium', () => {
  test('a channel’s status loads into the agent’s form by itself, and the connection check asks again without saving', async () => {
    const id = await makeAgent(telegram)
    await outbox(id, 'failed', 1)
    const browser = await launchChromium()
    try {
      const watched: Watched = { violations: [], foreign: [], dialogs: [] }
      const context = await browser.newContext()
      await watchContext(context, [platformOf().adminUrl], watched)
      await context.addCookies([{ name: root.split('=')[0]!, value: root.slice(root.indexOf('=') + 1), url: platformOf().adminUrl }])
      const tab = await context.newPage()
      await tab.goto(`${platformOf().adminUrl}/agents/${id}`)
      const live = tab.locator('#record-channels-telegram-live')
      await live.locator('#webhook-telegram').waitFor()
      expect(await live.locator('dd', { hasText: ' / ' }).textContent()).toBe('0 / 1')
      const version = await tab.locator('#record-form input[name=_version]').inputValue()

      await outbox(id, 'failed', 1)
      await tab.getByRole('button', { name: 'Check the connection' }).click()
      await live.locator('dd', { hasText: '0 / 2' }).waitFor()
      // Nothing was saved: the form's version is the one it was read at, and the page did not move.
      expect(await tab.locator('#record-form input[name=_version]').inputValue()).toBe(version)
      expect(tab.url()).toBe(`${platformOf().adminUrl}/agents/${id}`)
      expect(watched).toEqual({ violations: [], foreign: [], dialogs: [] })
    } finally {
      await browser.close()
    }
  })
})
