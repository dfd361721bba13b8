import { afterAll, beforeAll, expect, test } from 'bun:test'
import { join } from 'node:path'
import { startTestPlatform, type Principal, type TestPlatform } from '../helpers/platform.ts'
import { expectProblem } from '../helpers/problem.ts'

const startups = ((globalThis as Record<string, unknown>).pluginStartups ??= []) as string[]
let p: TestPlatform
let demo: string

beforeAll(async () => {
  startups.length = 0
  p = await startTestPlatform({ SWITCHBOARD_PLUGIN_PATHS: join(import.meta.dir, '..', 'fixtures', 'plugins', 'good') })
  const { data } = await p.client().GET('/api/v1/AgentConfigRecord', { params: { query: { name: 'eq.demo' } } })
  demo = data!.data[0]!.id
})
afterAll(() => p.close())

const live = async () => (await p.client().GET('/api/agents')).data!.data

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

  const reloaded = await p.client().POST('/api/agents/{id}/reload', { params: { path: { id: demo } } })
  expect(reloaded.response.status).toBe(200)
  expect(reloaded.data!.instance!.generation).toBeGreaterThan(before.generation)
  expect(reloaded.data!.instance!.turns_in_flight).toBe(0)
  expect(startups.slice(startupsBefore)).toEqual(['alpha', 'beta'])

  for (let r = await reader.read(); !r.done; r = await reader.read()) text += r.value
  const last = JSON.parse(text.trim().split('\n').at(-1)!)
  expect(last).toMatchObject({ type: 'message', text: 'Echo: one two three four five' })

  // The old instance stopped once its turn was done; the new one runs, on the configuration read at the reload.
  const current = (await live()).find((i) => i.agent_id === demo)!
  expect(current).toMatchObject({ generation: reloaded.data!.instance!.generation, state: 'running' })
  const stored = async () => (await p.client().GET('/api/v1/AgentConfigRecord/{id}', { params: { path: { id: demo } } })).response.headers.get('etag') ?? 'no etag'
  expect(`"${current.configuration_version}"`).toBe(await stored())

  // A change without a reload: turns read it at once, and the instance says it started with the older version.
  const startupsBeforeChange = startups.length
  await p.client().PATCH('/api/v1/AgentConfigRecord/{id}', { params: { path: { id: demo } }, body: { description: 'changed without a reload' } })
  const pending = (await live()).find((i) => i.agent_id === demo)!
  expect(pending.generation).toBe(current.generation)
  expect(`"${pending.configuration_version! + 1}"`).toBe(await stored())
  expect(startups.length).toBe(startupsBeforeChange)
  // The reload applies it: a new instance on the stored version, and ON_STARTUP again.
  const applied = (await p.client().POST('/api/agents/{id}/reload', { params: { path: { id: demo } } })).data!.instance!
  expect(`"${applied.configuration_version}"`).toBe(await stored())
  expect(applied.generation).toBeGreaterThan(pending.generation)
  expect(startups.slice(startupsBeforeChange)).toEqual(['alpha', 'beta'])
})

test('reloading a disabled agent stops it and starts nothing', async () => {
  const agent = (await p.client().POST('/api/v1/AgentConfigRecord', { body: { name: 'to-disable' } })).data!
  const reload = () => p.client().POST('/api/agents/{id}/reload', { params: { path: { id: agent.id } } })
  await reload()
  expect((await live()).some((i) => i.agent_id === agent.id)).toBe(true)
  await p.client().PATCH('/api/v1/AgentConfigRecord/{id}', { params: { path: { id: agent.id } }, body: { enabled: false } })
  expect((await reload()).data).toEqual({ instance: null })
  expect((await live()).some((i) => i.agent_id === agent.id)).toBe(false)
})

test('401, 403 for a member, 404 for another company’s agent or a malformed id; other companies’ agents are not listed', async () => {
  const reload = (as: Principal | null, id = demo) => p.client(as).POST('/api/agents/{id}/reload', { params: { path: { id } } })
  expectProblem(await reload(null), 401, 'unauthorized')
  const member = await p.createUser({ role: 'member' })
  expectProblem(await reload(member), 403, 'forbidden')
  const outsider = await p.createUser({ companyId: await p.createCompany(), role: 'owner' })
  expectProblem(await reload(outsider), 404, 'not_found')
  expectProblem(await reload(p.root, 'demo'), 404, 'not_found')
  expect((await p.client(outsider).GET('/api/agents')).data!.data).toEqual([])
})
