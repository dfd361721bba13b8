import { afterAll, beforeAll, expect, test } from 'bun:test'
import { addProgram } from '../helpers/mcp.ts'
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts'
import { expectProblem } from '../helpers/problem.ts'

let p: TestPlatform
let program: string
beforeAll(async () => {
  p = await startTestPlatform({ SWITCHBOARD_OUTBOUND_ALLOW: '127.0.0.0/8' })
  program = await addProgram(p, { name: 'everything', command: 'npx', variables: ['TOKEN'] })
})
afterAll(() => p.close())

const NEEDS_PROGRAM = { path: 'command_id', message: 'a stdio server runs a program of the catalogue (McpCommand)' }

test('a stdio server names a program of the catalogue and a streamable-http server a url, each alone', async () => {
  const problems = async (json: Record<string, unknown>) =>
    expectProblem(await p.call('POST', '/api/v1/McpServer', { json: { name: `s-${crypto.randomUUID().slice(0, 8)}`, ...json } }), 422, 'validation_error').errors
  expect(await problems({ transport: 'stdio' })).toContainEqual(NEEDS_PROGRAM)
  expect(await problems({ transport: 'streamable-http' })).toContainEqual({ path: 'url', message: 'a streamable-http server needs a url' })
  expect(await problems({ transport: 'stdio', command_id: program, url: 'http://127.0.0.1:1/mcp' })).toContainEqual({ path: 'url', message: 'a stdio server has no url' })
  expect(await problems({ transport: 'streamable-http', url: 'ftp://x' })).toContainEqual(expect.objectContaining({ path: 'url' }))
  expect(await problems({ transport: 'stdio', command_id: program, env: { 'NOT VALID': { value: 'x' } } })).toContainEqual(expect.objectContaining({ path: 'env.NOT VALID' }))
  expect(await problems({ transport: 'stdio', command_id: program, env: { TOKEN: { value: 'x', secret: 'y' } } })).toContainEqual(expect.objectContaining({ path: 'env.TOKEN' }))
  expect(await problems({ transport: 'stdio', command_id: crypto.randomUUID() })).toContainEqual({ path: 'command_id', message: 'no such record' })
})

test('a patch that breaks the rule across fields is refused and changes nothing', async () => {
  const server = (await p.call('POST', '/api/v1/McpServer', { json: { name: 'remote', transport: 'streamable-http', url: 'http://127.0.0.1:1/mcp' } })).body
  const refused = expectProblem(await p.call('PATCH', `/api/v1/McpServer/${server.id}`, { json: { transport: 'stdio' } }), 422, 'validation_error')
  expect(refused.errors).toContainEqual(NEEDS_PROGRAM)
  const moved = await p.call('PATCH', `/api/v1/McpServer/${server.id}`, { json: { transport: 'stdio', url: null, command_id: program } })
  expect(moved.body).toMatchObject({ transport: 'stdio', command_id: program, url: null })
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
    const refused = expectProblem(await p.call('POST', '/api/v1/McpServer', { json: { name, transport: 'stdio', command_id: program } }), 422, 'validation_error')
    expect(refused.errors!.map((e) => e.path)).toEqual(['name'])
  }
  for (const name of ['a_b', 'a-b-c', 'x1', 'a'.repeat(64)]) {
    expect((await p.call('POST', '/api/v1/McpServer', { json: { name, transport: 'stdio', command_id: program } })).status).toBe(201)
  }
})

test('inline header and environment values are write-only: nobody reads them back, members least of all', async () => {
  const created = await p.call('POST', '/api/v1/McpServer', {
    json: { name: 'with-secrets', transport: 'streamable-http', url: 'http://127.0.0.1:1/mcp', headers: { Authorization: { value: 'Bearer hunter2-inline' }, 'X-Team': { secret: 'team/id' } } },
  })
  expect(created.status).toBe(201)
  expect(created.body.headers).toEqual({ Authorization: { set: true }, 'X-Team': { secret: 'team/id' } })
  const stdio = await p.call('POST', '/api/v1/McpServer', { json: { name: 'with-env', transport: 'stdio', command_id: program, env: { TOKEN: { value: 'env-hunter2-inline' } } } })
  expect(stdio.body.env).toEqual({ TOKEN: { set: true } })

  const member = await p.createUser()
  for (const as of [member, p.root]) {
    const listed = await p.call('GET', '/api/v1/McpServer?select=name,env,headers', { as })
    const read = await p.call('GET', `/api/v1/McpServer/${created.body.id}`, { as })
    expect(listed.status).toBe(200)
    expect(read.body.headers.Authorization).toEqual({ set: true })
    for (const reply of [listed, read]) expect(JSON.stringify(reply.body)).not.toContain('hunter2')
  }
  // A patch of another field keeps the hidden value as it was stored.
  expect((await p.call('PATCH', `/api/v1/McpServer/${created.body.id}`, { json: { description: 'edited' } })).status).toBe(200)
  const stored = await p.store.db.selectFrom('mcp_servers').select('headers').where('id', '=', created.body.id).executeTakeFirstOrThrow()
  expect(stored.headers).toMatchObject({ Authorization: { value: 'Bearer hunter2-inline' } })
  // Read back and sent again as it reads, the hidden value is not taken for a new one.
  const roundTrip = await p.call('PUT', `/api/v1/McpServer/${created.body.id}`, { json: { name: 'with-secrets', transport: 'streamable-http', url: 'http://127.0.0.1:1/mcp', headers: created.body.headers } })
  expectProblem(roundTrip, 422, 'validation_error')
})
