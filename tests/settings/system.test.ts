import { afterAll, beforeAll, expect, test } from 'bun:test'
import { sql } from 'kysely'
import { sweepConversations } from '../../src/chat/retention.ts'
import { startTestPlatform, type Principal, type TestPlatform } from '../helpers/platform.ts'
import { consoleCookie } from '../helpers/console.ts'
import { expectProblem } from '../helpers/problem.ts'
import { fieldsOf, rowsOf } from '../helpers/typed-call.ts'

// The platform-wide settings of SystemConfig: each validated, each read by the code, each changed without a restart.
let p: TestPlatform
let demo: string
let member: Principal

beforeAll(async () => {
  p = await startTestPlatform()
  demo = rowsOf((await p.call('GET', '/api/v1/AgentConfigRecord?name=eq.demo')).body)[0]!.id as string
  member = await p.createUser({ role: 'member' })
})
afterAll(() => p.close())

async function set(key: string, value: unknown) {
  const existing = rowsOf((await p.call('GET', `/api/v1/SystemConfig?key=eq.${key}`)).body)[0]
  const reply = existing ? await p.call('PATCH', `/api/v1/SystemConfig/${existing.id}`, { json: { value } }) : await p.call('POST', '/api/v1/SystemConfig', { json: { key, value } })
  expect([200, 201]).toContain(reply.status)
}

async function page(path: string) {
  return (await p.admin.request(path, { headers: { cookie: await consoleCookie(p) } })).text()
}

test('a known key takes only a value that fits it, said by the field; other keys are free', async () => {
  for (const [key, value] of [['platform.name', 'x'.repeat(61)], ['platform.name', ''], ['platform.banner', 7], ['chat.who_starts_conversations', 'nobody'], ['retention.conversation_days', -1], ['retention.conversation_days', 1.5]] as const) {
    const problem = expectProblem(await p.call('POST', '/api/v1/SystemConfig', { json: { key, value } }), 422, 'validation_error')
    expect(problem.errors?.[0]).toMatchObject({ path: 'value', message: expect.stringContaining(`not a valid ${key}`) })
  }
  expect((await p.call('POST', '/api/v1/SystemConfig', { json: { key: 'ops.anything', value: { free: true } } })).status).toBe(201)
  // A known key changed by a patch is judged whole too.
  await set('platform.name', 'Acme Agents')
  const named = rowsOf((await p.call('GET', '/api/v1/SystemConfig?key=eq.platform.name')).body)[0]!
  expectProblem(await p.call('PATCH', `/api/v1/SystemConfig/${named.id}`, { json: { value: 42 } }), 422, 'validation_error')
})

test('the platform’s name and banner show on every page at once, the banner as text', async () => {
  await set('platform.name', 'Acme Agents')
  await set('platform.banner', 'Maintenance tonight <script>alert(1)</script>')
  const html = await page('/agents')
  expect(html).toContain('<title>Agents · Acme Agents</title>')
  expect(html).toMatch(/<a class="brand" href="\/">\s*Acme Agents<\/a>/)
  expect(html).toContain('<p class="banner" role="status">Maintenance tonight &lt;script&gt;alert(1)&lt;/script&gt;</p>')
  await set('platform.banner', '')
  expect(await page('/agents')).not.toContain('class="banner"')
})

test('with chat.who_starts_conversations = admins, a member continues a conversation but starts none; an admin does', async () => {
  const started = await p.call('POST', '/api/chat', { as: member, json: { agent_id: demo, text: 'before' } })
  expect(started.status).toBe(200)
  const conversation = JSON.parse(String(started.body).split('\n')[0]!).conversation_id as string
  await set('chat.who_starts_conversations', 'admins')
  try {
    const refused = expectProblem(await p.call('POST', '/api/chat', { as: member, json: { agent_id: demo, text: 'a new one' } }), 403, 'forbidden')
    expect(refused.detail).toContain('Only admins start new conversations with this agent')
    expect((await p.call('POST', '/api/chat', { as: member, json: { conversation_id: conversation, text: 'go on' } })).status).toBe(200)
    expect((await p.call('POST', '/api/chat', { json: { agent_id: demo, text: 'an admin’s' } })).status).toBe(200)
  } finally {
    await set('chat.who_starts_conversations', 'members')
  }
  expect((await p.call('POST', '/api/chat', { as: member, json: { agent_id: demo, text: 'allowed again' } })).status).toBe(200)
})

test('who starts conversations may be set per agent: admins only for one, everyone for the rest', async () => {
  const guarded = fieldsOf((await p.call('POST', '/api/v1/AgentConfigRecord', { json: { name: `guarded-${crypto.randomUUID().slice(0, 6)}` } })).body).id as string
  expectProblem(await p.call('POST', '/api/v1/SystemConfig', { json: { key: 'chat.who_starts_conversations', value: { default: 'members', agents: { 'not-an-id': 'admins' } } } }), 422, 'validation_error')
  await set('chat.who_starts_conversations', { default: 'members', agents: { [guarded]: 'admins' } })
  try {
    expectProblem(await p.call('POST', '/api/chat', { as: member, json: { agent_id: guarded, text: 'hi' } }), 403, 'forbidden')
    expect((await p.call('POST', '/api/chat', { as: member, json: { agent_id: demo, text: 'hi' } })).status).toBe(200)
  } finally {
    await set('chat.who_starts_conversations', 'members')
  }
})

test('retention.artifact_days is how long an artifact is kept when its maker does not say', async () => {
  const made = async () => fieldsOf((await p.call('POST', '/api/artifacts', { json: { title: 'Figures', kind: 'markdown', content: '# Q3' } })).body)
  const days = (artifact: Record<string, unknown>) => Math.round((Date.parse(String(artifact.expires_at)) - Date.parse(String(artifact.created_at))) / 86_400_000)
  expect(days(await made())).toBe(30)
  await set('retention.artifact_days', 7)
  expect(days(await made())).toBe(7)
  expectProblem(await p.call('POST', '/api/v1/SystemConfig', { json: { key: 'retention.artifact_days', value: 0 } }), 422, 'validation_error')
})

test('retention.conversation_days deletes the conversations quiet for that long, and only those; 0 keeps all', async () => {
  const make = async (text: string) => JSON.parse(String((await p.call('POST', '/api/chat', { json: { agent_id: demo, text } })).body).split('\n')[0]!).conversation_id as string
  const [old, recent] = [await make('long ago'), await make('just now')]
  for (const table of ['webchat_conversations', 'webchat_messages'] as const) {
    await p.store.db.updateTable(table).set({ created_at: sql`now() - interval '40 days'` }).where(table === 'webchat_conversations' ? 'id' : 'conversation_id', '=', old).execute()
  }
  expect(await sweepConversations(p.store.db, await p.services.settings.get('retention.conversation_days'), Date.now())).toBe(0)
  await set('retention.conversation_days', 30)
  expect(await sweepConversations(p.store.db, await p.services.settings.get('retention.conversation_days'), Date.now())).toBeGreaterThanOrEqual(1)
  expectProblem(await p.call('GET', `/api/v1/WebchatConversation/${old}`), 404, 'not_found')
  expect((await p.call('GET', `/api/v1/WebchatConversation/${recent}`)).status).toBe(200)
  expect(fieldsOf((await p.call('GET', `/api/v1/WebchatMessage?conversation_id=eq.${old}&count=exact`)).body).count).toBe(0)
  await set('retention.conversation_days', 0)
})
