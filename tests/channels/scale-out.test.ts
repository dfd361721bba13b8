import { afterAll, expect, test } from 'bun:test'
import { CLUSTER_NEEDS_POSTGRES, useCluster } from '../helpers/cluster.ts'
import { TEST_DATABASE_URL } from '../helpers/database.ts'
import { startFakeTelegram } from '../fixtures/channels/telegram-api.ts'
import { until } from '../helpers/until.ts'

// Platforms retry a delivery they think was lost, and a balancer may hand each try to another process: two
// platform processes on one PostgreSQL must answer it once, and a reply that fails must be retried by one of them
// only.

const TOKEN = '7000000001:AAscale-out-bot-token'
const HOOK_SECRET = 'scale-out-webhook-secret'
const telegram = startFakeTelegram()
telegram.addBot(TOKEN)
afterAll(() => telegram.stop())

const cluster = useCluster({
  processes: 2,
  env: { SWITCHBOARD_PLUGIN_CHANNEL_TELEGRAM_API_BASE_URL: telegram.url, SWITCHBOARD_CHANNEL_RETRY_MS: '50' },
})

const name = 'two processes receiving the same retried delivery answer it once; a failing reply is retried once over'
if (!TEST_DATABASE_URL) test.skip(`${name} (${CLUSTER_NEEDS_POSTGRES})`, () => {})
else
  test(
    name,
    async () => {
      const c = cluster()
      try {
        for (const [secret, value] of [
          ['tg/token', TOKEN],
          ['tg/hook', HOOK_SECRET],
        ]) {
          expect((await c.call(c.url, 'PUT', '/api/vault/secrets', { json: { scope: 'company', name: secret, value } })).status).toBe(200)
        }
        const agent = await c.call(c.url, 'POST', '/api/v1/AgentConfigRecord', {
          json: { name: 'scaled', runner: 'echo', model: 'echo-1', channels: { telegram: { bot_token_secret: 'tg/token', webhook_secret_secret: 'tg/hook' } } },
        })
        expect(agent.status).toBe(201)
        const member = await c.addMember()
        const link = await c.call(c.url, 'POST', '/api/v1/UserPlatform', { json: { user_id: member.userId, platform: 'telegram', platform_user_id: '555001' } })
        expect(link.status).toBe(201)

        const [a, b] = c.processes.map((p) => p.api)
        const deliver = (base: string, body: string) =>
          fetch(`${base}/channels/telegram/${agent.body.id}`, {
            method: 'POST',
            headers: { 'content-type': 'application/json', 'x-telegram-bot-api-secret-token': HOOK_SECRET },
            body,
          })

        // The same update at both processes at once, then once more at each (Telegram's retries).
        const update = JSON.stringify(telegram.update({ text: 'once, please', from: { id: 555001 } }))
        const first = await Promise.all([deliver(a!, update), deliver(b!, update)])
        expect(first.map((r) => r.status)).toEqual([200, 200])
        expect((await deliver(a!, update)).status).toBe(200)
        expect((await deliver(b!, update)).status).toBe(200)
        await until(() => telegram.sent(TOKEN, 555001).length > 0, { what: 'the answer', timeoutMs: 15_000 })
        // A barrier: the chat's messages are answered one after the other, in order, whichever process takes them,
        // so once a later message is answered, a second answer to the first would have gone out before it.
        const barrier = async (text: string) => {
          expect((await deliver(a!, JSON.stringify(telegram.update({ text, from: { id: 555001 } })))).status).toBe(200)
          await until(() => telegram.sent(TOKEN, 555001).some((m) => m.text === `Echo: ${text}`), { what: `the answer to "${text}"`, timeoutMs: 15_000 })
        }
        await barrier('first barrier')
        expect(telegram.sent(TOKEN, 555001).map((m) => m.text)).toEqual(['Echo: once, please', 'Echo: first barrier'])

        // The next reply fails twice at the platform: whichever processes retry it, it goes out once.
        telegram.failNext(2, 502)
        const second = JSON.stringify(telegram.update({ text: 'through an outage', from: { id: 555001 } }))
        await Promise.all([deliver(a!, second), deliver(b!, second)])
        await until(() => telegram.sent(TOKEN, 555001).length > 2, { what: 'the answer after two failures', timeoutMs: 15_000 })
        await barrier('second barrier')
        expect(telegram.sent(TOKEN, 555001).map((m) => m.text)).toEqual(['Echo: once, please', 'Echo: first barrier', 'Echo: through an outage', 'Echo: second barrier'])
        const tries = telegram.calls.filter((call) => call.method === 'sendMessage' && call.params.text === 'Echo: through an outage')
        expect(tries.map((call) => call.status)).toEqual([502, 502, 200])
      } catch (error) {
        console.error(c.output().slice(-4000))
        throw error
      }
    },
    60_000,
  )
