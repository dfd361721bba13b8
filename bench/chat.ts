/**
 * Chat turn latency benchmark: time to first token and total time of a streamed answer through POST /api/chat,
 * against the same answer fetched straight from the provider, in the same run. A hand-run benchmark, not a test.
 * Target: Switchboard adds at most 1 ms at p50. "Streamed" is when the whole answer has reached the client
 * (stream_end); "stored" is when Switchboard has also committed it to the conversation (the final message event),
 * which the provider has no counterpart of, so the direct path's figure is the same for both.
 *
 * The provider is a fake OpenAI-compatible server in this process (tests/helpers/fake-openai.ts) streaming a
 * fixed answer of 20 chunks with no delay, so what is measured is Switchboard's own work: authentication, the
 * agent and conversation reads, storing both messages, the history, the model lookup, the runner's request and
 * the NDJSON stream. Switchboard runs in its own process (bench/crud-server.ts switchboard) on PostgreSQL, with
 * the openai runner pointed at the fake. A third path, `floor`, is the least any server of a turn adds on this
 * machine (bench/crud-server.ts chat-floor: one round trip of reads, the OpenAI SDK, NDJSON out; in a process of its
 * own too): the target is only reachable where the floor is well under it. Requests are sequential and rotate
 * between the three paths.
 *
 * Run:  node_modules/.bin/bun bench/chat.ts
 * Environment (defaults in brackets): BENCH_DATABASE_URL, BENCH_POOL [10] as in bench/harness.ts;
 *   BENCH_TURNS  measured turns per path [300]; BENCH_WARMUP_TURNS  turns per path before measuring [1000]
 */
import { recordFigure } from './results.ts'
import { startFakeOpenAI } from '../tests/helpers/fake-openai.ts'
import { JSON_HEADERS, expectStatus, setting, startServer, withApi, withDatabase } from './harness.ts'

const TURNS = Number(setting('BENCH_TURNS', '300', /^[1-9]\d*$/))
/**
 * Turns per path before any is measured, so that each server's turn runs as a server that has been up a while runs
 * it, its code optimized by the engine: after 30 turns the first token came 0.37 and 0.54 ms later on the
 * platform, and 0.19 and 0.28 ms later on the floor, than after 1,000 (bench/chat.ts, two alternating runs of each).
 */
const WARMUP = Number(setting('BENCH_WARMUP_TURNS', '1000', /^\d+$/))
const TARGET_MS = 1
const ANSWER = Array.from({ length: 20 }, (_, i) => `word${i} `)

interface Timing {
  firstToken: number
  streamed: number
  stored: number
}

interface Marks {
  isToken(line: string): boolean
  isStreamed(line: string): boolean
  isStored(line: string): boolean
}

