import { afterAll, beforeAll, expect, test } from 'bun:test'
import { join } from 'node:path'
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts'
import { expectProblem } from '../helpers/problem.ts'

const startups = ((globalThis as Record<string, unknown>).pluginStartups ??= []) as string[]
let p: TestPlatform
let demo: string

beforeAll(async () => {
  startups.length = 0
  p = await startTestPlatform({ SWITCHBOARD_PLUGIN_PATHS: join(import.meta.dir, '..', 'fixtures', 'plugins', 'good') })
  demo = (await p.call('GET', '/api/v1/AgentConfigRecord?name=eq.demo')).body.data[0].id
})
afterAll(() => p.close())

const live = async () => (await p.call('GET', '/api/agents')).body.data as Array<{ agent_id: string; generation: number; turns_in_flight: number }>

test('every enabled agent is live from boot', async () => {
  const demoInstance = (await live()).find((i) => i.agent_id === demo)
  expect(demoInstance).toMatchObject({ turns_in_flight: 0 })
  expect(demoInstance!.generation).toBeGreaterThanOrEqual(1)
})

test('a reload during a streaming turn: the turn completes, ON_STARTUP fires again, the next turn sees the new configuration', async () => {
  const before = (await live()).find((i) => i.agent_id === demo)!
  const startupsBefore = startups.length
  const response = await p.api.request('/api/chat', {
    method: 'POST',
    headers: { authorization: `Bearer ${p.root.token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ agent_id: demo, text: '/slow 100 one two three four five' }),
  })
  const reader = response.body!.pipeThrough(new TextDecoderStream()).getReader()
  let text = ''
  while (!text.includes('"stream"')) {
    const { value, done } = await reader.read()
    // Without this, a turn that ended early would have the loop spin on an empty, finished stream for ever.
    if (done) throw new Error(`the turn ended before it streamed anything: ${text}`)
    text += value
  }
  expect((await live()).find((i) => i.agent_id === demo)!.turns_in_flight).toBe(1)

  const reloaded = await p.call('POST', `/api/agents/${demo}/reload`)
  expect(reloaded.status).toBe(200)
  expect(reloaded.body.instance.generation).toBeGreaterThan(before.generation)
  expect(reloaded.body.instance.turns_in_flight).toBe(0)
  expect(startups.slice(startupsBefore)).toEqual(['alpha', 'beta'])

  for (let r = await reader.read(); !r.done; r = await reader.read()) text += r.value
  const last = JSON.parse(text.trim().split('\n').at(-1)!)
  expect(last).toMatchObject({ type: 'message', text: 'Echo: one two three four five' })

  await p.call('PATCH', `/api/v1/AgentConfigRecord/${demo}`, { json: { runner: 'nowhere' } })
  await p.call('POST', `/api/agents/${demo}/reload`)
  const next = await p.call('POST', '/api/chat', { json: { agent_id: demo, text: 'hello' } })
  expect(JSON.parse(String(next.body).trim().split('\n').at(-1)!)).toMatchObject({ type: 'error', error_type: 'runner_unavailable' })
  await p.call('PATCH', `/api/v1/AgentConfigRecord/${demo}`, { json: { runner: 'echo' } })
})

test('reloading a disabled agent stops it and starts nothing', async () => {
  const agent = (await p.call('POST', '/api/v1/AgentConfigRecord', { json: { name: 'to-disable' } })).body
  await p.call('POST', `/api/agents/${agent.id}/reload`)
  expect((await live()).some((i) => i.agent_id === agent.id)).toBe(true)
  await p.call('PATCH', `/api/v1/AgentConfigRecord/${agent.id}`, { json: { enabled: false } })
  expect((await p.call('POST', `/api/agents/${agent.id}/reload`)).body).toEqual({ instance: null })
  expect((await live()).some((i) => i.agent_id === agent.id)).toBe(false)
})

test('401, 403 for a member, 404 for another company’s agent or a malformed id; other companies’ agents are not listed', async () => {
  expectProblem(await p.call('POST', `/api/agents/${demo}/reload`, { as: null }), 401, 'unauthorized')
  const member = await p.createUser({ role: 'member' })
  expectProblem(await p.call('POST', `/api/agents/${demo}/reload`, { as: member }), 403, 'forbidden')
  const outsider = await p.createUser({ companyId: await p.createCompany(), role: 'owner' })
  expectProblem(await p.call('POST', `/api/agents/${demo}/reload`, { as: outsider }), 404, 'not_found')
  expectProblem(await p.call('POST', '/api/agents/demo/reload'), 404, 'not_found')
  expect((await p.call('GET', '/api/agents', { as: outsider })).body.data).toEqual([])
})
