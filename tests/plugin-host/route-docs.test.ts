import { expect, test } from 'bun:test'
import { OpenAPIHono } from '@hono/zod-openapi'
import { describePluginRoutes } from '../../src/plugin-host/route-docs.ts'
import { createPluginRouter, createRoute, signedIn, z } from '../../src/plugin-host/sdk.ts'

const Note = z.object({ id: z.string(), text: z.string() }).openapi('Note')

const readNote = createRoute({
  method: 'get',
  path: '/notes/{id}',
  request: { params: z.object({ id: z.string() }) },
  responses: { 200: { description: 'The note.', content: { 'application/json': { schema: Note } } } },
})

function notesPlugin() {
  const router = createPluginRouter()
  router.openapi(readNote, (c) => c.json({ id: c.req.valid('param').id, text: 'hello' }, 200))
  router.post('/notes/:id/pin', (c) => c.body(null, 204))
  router.use('/notes/*', async (_c, next) => next())
  router.get('/files/*', (c) => c.text('a file'))
  return router
}

function mountPrivately(router: ReturnType<typeof createPluginRouter>) {
  const app = new OpenAPIHono()
  describePluginRoutes(router, { name: 'notes', private: true })
  app.route('/api/plugins/notes', router as never)
  return app.getOpenAPI31Document({ openapi: '3.1.0', info: { title: 't', version: '1' } })
}

test('a declared route lands under the mount point with its schemas, and a private one with sign-in', () => {
  const document = mountPrivately(notesPlugin())
  const read = document.paths!['/api/plugins/notes/notes/{id}']!.get!
  expect(read.security).toEqual(signedIn)
  expect(read.tags).toEqual(['Plugin notes'])
  expect(read.parameters).toEqual([expect.objectContaining({ name: 'id', in: 'path', required: true })])
  // The host's sign-in and rate limit in front of the router can answer these.
  expect(Object.keys(read.responses!).sort()).toEqual(['200', '401', '429'])
  expect(document.components!.schemas!.Note).toBeDefined()
})

test('a route registered without createRoute is listed with its method and path parameters; middleware and wildcards are not', () => {
  const document = mountPrivately(notesPlugin())
  const pin = document.paths!['/api/plugins/notes/notes/{id}/pin']!
  expect(Object.keys(pin)).toEqual(['post'])
  expect(pin.post!.security).toEqual(signedIn)
  expect(pin.post!.parameters).toEqual([expect.objectContaining({ name: 'id', in: 'path', required: true })])
  expect(Object.keys(document.paths!).sort()).toEqual(['/api/plugins/notes/notes/{id}', '/api/plugins/notes/notes/{id}/pin'])
})

test('describing the same router twice adds nothing, so it may be mounted again', () => {
  const router = notesPlugin()
  describePluginRoutes(router, { name: 'notes', private: true })
  const document = mountPrivately(router)
  expect(router.openAPIRegistry.definitions.filter((d) => d.type === 'route')).toHaveLength(2)
  expect(document.paths!['/api/plugins/notes/notes/{id}']!.get!.tags).toEqual(['Plugin notes'])
})

test('a public router’s routes keep the security they declare; the others say they need no credential of the platform', () => {
  const router = createPluginRouter()
  router.openapi({ ...readNote, security: [{ apiToken: [] }] }, (c) => c.json({ id: '1', text: 'x' }, 200))
  router.post('/hook', (c) => c.body(null, 204))
  const app = new OpenAPIHono()
  describePluginRoutes(router, { name: 'hooks', private: false })
  app.route('/webhooks', router as never)
  const document = app.getOpenAPI31Document({ openapi: '3.1.0', info: { title: 't', version: '1' } })
  expect(document.paths!['/webhooks/notes/{id}']!.get!.security).toEqual([{ apiToken: [] }])
  expect(document.paths!['/webhooks/notes/{id}']!.get!.responses!['401']).toBeUndefined()
  expect(document.paths!['/webhooks/hook']!.post!.security).toEqual([])
})

test('a declared route is validated like the api app’s own: a bad parameter never reaches the handler', async () => {
  const router = createPluginRouter()
  router.openapi(
    createRoute({ method: 'get', path: '/n/{count}', request: { params: z.object({ count: z.coerce.number().int() }) }, responses: { 200: { description: 'ok' } } }),
    (c) => c.text(String(c.req.valid('param').count * 2)),
  )
  // The api app's defaultHook is inherited through the mount, as the plugin router sets none.
  const app = new OpenAPIHono({ defaultHook: (result, c) => (result.success ? undefined : c.text('refused', 400)) })
  app.route('/p', router as never)
  expect(await (await app.request('/p/n/21')).text()).toBe('42')
  const refused = await app.request('/p/n/many')
  expect([refused.status, await refused.text()]).toEqual([400, 'refused'])
})
