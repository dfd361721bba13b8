import { expect, test } from 'bun:test'
import { toApiError } from '../../src/errors.ts'
import { usePlatform } from '../helpers/platform.ts'
import { expectProblem } from '../helpers/problem.ts'


const p = usePlatform({ SWITCHBOARD_BODY_LIMIT_BYTES: '4096' })

test('malformed JSON is a 400', async () => {
  const problem = expectProblem(await p().call('POST', '/api/v1/Company', { body: '{"name": ', headers: { 'content-type': 'application/json' } }), 400, 'bad_request')
  expect(problem.detail).toContain('JSON')
})

test('a body that is not JSON is a 415', async () => {
  expectProblem(await p().call('POST', '/api/v1/Company', { body: 'name=Acme', headers: { 'content-type': 'application/x-www-form-urlencoded' } }), 415, 'unsupported_media_type')
  expectProblem(await p().call('PUT', `/api/v1/Company/${p().root.companyId}`, { body: '{}' }), 415, 'unsupported_media_type')
})

test('a body over the configured limit is a 413, with or without Content-Length', async () => {
  const big = JSON.stringify({ name: 'x'.repeat(5000), slug: 'big' })
  expectProblem(await p().call('POST', '/api/v1/Company', { body: big, headers: { 'content-type': 'application/json' } }), 413, 'payload_too_large')
  const chunked = new ReadableStream({
    start(controller) {
      controller.enqueue(new TextEncoder().encode(big))
      controller.close()
    },
  })
  const reply = await p().api.request('/api/v1/Company', { method: 'POST', body: chunked, headers: { 'content-type': 'application/json' }, duplex: 'half' } as RequestInit)
  expect(reply.status).toBe(413)
  expect((await p().call('GET', '/api/v1/Company?slug=eq.big')).body.data).toEqual([])
})

test('an unknown route is a 404 problem and an unknown model names the models there are', async () => {
  expectProblem(await p().call('GET', '/nothing/here'), 404, 'not_found')
  const problem = expectProblem(await p().call('GET', '/api/v1/Widget'), 404, 'not_found')
  expect(problem.detail).toContain('Widget')
  expect(problem.detail).toContain('AgentConfigRecord')
  expectProblem(await p().call('POST', '/api/v1/Widget', { json: {} }), 404, 'not_found')
})

test('a wrong method is a 405 with Allow', async () => {
  const onCollection = await p().call('DELETE', '/api/v1/Company')
  expectProblem(onCollection, 405, 'method_not_allowed')
  expect(onCollection.headers.get('allow')).toBe('GET, POST, HEAD')
  const onItem = await p().call('POST', `/api/v1/Company/${p().root.companyId}`, { json: {} })
  expectProblem(onItem, 405, 'method_not_allowed')
  expect(onItem.headers.get('allow')!.split(', ').sort()).toEqual(['DELETE', 'GET', 'HEAD', 'PATCH', 'PUT'])
  expectProblem(await p().call('POST', '/api/openapi.json'), 405, 'method_not_allowed')
})

test('an id that is not a UUID names no record: 404', async () => {
  expectProblem(await p().call('GET', '/api/v1/Company/42'), 404, 'not_found')
  expectProblem(await p().call('PATCH', "/api/v1/Company/1'%20or%201=1", { json: {} }), 404, 'not_found')
})

test('every problem carries the request id the response header names', async () => {
  const reply = await p().call('GET', '/api/v1/Widget')
  expect(expectProblem(reply, 404, 'not_found').request_id).toBe(reply.headers.get('x-request-id')!)
})

test('a failure inside is a 500 without stack or SQL, and the next request still works', async () => {
  // Drop a table under the running app: the query fails in the database, as a real outage would.
  await p().store.db.schema.alterTable('system_config').renameTo('system_config_away').execute()
  const reply = await p().call('GET', '/api/v1/SystemConfig')
  const problem = expectProblem(reply, 500, 'internal_error')
  expect(problem.detail).not.toMatch(/select|system_config|at \w+ \(|\.ts:/i)
  expect(JSON.stringify(reply.body)).not.toMatch(/select|relation/i)
  await p().store.db.schema.alterTable('system_config_away').renameTo('system_config').execute()
  expect((await p().call('GET', '/api/v1/SystemConfig')).status).toBe(200)
})

test('a path that is not valid percent-encoding is a 404, not a 500', async () => {
  expectProblem(await p().call('GET', '/api/v1/%E0%A4%A'), 404, 'not_found')
  expectProblem(await p().call('GET', '/api/v1/Company/%E0%A4%A'), 404, 'not_found')
})

test('a trailing slash or an extra segment is a plain 404, naming no wrong model', async () => {
  const slash = expectProblem(await p().call('GET', '/api/v1/Company/'), 404, 'not_found')
  expect(slash.detail).not.toContain('no model')
  const extra = expectProblem(await p().call('GET', `/api/v1/Company/${p().root.companyId}/extra`), 404, 'not_found')
  expect(extra.detail).not.toContain('no model')
})

test('the method and the model are judged before the body’s type', async () => {
  expectProblem(await p().call('PUT', '/api/v1/Company', { body: 'x', headers: { 'content-type': 'text/plain' } }), 405, 'method_not_allowed')
  expectProblem(await p().call('POST', '/api/v1/Widget', { body: 'x', headers: { 'content-type': 'text/plain' } }), 404, 'not_found')
})

test('JSON nested deeper than any configuration needs is refused with 422', async () => {
  let deep: unknown = 1
  // 500 levels: deep enough to refuse, small enough for this suite's 4 KiB body limit.
  for (let i = 0; i < 500; i++) deep = { d: deep }
  expectProblem(await p().call('POST', '/api/v1/SystemConfig', { json: { key: 'deep', value: deep } }), 422, 'validation_error')
  const made = await p().call('POST', '/api/v1/SystemConfig', { json: { key: 'shallow', value: 1 } })
  expectProblem(await p().call('PATCH', `/api/v1/SystemConfig/${made.body.id}`, { json: { value: deep } }), 422, 'validation_error')
})

test('a duplicate names the fields the caller chose, whatever expressions the unique key wraps them in', () => {
  const said = (detail: string) => toApiError({ code: '23505', detail, constraint_name: 'a_key' }).detail
  expect(said('Key (company_id, name)=(01, helpdesk) already exists.')).toBe('Another record already has the same name.')
  expect(said(`Key (company_id, COALESCE(user_id, '00000000-0000-0000-0000-000000000000'::uuid), server, tool)=(…) already exists.`)).toBe(
    'Another record already has the same user_id, server and tool.',
  )
  expect(said('Key (lower(email))=(a@b.c) already exists.')).toBe('Another record already has the same email.')
  expect(said('no detail')).toBe('Another record already has these values.')
})
