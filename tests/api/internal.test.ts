import { expect, test } from 'bun:test'
import { startTestPlatform } from '../helpers/platform.ts'
import { expectProblem } from '../helpers/problem.ts'

test('without INTERNAL_API_SECRET the internal endpoints are closed, saying why', async () => {
  const p = await startTestPlatform()
  try {
    const problem = expectProblem(await p.call('GET', '/api/internal/ping', { as: null }), 503, 'unavailable')
    expect(problem.detail).toContain('INTERNAL_API_SECRET is not set')
    // Not even a signed-in superadmin gets in.
    expectProblem(await p.call('GET', '/api/internal/ping'), 503, 'unavailable')
  } finally {
    await p.close()
  }
})

test('with the secret set, only the exact secret gets in, on every internal path', async () => {
  const secret = 'an-internal-secret-of-sufficient-length'
  const p = await startTestPlatform({ INTERNAL_API_SECRET: secret })
  try {
    const ping = (authorization?: string) => p.call('GET', '/api/internal/ping', { as: null, headers: authorization ? { authorization } : {} })
    expect((await ping(`Bearer ${secret}`)).body).toEqual({ ok: true })
    for (const wrong of [undefined, `Bearer ${secret}x`, `Bearer ${secret.slice(0, -1)}`, secret, `Bearer ${p.root.token}`]) {
      expectProblem(await ping(wrong), 401, 'unauthorized')
    }
    expectProblem(await p.call('POST', '/api/internal/anything', { as: null }), 401, 'unauthorized')
    expectProblem(await p.call('POST', '/api/internal/anything', { as: null, headers: { authorization: `Bearer ${secret}` } }), 404, 'not_found')
  } finally {
    await p.close()
  }
})
