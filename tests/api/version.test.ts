import { afterAll, beforeAll, expect, test } from 'bun:test'
import { Hono } from 'hono'
import { deprecationHeaders, markDeprecated } from '../../src/api/deprecations.ts'
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts'
import { expectProblem } from '../helpers/problem.ts'
import manifest from '../../package.json' with { type: 'json' }

let p: TestPlatform
beforeAll(async () => {
  p = await startTestPlatform()
})
afterAll(() => p.close())

test('one version, from package.json: GET /api/version for anyone, OpenAPI’s info.version, the console’s footer', async () => {
  const reply = await p.call('GET', '/api/version', { as: null })
  expect(reply.status).toBe(200)
  expect(reply.body).toEqual({ version: manifest.version, api: 'v1' })
  const document = (await p.call('GET', '/api/openapi.json', { as: null })).body as { info: { version: string }; paths: Record<string, any> }
  expect(document.info.version).toBe(manifest.version)
  expect(document.paths['/api/version'].get.security).toEqual([])
  const login = await p.admin.request('/login')
  expect(await login.text()).toContain(`Switchboard ${manifest.version} · API v1`)
  expect(manifest.version).toMatch(/^\d+\.\d+\.\d+$/)
})

test('the changelog has a section for the version', async () => {
  const changelog = await Bun.file(new URL('../../CHANGELOG.md', import.meta.url)).text()
  expect(changelog).toContain('## [Unreleased]')
  expect(changelog).toContain(`## [${manifest.version}]`)
})

test('a deprecated operation says so on every answer (Deprecation, Sunset, Link) and in the document; others do not', async () => {
  const deprecations = [{ operation: 'GET /old/:id', since: '2026-11-27', sunset: '2027-06-01', link: 'https://example.com/changelog#old' }]
  const app = new Hono()
  app.use(deprecationHeaders(deprecations))
  app.get('/old/:id', (c) => c.text('still here'))
  app.get('/new/:id', (c) => c.text('the way now'))
  const old = await app.request('/old/7')
  expect(old.headers.get('deprecation')).toBe(`@${Date.UTC(2026, 10, 27) / 1000}`)
  expect(old.headers.get('sunset')).toBe('Tue, 01 Jun 2027 00:00:00 GMT')
  expect(old.headers.get('link')).toBe('<https://example.com/changelog#old>; rel="deprecation"; type="text/html"')
  const current = await app.request('/new/7')
  expect(current.headers.get('deprecation')).toBeNull()
  const document = { paths: { '/old/{id}': { get: {} as { deprecated?: boolean } }, '/new/{id}': { get: {} as { deprecated?: boolean } } } }
  markDeprecated(document, deprecations)
  expect(document.paths['/old/{id}'].get.deprecated).toBe(true)
  expect(document.paths['/new/{id}'].get.deprecated).toBeUndefined()
})

test('nothing of /api/v1 is deprecated today: no answer says so', async () => {
  const reply = await p.call('GET', '/api/v1/AgentConfigRecord')
  expect(reply.headers.get('deprecation')).toBeNull()
  expectProblem(await p.call('POST', '/api/version', { as: null }), 405, 'method_not_allowed')
})
