import { expect, test } from 'bun:test'
import { usePlatform } from '../helpers/platform.ts'
import { expectProblem } from '../helpers/problem.ts'
import { fieldsOf } from '../helpers/typed-call.ts'

const p = usePlatform()

const policyOf = (headers: Headers) =>
  new Map(
    (headers.get('content-security-policy') ?? '')
      .split(';')
      .map((d) => d.trim().split(/\s+/))
      .map(([name, ...sources]) => [name!, sources]),
  )

function expectHardened(headers: Headers) {
  expect(headers.get('x-content-type-options')).toBe('nosniff')
  expect(headers.get('x-frame-options')).toBe('DENY')
  expect(headers.get('referrer-policy')).toBe('strict-origin-when-cross-origin')
  const policy = policyOf(headers)
  expect(policy.get('frame-ancestors')).toEqual(["'none'"])
  expect(policy.get('default-src')).toEqual(["'none'"])
  // No policy of this server lets inline code or eval run.
  expect(headers.get('content-security-policy')).not.toMatch(/unsafe-inline|unsafe-eval/)
  return policy
}

test('a JSON answer and a problem answer may load nothing and may not be framed', async () => {
  const json = await p().call('GET', '/api/v1/AgentConfigRecord')
  expect(json.status).toBe(200)
  expect(expectHardened(json.headers).size).toBe(2)
  const problem = await p().call('GET', '/api/v1/AgentConfigRecord', { as: null })
  expectProblem(problem, 401, 'unauthorized')
  expect(expectHardened(problem.headers).size).toBe(2)
  const missing = await p().call('GET', '/no/such/path')
  expect(missing.status).toBe(404)
  expectHardened(missing.headers)
  // Another site may not embed the data; headers no current browser acts on are not sent, since each costs every answer.
  expect(json.headers.get('cross-origin-resource-policy')).toBe('same-origin')
  for (const legacy of ['x-xss-protection', 'x-download-options', 'x-permitted-cross-domain-policies', 'x-dns-prefetch-control']) expect(json.headers.get(legacy)).toBeNull()
})

test('the console’s pages and static files run only scripts and styles served from the console', async () => {
  for (const path of ['/login', '/static/htmx.min.js', '/static/css/admin.css', '/static/nope.css', '/users']) {
    const reply = await p().admin.request(path)
    const policy = expectHardened(reply.headers)
    expect(policy.get('script-src'), path).toEqual(["'self'"])
    expect(policy.get('style-src'), path).toEqual(["'self'"])
    expect(policy.get('form-action'), path).toEqual(["'self'"])
    expect(reply.headers.get('cross-origin-opener-policy'), path).toBe('same-origin')
  }
  // The login page holds no inline script or style for the policy to break.
  const login = await (await p().admin.request('/login')).text()
  expect(login).not.toMatch(/<script(?![^>]*\bsrc=)|<style|\sstyle=|\shx-on/)
})

test('the API docs page runs Swagger UI from files, its start-up included', async () => {
  const page = await p().call('GET', '/api/docs')
  expect(page.status).toBe(200)
  const policy = expectHardened(page.headers)
  expect(policy.get('script-src')).toEqual(["'self'"])
  expect(page.body).not.toMatch(/<script(?![^>]*\bsrc=)/)
  const init = await p().api.request('/api/docs/assets/init.js')
  expect(init.headers.get('content-type')).toContain('javascript')
  expect(await init.text()).toContain("url: '/api/openapi.json'")
  expectHardened(init.headers)
})

test('a client’s X-Request-Id is echoed only when it is a short token', async () => {
  const idOf = async (given: string) => {
    const reply = await p().call('GET', '/api/v1/AgentConfigRecord', { as: null, headers: { 'x-request-id': given } })
    expect(reply.status).toBe(401)
    expect(fieldsOf(reply.body).request_id).toBe(reply.headers.get('x-request-id'))
    return reply.headers.get('x-request-id')
  }
  expect(await idOf('trace-01J9Z_abc=')).toBe('trace-01J9Z_abc=')
  expect(await idOf('a'.repeat(64))).toBe('a'.repeat(64))
  // fetch refuses a raw CR or LF in a header before it is sent; the encoded form must not pass either.
  for (const bad of ['a'.repeat(65), 'two words', 'tab\there', 'line%0D%0AX-Injected:%201', 'caf\u00e9', '<script>', '']) {
    expect(await idOf(bad)).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/)
  }
  const console_ = await p().admin.request('/login', { headers: { 'x-request-id': 'x'.repeat(300) } })
  expect(console_.headers.get('x-request-id')).toMatch(/^[0-9a-f-]{36}$/)
  expect((await p().admin.request('/login', { headers: { 'x-request-id': 'console-1' } })).headers.get('x-request-id')).toBe('console-1')
})
