import { afterAll, beforeAll, expect, test } from 'bun:test'
import { STREAM_FROM_BYTES } from '../../src/http/large-bodies.ts'
import { consoleCookie } from '../helpers/console.ts'
import { usePlatform } from '../helpers/platform.ts'

// What leaves the socket is Bun's to decide, so the apps are served for real: a large answer must leave as a stream
// (chunked), which Bun writes whole after its headers, and a small one with its length, as before.

const p = usePlatform()
let api: Bun.Server<undefined>
let admin: Bun.Server<undefined>

beforeAll(async () => {
  api = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: p().api.fetch })
  admin = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: p().admin.fetch })
  // Enough agents that a list of them outgrows the size, with words from beyond ASCII.
  for (let i = 0; i < 12; i++) {
    const made = await p().call('POST', '/api/v1/AgentConfigRecord', { json: { name: `wordy-${i}`, personality: `Réponds brièvement — ${'語'.repeat(400)}` } })
    expect(made.status).toBe(201)
  }
})
afterAll(() => {
  api.stop(true)
  admin.stop(true)
})

const get = (server: Bun.Server<undefined>, path: string, headers: Record<string, string> = { authorization: `Bearer ${p().root.token}` }) =>
  fetch(new URL(path, server.url), { headers })

test('a JSON answer past the size leaves as a stream and reads as the same JSON; a small one keeps its length', async () => {
  const large = await get(api, '/api/v1/AgentConfigRecord?limit=100')
  expect(large.status).toBe(200)
  expect(large.headers.get('transfer-encoding')).toBe('chunked')
  expect(large.headers.get('content-length')).toBeNull()
  expect(large.headers.get('content-type')).toBe('application/json')
  const text = await large.text()
  expect(Buffer.byteLength(text)).toBeGreaterThanOrEqual(STREAM_FROM_BYTES)
  const body = JSON.parse(text) as { data: Array<{ name: string; personality: string }> }
  expect(body.data.find((a) => a.name === 'wordy-3')!.personality).toBe(`Réponds brièvement — ${'語'.repeat(400)}`)
  // Headers set before and after the body was made are all there.
  expect(large.headers.get('x-request-id')).toBeTruthy()
  expect(large.headers.get('x-content-type-options')).toBe('nosniff')

  const small = await get(api, '/api/v1/AgentConfigRecord?limit=1&select=id,name')
  expect(small.status).toBe(200)
  expect(Number(small.headers.get('content-length'))).toBe(Buffer.byteLength(await small.text()))
  expect(small.headers.get('transfer-encoding')).toBeNull()
})

test('a large answer keeps its status and headers: a 201 with the record made', async () => {
  const made = await fetch(new URL('/api/v1/AgentConfigRecord', api.url), {
    method: 'POST',
    headers: { authorization: `Bearer ${p().root.token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ name: 'long-winded', personality: 'p'.repeat(20_000) }),
  })
  expect(made.status).toBe(201)
  expect(made.headers.get('transfer-encoding')).toBe('chunked')
  expect(made.headers.get('etag')).toBeTruthy()
  expect(((await made.json()) as { personality: string }).personality).toHaveLength(20_000)
})

test('a console page past the size leaves as a stream, whole, with its headers', async () => {
  const cookie = await consoleCookie(p())
  const agents = await p().call('GET', '/api/v1/AgentConfigRecord?name=eq.wordy-0')
  const page = await get(admin, `/agents/${agents.body.data[0]!.id}`, { cookie })
  expect(page.status).toBe(200)
  const html = await page.text()
  expect(Buffer.byteLength(html)).toBeGreaterThanOrEqual(STREAM_FROM_BYTES)
  expect(page.headers.get('transfer-encoding')).toBe('chunked')
  expect(html.trimEnd()).toEndWith('</html>')
  expect(page.headers.get('content-security-policy')).toContain("default-src 'none'")
})
