/**
 * Channel webhook benchmark: how fast a Telegram webhook is acknowledged (Slack wants its answer within 3 s; the
 * turn must run after it, not within it), and how long until the agent's answer reaches the platform. Measured
 * in-process on the embedded store against the loopback Telegram fake, with the echo runner, in the same run as
 * a baseline: a request of the same size to an unknown agent's webhook (404 before any signature or store work).
 * A hand-run benchmark, not a test. Target: the acknowledgement stays far below Slack's 3 s (tens of ms at most).
 *
 * Run:  node_modules/.bin/bun bench/channels.ts     (BENCH_MESSAGES sets how many deliveries [200])
 */
import { startFakeTelegram } from '../tests/fixtures/channels/telegram-api.ts'
import { startTestPlatform } from '../tests/helpers/platform.ts'

const MESSAGES = Number(process.env.BENCH_MESSAGES ?? 200)
const TOKEN = '7000000042:AAbench-bot-token'
const SECRET = 'bench-webhook-secret'

const telegram = startFakeTelegram()
telegram.addBot(TOKEN)
const platform = await startTestPlatform({ SWITCHBOARD_PLUGIN_CHANNEL_TELEGRAM_API_BASE_URL: telegram.url })

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!
}
const ms = (n: number) => `${n.toFixed(2)} ms`

try {
  for (const [name, value] of [
    ['tg/token', TOKEN],
    ['tg/hook', SECRET],
  ]) {
    await platform.call('PUT', '/api/vault/secrets', { json: { scope: 'company', name, value } })
  }
  const agent = await platform.call('POST', '/api/v1/AgentConfigRecord', {
    json: { name: 'bench', runner: 'echo', model: 'echo-1', channels: { telegram: { bot_token_secret: 'tg/token', webhook_secret_secret: 'tg/hook' } } },
  })
  const person = await platform.createUser()
  await platform.call('POST', '/api/v1/UserPlatform', { json: { user_id: person.userId, platform: 'telegram', platform_user_id: '900001' } })
  const headers = { 'content-type': 'application/json', 'x-telegram-bot-api-secret-token': SECRET }

  async function timed(path: string, body: string): Promise<number> {
    const start = performance.now()
    const reply = await platform.api.request(path, { method: 'POST', headers, body }, { requestIP: () => ({ address: '192.0.2.1' }) })
    await reply.arrayBuffer()
    return performance.now() - start
  }

  const baseline: number[] = []
  const acks: number[] = []
  const sentAt = new Map<string, number>()
  for (let i = 0; i < MESSAGES; i++) {
    // Each in a group of its own: threads are answered side by side (one after the other within a thread).
    const update = JSON.stringify(telegram.update({ text: `message ${i}`, from: { id: 900_001 }, chat: { id: -1_000_000 - i, type: 'group' } }))
    baseline.push(await timed('/channels/telegram/01936f3e-6d2a-7c41-9b1e-2f3a4b5c6d7e', update))
    sentAt.set(`Echo: message ${i}`, Date.now())
    acks.push(await timed(`/channels/telegram/${agent.body.id}`, update))
  }
  const deadline = Date.now() + 120_000
  while (telegram.sent(TOKEN).length < MESSAGES && Date.now() < deadline) await Bun.sleep(20)
  const answered = telegram.calls.filter((c) => c.method === 'sendMessage' && c.status === 200)
  const latencies = answered.map((c) => c.at - sentAt.get(String(c.params.text))!)

  console.log(`${MESSAGES} deliveries from one person, each in a thread of its own`)
  console.log(`baseline (unknown agent, 404)   p50 ${ms(percentile(baseline, 50))}  p95 ${ms(percentile(baseline, 95))}`)
  console.log(`webhook acknowledged (200)      p50 ${ms(percentile(acks, 50))}  p95 ${ms(percentile(acks, 95))}  ratio p50 ${(percentile(acks, 50) / percentile(baseline, 50)).toFixed(2)}x`)
  console.log(`answer at the platform          ${answered.length} of ${MESSAGES}; after its delivery p50 ${ms(percentile(latencies, 50))}  p95 ${ms(percentile(latencies, 95))}`)
} finally {
  await platform.close()
  telegram.stop()
}
