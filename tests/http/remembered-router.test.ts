import { expect, test } from 'bun:test'
import { Hono } from 'hono'
import { RememberedRouter } from '../../src/http/remembered-router.ts'
import { createRouter } from '../../src/api/router.ts'

/** An app on the remembered router with a parameter and a fixed segment at the same place, as the api has. */
function app() {
  const router = new RememberedRouter<never>()
  const hono = new Hono({ router })
  hono.use('/things/*', async (c, next) => {
    await next()
    c.header('x-seen', 'middleware')
  })
  hono.get('/things/:id', (c) => c.json({ route: 'one', id: c.req.param('id') }))
  hono.get('/things/special', (c) => c.json({ route: 'special' }))
  hono.post('/things/:id/parts/:part', (c) => c.json({ route: 'part', ...c.req.param() }))
  return { hono, router }
}

test('a remembered answer routes as the first did: same handlers, middleware included, and the parameters of its own path', async () => {
  const { hono, router } = app()
  for (let round = 0; round < 2; round++) {
    const one = await hono.request('/things/a1')
    expect(await one.json()).toEqual({ route: 'one', id: 'a1' })
    expect(one.headers.get('x-seen')).toBe('middleware')
    // Another id on the same route is another path: its own parameters, never the remembered ones of a1.
    expect(await (await hono.request('/things/b2')).json()).toEqual({ route: 'one', id: 'b2' })
    expect(await (await hono.request('/things/b2/parts/x', { method: 'POST' })).json()).toEqual({ route: 'part', id: 'b2', part: 'x' })
    // The method is part of what is remembered: the GET route does not answer a POST.
    expect((await hono.request('/things/a1', { method: 'POST' })).status).toBe(404)
  }
  // Registration order decides between the parameter and the fixed segment, as in hono's own routers.
  expect(await (await hono.request('/things/special')).json()).toEqual({ route: 'one', id: 'special' })
  expect(router.size).toBe(5)
})

test('a route cannot be added once requests are routed, as with the router of hono itself', async () => {
  const { hono } = app()
  expect((await hono.request('/late')).status).toBe(404)
  expect(() => hono.get('/late', (c) => c.text('too late'))).toThrow()
})

test('made-up paths cannot make it keep more than its bound, in entries or in bytes', async () => {
  const { hono, router } = app()
  for (let i = 0; i < 2_500; i++) await hono.request(`/things/made-up-${i}`)
  expect(router.size).toBe(2_000)
  expect(await (await hono.request('/things/made-up-0')).json()).toEqual({ route: 'one', id: 'made-up-0' })
  // A long path is routed all the same, and not kept.
  const fresh = app()
  const long = 'x'.repeat(5_000)
  expect(await (await fresh.hono.request(`/things/${long}`)).json()).toEqual({ route: 'one', id: long })
  expect(fresh.router.size).toBe(0)
})

test('the app that serves the api routes through it; an app mounted into it does not need to', () => {
  expect(createRouter({ serves: true }).router).toBeInstanceOf(RememberedRouter)
  expect(createRouter().router).not.toBeInstanceOf(RememberedRouter)
})