/** Reads a response body line by line, noting when the first token, the end of the answer and its storing arrive. */
async function timed(start: number, response: Response, split: string, marks: Marks): Promise<Timing> {
  let firstToken = 0
  let streamed = 0
  let stored = 0
  let buffer = ''
  // Read to the end, as a real client does: one that drops the body mid-stream drops the connection with it, and
  // the next turn would pay for a new one.
  for await (const chunk of response.body!.pipeThrough(new TextDecoderStream())) {
    if (stored) continue
    buffer += chunk
    let end: number
    while (!stored && (end = buffer.indexOf(split)) !== -1) {
      const line = buffer.slice(0, end)
      buffer = buffer.slice(end + split.length)
      if (!firstToken && marks.isToken(line)) firstToken = performance.now() - start
      if (!streamed && marks.isStreamed(line)) streamed = performance.now() - start
      if (marks.isStored(line)) stored = performance.now() - start
    }
  }
  if (!stored) throw new Error(`the stream ended without its last line:\n${buffer.slice(0, 300)}`)
  return { firstToken, streamed, stored }
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
  const floorServer = await startServer({ label: 'floor', mode: 'chat-floor', args: [seeded.agentId, fake.url], header: '' }, serverEnv).catch(async (error: unknown) => {
    await server.stop()
    fake.stop()
    throw error
  })
  let conversationId: string | undefined

  const direct = async (): Promise<Timing> => {
    const start = performance.now()
    const response = await fetch(`${fake.url}/chat/completions`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ model: 'bench-model', stream: true, messages: [{ role: 'user', content: 'hi' }] }),
    })
    const done = (line: string) => line === 'data: [DONE]'
    return timed(start, response, '\n\n', { isToken: (line) => line.includes('"content":"word'), isStreamed: done, isStored: done })
  }
  const viaFloor = async (): Promise<Timing> => {
    const start = performance.now()
    // The platform's conversation, so that the floor reads the same history and sends the provider the same request.
    const body = JSON.stringify({ text: 'hi', ...(conversationId ? { conversation_id: conversationId } : {}) })
    const response = await fetch(`${floorServer.base}/api/chat`, { method: 'POST', headers: { 'content-type': 'application/json' }, body })
    await expectStatus(response, 200, 'a turn of the floor')
    return timed(start, response, '\n', {
      isToken: (line) => line.startsWith('{"type":"stream"'),
      isStreamed: (line) => line === '{"type":"stream_end"}',
      isStored: (line) => line.startsWith('{"type":"message"'),
    })
  }
  const viaSwitchboard = async (): Promise<Timing> => {
    const start = performance.now()
    const response = await fetch(`${server.base}/api/chat`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', authorization: `Bearer ${seeded.token}` },
      body: JSON.stringify({ agent_id: seeded.agentId, text: 'hi', ...(conversationId ? { conversation_id: conversationId } : {}) }),
    })
    await expectStatus(response, 200, 'a chat turn')
    const ended = (line: string) => line.startsWith('{"type":"message"') || line.startsWith('{"type":"error"')
    return timed(start, response, '\n', {
      isToken: (line) => {
        conversationId ??= /"conversation_id":"([^"]+)"/.exec(line)?.[1]
        return line.startsWith('{"type":"stream"')
      },
      isStreamed: (line) => line === '{"type":"stream_end"}' || ended(line),
      isStored: ended,
    })
  }

  try {
    const results = { direct: [] as Timing[], floor: [] as Timing[], switchboard: [] as Timing[] }
    for (let i = 0; i < WARMUP + TURNS; i++) {
      const [a, b, c] = [await direct(), await viaFloor(), await viaSwitchboard()]
      if (i >= WARMUP) {
        results.direct.push(a)
        results.floor.push(b)
        results.switchboard.push(c)
      }
    }
    const row = (cells: string[]) => cells.map((c, i) => c.padEnd(i === 0 ? 13 : 10)).join(' ').trimEnd()
    const ms = (values: number[]) => [50, 90, 99].map((p) => `${percentile(values, p).toFixed(2)}ms`)
    console.log()
    console.log(row(['path', 'moment', 'p50', 'p90', 'p99']))
    for (const [name, timings] of Object.entries(results)) {
      for (const moment of ['firstToken', 'streamed', 'stored'] as const) console.log(row([name, moment, ...ms(timings.map((t) => t[moment]))]))
    }
    const added = (moment: keyof Timing) => percentile(results.switchboard.map((t) => t[moment]), 50) - percentile(results.direct.map((t) => t[moment]), 50)
    const [ttft, streamed, stored] = [added('firstToken'), added('streamed'), added('stored')]
    console.log()
    const p50 = (path: keyof typeof results, moment: keyof Timing) => percentile(results[path].map((t) => t[moment]), 50)
    const verdict = (name: string, moment: keyof Timing, added: number, judged: boolean) => {
      const [via, direct] = [p50('switchboard', moment), p50('direct', moment)]
      const line = `${name}: switchboard ${via.toFixed(2)} ms − direct ${direct.toFixed(2)} ms = ${added.toFixed(2)} ms added at p50 (ratio ${(via / direct).toFixed(2)}×, same run)`
      console.log(judged ? `${line}; target ≤ ${TARGET_MS} ms: ${added <= TARGET_MS ? 'met' : 'not met'}` : line)
      recordFigure({ bench: 'chat', path: `${name} (p50)`, figure: via, baseline: direct, unit: 'ms', ratio: `+${added.toFixed(2)} ms`, target: judged ? `≤ +${TARGET_MS} ms` : '', met: judged ? added <= TARGET_MS : null })
    }
    const floor = p50('floor', 'firstToken') - p50('direct', 'firstToken')
    console.log(`floor: a bare server of a turn adds ${floor.toFixed(2)} ms to the first token at p50 on this machine (the least any can)`)
    recordFigure({ bench: 'chat', path: 'floor: first token of a bare server (p50)', figure: p50('floor', 'firstToken'), baseline: p50('direct', 'firstToken'), unit: 'ms', ratio: `+${floor.toFixed(2)} ms`, target: '', met: null })
    verdict('first token', 'firstToken', ttft, true)
    verdict('whole answer streamed', 'streamed', streamed, true)
    verdict('stored', 'stored', stored, false)
  } finally {
    await server.stop()
    await floorServer.stop()
    fake.stop()
  }
})
