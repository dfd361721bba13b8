import { afterAll, expect, test } from 'bun:test'
import { createConfig, lintFromString } from '@redocly/openapi-core'
import { startTestPlatform } from '../helpers/platform.ts'
import { MODELS } from '../../src/models/registry.ts'

// The document as real OpenAPI tooling reads it, and as the running app serves it: Redocly's recommended rules,
// and every route the api app answers is in the document with its method.
const p = await startTestPlatform({ INTERNAL_API_SECRET: `lint-${crypto.randomUUID()}` })
afterAll(() => p.close())
const text = JSON.stringify((await p.call('GET', '/api/openapi.json', { as: null })).body)
const document = JSON.parse(text) as { paths: Record<string, Record<string, unknown>> }

test('Redocly’s recommended rules find no error, and no warning but the licence (the project has not chosen one)', async () => {
  const problems = await lintFromString({ source: text, absoluteRef: 'openapi.json', config: await createConfig({ extends: ['recommended'] }) })
  const said = problems.map((problem) => `${problem.severity} ${problem.ruleId}: ${problem.message} at ${problem.location[0]?.pointer}`)
  expect(said.filter((line) => !line.startsWith('warn info-license'))).toEqual([])
})

/** Routes the api app answers that are deliberately not operations of the API: the operator's probes, the docs page's assets. */
const NOT_THE_API = [/^\/healthz$/, /^\/readyz$/, /^\/metrics$/, /^\/api\/docs\/assets\//]

/** The generic writes a model does not offer: they answer only 405 with Allow, so they are not operations. */
function refusesOnly(method: string, path: string): boolean {
  const model = MODELS.find((m) => path === `/api/v1/${m.name}` || path === `/api/v1/${m.name}/{id}`)
  if (!model || method === 'GET') return false
  return model.writtenElsewhere !== undefined || (model.createdElsewhere !== undefined && method === 'POST' && path === `/api/v1/${model.name}`)
}

test('every route the api app answers is in the document, with its method', () => {
  const documented = new Set(Object.entries(document.paths).flatMap(([path, operations]) => Object.keys(operations).map((method) => `${method.toUpperCase()} ${path}`)))
  const missing: string[] = []
  for (const route of p.api.routes) {
    if (route.method === 'ALL' || route.method === 'OPTIONS' || route.method === 'HEAD') continue
    const path = route.path.replace(/:(\w+)(\{[^}]*\})?/g, '{$1}')
    if (path.includes('*') || NOT_THE_API.some((pattern) => pattern.test(path)) || refusesOnly(route.method, path)) continue
    if (!documented.has(`${route.method} ${path}`)) missing.push(`${route.method} ${path}`)
  }
  expect([...new Set(missing)].sort()).toEqual([])
})

test('every operation has an operationId, a security statement and a 4xx answer', () => {
  const wrong: string[] = []
  for (const [path, operations] of Object.entries(document.paths)) {
    for (const [method, operation] of Object.entries(operations) as Array<[string, { operationId?: string; security?: unknown; responses?: Record<string, unknown> }]>) {
      if (method === 'parameters') continue
      if (!operation.operationId) wrong.push(`${method} ${path}: no operationId`)
      if (operation.security === undefined) wrong.push(`${method} ${path}: no security (public operations say [])`)
      if (!Object.keys(operation.responses ?? {}).some((status) => /^4/.test(status))) wrong.push(`${method} ${path}: no 4xx answer`)
    }
  }
  expect(wrong).toEqual([])
})

test('what the document and its refusals name exists: the routes a 405 points to, the plugins an example enables', async () => {
  const paths = new Set(Object.keys(document.paths))
  for (const model of MODELS) {
    for (const said of [model.createdElsewhere, model.writtenElsewhere]) {
      for (const [, named] of said?.matchAll(/(\/api\/[\w/{}.-]+)/g) ?? []) {
        const route = named!.replace(/[.]$/, '')
        // `/api/artifacts/{id}/` names the routes under it.
        const exists = route.endsWith('/') ? [...paths].some((path) => path.startsWith(route)) : paths.has(route)
        expect(exists, `${model.name} names ${route}`).toBe(true)
      }
    }
  }
  const plugins = ((await p.call('GET', '/api/plugins')).body as { data: Array<{ name: string }> }).data.map((plugin) => plugin.name)
  const example = (JSON.parse(text).components.schemas.AgentConfigRecordCreate.example ?? {}) as { plugins?: { enabled?: string[] } }
  expect(example.plugins?.enabled?.length).toBeGreaterThan(0)
  for (const name of example.plugins?.enabled ?? []) expect(plugins).toContain(name)
})
