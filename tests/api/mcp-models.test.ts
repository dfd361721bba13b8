import { afterAll, beforeAll, expect, test } from 'bun:test'
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts'
import { expectProblem } from '../helpers/problem.ts'

let p: TestPlatform
beforeAll(async () => {
  p = await startTestPlatform()
})
afterAll(() => p.close())

test('a stdio server needs a command and a streamable-http server a url, each alone', async () => {
  const problems = async (json: Record<string, unknown>) =>
    expectProblem(await p.call('POST', '/api/v1/McpServer', { json: { name: `s-${crypto.randomUUID().slice(0, 8)}`, ...json } }), 422, 'validation_error').errors
  expect(await problems({ transport: 'stdio' })).toContainEqual({ path: 'command', message: 'a stdio server needs a command' })
  expect(await problems({ transport: 'streamable-http' })).toContainEqual({ path: 'url', message: 'a streamable-http server needs a url' })
  expect(await problems({ transport: 'stdio', command: 'npx', url: 'http://127.0.0.1:1/mcp' })).toContainEqual({ path: 'url', message: 'a stdio server has no url' })
  expect(await problems({ transport: 'streamable-http', url: 'ftp://x' })).toContainEqual(expect.objectContaining({ path: 'url' }))
  expect(await problems({ transport: 'stdio', command: 'npx', env: { 'NOT VALID': { value: 'x' } } })).toContainEqual(expect.objectContaining({ path: 'env.NOT VALID' }))
  expect(await problems({ transport: 'stdio', command: 'npx', env: { TOKEN: { value: 'x', secret: 'y' } } })).toContainEqual(expect.objectContaining({ path: 'env.TOKEN' }))
})

test('a patch that breaks the rule across fields is refused and changes nothing', async () => {
  const server = (await p.call('POST', '/api/v1/McpServer', { json: { name: 'remote', transport: 'streamable-http', url: 'http://127.0.0.1:1/mcp' } })).body
  const refused = expectProblem(await p.call('PATCH', `/api/v1/McpServer/${server.id}`, { json: { transport: 'stdio' } }), 422, 'validation_error')
  expect(refused.errors).toContainEqual({ path: 'command', message: 'a stdio server needs a command' })
  const moved = await p.call('PATCH', `/api/v1/McpServer/${server.id}`, { json: { transport: 'stdio', url: null, command: 'npx' } })
  expect(moved.body).toMatchObject({ transport: 'stdio', command: 'npx', url: null })
})

test('permission rules name a server or *, and a user of the company', async () => {
  expect((await p.call('POST', '/api/v1/McpPermission', { json: { server: '*', effect: 'deny' } })).body).toMatchObject({ server: '*', tool: '*', user_id: null })
  expectProblem(await p.call('POST', '/api/v1/McpPermission', { json: { server: 'Bad Name', effect: 'allow' } }), 422, 'validation_error')
  const stranger = await p.createUser({ companyId: await p.createCompany() })
  expectProblem(await p.call('POST', '/api/v1/McpPermission', { json: { server: '*', effect: 'allow', user_id: stranger.userId } }), 422, 'validation_error')
  expectProblem(await p.call('POST', '/api/v1/McpPermission', { json: { server: '*', effect: 'deny' } }), 409, 'conflict')
})

test('a server name cannot hold `__` or end in `_`, which would blur `<server>__<tool>` names', async () => {
  for (const name of ['a__b', 'ab_', '_ab', 'A-b', 'a'.repeat(65)]) {
    const refused = expectProblem(await p.call('POST', '/api/v1/McpServer', { json: { name, transport: 'stdio', command: 'true' } }), 422, 'validation_error')
    expect(refused.errors!.map((e) => e.path)).toEqual(['name'])
  }
  for (const name of ['a_b', 'a-b-c', 'x1', 'a'.repeat(64)]) {
    expect((await p.call('POST', '/api/v1/McpServer', { json: { name, transport: 'stdio', command: 'true' } })).status).toBe(201)
  }
})
