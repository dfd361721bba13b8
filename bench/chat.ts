/**
 * Chat turn latency benchmark: time to first token and total time of a streamed answer through POST /api/chat,
 * against the same answer fetched straight from the provider, in the same run. A hand-run benchmark, not a test.
 * Target: Switchboard adds at most 2 ms at p50.
 *
 * The provider is a fake OpenAI-compatible server in this process (tests/helpers/fake-openai.ts) streaming a
 * fixed answer of 20 chunks with no delay, so what is measured is Switchboard's own work: authentication, the
 * agent and conversation reads, storing both messages, the history, the model lookup, the runner's request and
 * the NDJSON stream. Switchboard runs in its own process (bench/crud-server.ts switchboard) on PostgreSQL, with
 * the openai runner pointed at the fake. Requests are sequential and alternate between the two paths.
 *
 * Run:  node_modules/.bin/bun bench/chat.ts
 * Environment (defaults in brackets): BENCH_DATABASE_URL, BENCH_POOL [10] as in bench/harness.ts;
 *   BENCH_TURNS  measured turns per path [300]
 */
import { startFakeOpenAI } from '../tests/helpers/fake-openai.ts'
import { JSON_HEADERS, expectStatus, startServer, withApi, withDatabase } from './harness.ts'

const TURNS = Number(process.env.BENCH_TURNS ?? 300)
const WARMUP = 30
const TARGET_MS = 2
const ANSWER = Array.from({ length: 20 }, (_, i) => `word${i} `)

interface Timing {
  firstToken: number
  total: number
}

/** Reads a response body line by line until `done` says the answer ended; the time of the first `isToken` line too. */
async function timed(start: number, response: Response, split: string, isToken: (line: string) => boolean, done: (line: string) => boolean): Promise<Timing> {
  let firstToken = 0
  let buffer = ''
  for await (const chunk of response.body!.pipeThrough(new TextDecoderStream())) {
    buffer += chunk
    let end: number
    while ((end = buffer.indexOf(split)) !== -1) {
      const line = buffer.slice(0, end)
      buffer = buffer.slice(end + split.length)
      if (!firstToken && isToken(line)) firstToken = performance.now() - start
      if (done(line)) return { firstToken, total: performance.now() - start }
    }
  }
  throw new Error(`the stream ended without its last line:\n${buffer.slice(0, 300)}`)
}

function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b)
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!
}

await withDatabase(`chat turns, ${TURNS} per path`, async (env) => {
  const fake = startFakeOpenAI({ fallback: { text: ANSWER } })
  const serverEnv = { ...env, SWITCHBOARD_PLUGIN_RUNNER_OPENAI_BASE_URL: fake.url, SWITCHBOARD_PLUGIN_RUNNER_OPENAI_MODELS: 'bench:bench-model' }
  const seeded = await withApi(serverEnv, async ({ api, signIn }) => {
    const cookie = await signIn()
    const made = await api.request('/api/v1/ApiToken', { method: 'POST', headers: { ...JSON_HEADERS, cookie }, body: '{"name":"bench"}' })
    const { token } = (await (await expectStatus(made, 201, 'making a token')).json()) as { token: string }
    const auth = { ...JSON_HEADERS, authorization: `Bearer ${token}` }
    const agent = await api.request('/api/v1/AgentConfigRecord', { method: 'POST', headers: auth, body: JSON.stringify({ name: 'bench', runner: 'openai', model: 'bench' }) })
    const { id } = (await (await expectStatus(agent, 201, 'making the agent')).json()) as { id: string }
    return { token, agentId: id }
  })
  const server = await startServer({ label: 'switchboard', mode: 'switchboard', header: '' }, serverEnv)
  let conversationId: string | undefined

  const direct = async (): Promise<Timing> => {
    const start = performance.now()
    const response = await fetch(`${fake.url}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'bench-model', stream: true, messages: [{ role: 'user', content: 'hi' }] }),
    })
    return timed(start, response, '\n\n', (line) => line.includes('"content":"word'), (line) => line === 'data: [DONE]')
  }
  const viaSwitchboard = async (): Promise<Timing> => {
    const start = performance.now()
    const response = await fetch(`${server.base}/api/chat`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${seeded.token}` },
      body: JSON.stringify({ agent_id: seeded.agentId, text: 'hi', ...(conversationId ? { conversation_id: conversationId } : {}) }),
    })
    await expectStatus(response, 200, 'a chat turn')
    return timed(
      start,
      response,
      '\n',
      (line) => {
        conversationId ??= /"conversation_id":"([^"]+)"/.exec(line)?.[1]
        return line.startsWith('{"type":"stream"')
      },
      (line) => line.startsWith('{"type":"message"') || line.startsWith('{"type":"error"'),
    )
  }

  try {
    const results = { direct: [] as Timing[], switchboard: [] as Timing[] }
    for (let i = 0; i < WARMUP + TURNS; i++) {
      const [a, b] = [await direct(), await viaSwitchboard()]
      if (i >= WARMUP) {
        results.direct.push(a)
        results.switchboard.push(b)
      }
    }
    const row = (cells: string[]) => cells.map((c, i) => c.padEnd(i === 0 ? 13 : 10)).join(' ').trimEnd()
    console.log()
    console.log(row(['path', 'TTFT p50', 'p90', 'p99', 'total p50', 'p90', 'p99']))
    for (const [name, timings] of Object.entries(results)) {
      const ms = (values: number[]) => [50, 90, 99].map((p) => `${percentile(values, p).toFixed(2)}ms`)
      console.log(row([name, ...ms(timings.map((t) => t.firstToken)), ...ms(timings.map((t) => t.total))]))
    }
    const added = (pick: (t: Timing) => number) => percentile(results.switchboard.map(pick), 50) - percentile(results.direct.map(pick), 50)
    const ttft = added((t) => t.firstToken)
    const total = added((t) => t.total)
    console.log()
    console.log(`added at p50: time to first token ${ttft.toFixed(2)} ms, total ${total.toFixed(2)} ms; target ${TARGET_MS} ms ${Math.max(ttft, total) <= TARGET_MS ? 'met' : 'NOT met'}`)
  } finally {
    await server.stop()
    fake.stop()
  }
})
