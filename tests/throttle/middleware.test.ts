import { expect, test } from 'bun:test'
import { Hono } from 'hono'
import { manualClock } from '../../src/clock.ts'
import { MemoryBucketStore } from '../../src/throttle/buckets.ts'
import { throttle } from '../../src/throttle/middleware.ts'

test('a request that two patterns put under the same bucket takes one token, and its answer says so', async () => {
  // As a plugin's own route under /api/plugins/<name>/* does when it also uses context.throttle.
  const bucket = throttle('api', new MemoryBucketStore(), { burst: 5, perSecond: 1 }, manualClock(), () => 'ann')
  const app = new Hono()
  app.use('/plugin/*', bucket)
  app.get('/plugin/spend', bucket, (c) => c.text('spent'))
  app.get('/plugin/answer', bucket, () => new Response('its own'))
  const first = await app.request('/plugin/spend')
  expect(await first.text()).toBe('spent')
  expect(first.headers.get('ratelimit')).toBe('"api";r=4;t=1')
  // An answer the route makes itself carries them too.
  const second = await app.request('/plugin/answer')
  expect(second.headers.get('ratelimit')).toBe('"api";r=3;t=2')
  expect(second.headers.get('ratelimit-policy')).toBe('"api";q=5;w=5')
})
