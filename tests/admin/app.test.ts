import { afterAll, beforeAll, expect, test } from 'bun:test'
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts'

let p: TestPlatform
beforeAll(async () => {
  p = await startTestPlatform()
})
afterAll(() => p.close())

const page = async (path: string) => {
  const response = await p.admin.request(path)
  return { status: response.status, type: response.headers.get('content-type') ?? '', text: await response.text() }
}

test('the overview lists every model with its record count, read through the public API', async () => {
  for (const name of ['one', 'two', 'three']) {
    await p.call('POST', '/api/v1/AgentConfigRecord', { json: { name } })
  }
  const overview = await page('/')
  expect(overview.status).toBe(200)
  expect(overview.text).toStartWith('<!DOCTYPE html>')
  const row = (model: string) => new RegExp(`${model}</a></td><td>(\\d+)</td>`).exec(overview.text)?.[1]
  expect(row('AgentConfigRecord')).toBe('3')
  expect(row('Company')).toBe('1')
  for (const model of p.services.models.keys()) expect(row(model)).toMatch(/^\d+$/)
})

test('the layout links the API docs on the api port, and loads htmx and the stylesheet from this server', async () => {
  const overview = await page('/')
  expect(overview.text).toContain(`href="${p.services.config.baseUrl}/api/docs"`)
  const htmx = await page('/static/htmx.min.js')
  expect(htmx.status).toBe(200)
  expect(htmx.type).toContain('javascript')
  expect(htmx.text).toContain('htmx')
  const css = await page('/static/css/admin.css')
  expect(css.status).toBe(200)
  expect(css.type).toContain('text/css')
})

test('static files cannot escape the static folder', async () => {
  for (const path of ['/static/../package.json', '/static/%2e%2e/package.json', '/static/css/../../src/main.ts', '/static/nope.css']) {
    expect((await page(path)).status).toBe(404)
  }
})

test('an unknown page is a readable 404 page', async () => {
  const missing = await page('/no/such/page')
  expect(missing.status).toBe(404)
  expect(missing.text).toContain('There is no page at /no/such/page')
})
