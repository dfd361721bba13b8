import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { join } from 'node:path'
import { compileErrors, validate } from '@readme/openapi-parser'
import { MODELS } from '../../src/models/registry.ts'
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts'

let p: TestPlatform
let document: any

beforeAll(async () => {
  p = await startTestPlatform({ SWITCHBOARD_BASE_URL: 'https://switchboard.example.com' })
  document = (await p.call('GET', '/api/openapi.json')).body
})
afterAll(() => p.close())

async function expectValid(document: unknown) {
  // The validator dereferences in place, so give it a copy.
  const result = await validate(structuredClone(document) as never)
  if (!result.valid) throw new Error(compileErrors(result))
  expect(result.valid).toBe(true)
}

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` })
const signedIn = [{ sessionCookie: [] }, { apiToken: [] }]

test('the OpenAPI document is valid OpenAPI 3.1', async () => {
  expect(document.openapi).toBe('3.1.0')
  await expectValid(document)
})

test('a plugin’s routes are documented at its mount point, with their schemas and security', () => {
  // The rlm plugin mounts at / (public_api_prefix), so its route is /rlm-query.
  const query = document.paths['/rlm-query'].post
  expect(query.operationId).toBe('rlmQuery')
  expect(query.security).toEqual(signedIn)
  expect(query.requestBody).toEqual({ required: true, content: { 'application/json': { schema: ref('RlmQuery') } } })
  expect(query.responses['200'].content['application/json'].schema).toEqual(ref('RlmAnswer'))
  for (const status of ['401', '422', '429', '504']) expect(query.responses[status].content['application/problem+json'].schema).toEqual(ref('Problem'))
  expect(document.components.schemas.RlmQuery.required).toEqual(['prompt'])
  expect(Object.keys(document.components.schemas.RlmAnswer.properties)).toEqual(['text', 'cost_usd', 'is_error'])
})

test('servers names the configured base URL so "Try it out" reaches this instance', () => {
  expect(document.servers).toEqual([{ url: 'https://switchboard.example.com', description: 'This instance' }])
})

test.each(MODELS.filter((m) => m.writtenElsewhere).map((m) => m.name))('%s, which only the platform writes, documents list and read alone', (model) => {
  const collection = document.paths[`/api/v1/${model}`]
  const item = document.paths[`/api/v1/${model}/{id}`]
  expect(Object.keys(collection)).toEqual(['get'])
  expect(Object.keys(item)).toEqual(['get'])
  expect(collection.get.responses['200'].content['application/json'].schema).toEqual(ref(`${model}List`))
  expect(item.get.responses['200'].content['application/json'].schema).toEqual(ref(model))
  expect(document.components.schemas).not.toHaveProperty(`${model}Create`)
})

test.each(MODELS.filter((m) => !m.writtenElsewhere).map((m) => [m.name, m.generated ? `${m.name}Created` : m.name, Boolean(m.createdElsewhere)] as const))('%s has its own schemas and its typed operations', (model, createdSchema, createdElsewhere) => {
  const schemas = document.components.schemas
  for (const suffix of ['', 'Create', 'Patch', 'List']) expect(schemas).toHaveProperty(`${model}${suffix}`)
  const collection = document.paths[`/api/v1/${model}`]
  const item = document.paths[`/api/v1/${model}/{id}`]
  expect(collection.get.operationId).toBe(`list${model}`)
  expect(collection.get.responses['200'].content['application/json'].schema).toEqual(ref(`${model}List`))
  if (createdElsewhere) {
    // Its records are made another way (documents are uploaded): no generic create is offered.
    expect(collection.post).toBeUndefined()
  } else {
    expect(collection.post.operationId).toBe(`create${model}`)
    expect(collection.post.requestBody.content['application/json'].schema).toEqual(ref(`${model}Create`))
    expect(collection.post.responses['201'].content['application/json'].schema).toEqual(ref(createdSchema))
  }
  expect(item.get.responses['200'].content['application/json'].schema).toEqual(ref(model))
  expect(item.put.requestBody.content['application/json'].schema).toEqual(ref(`${model}Create`))
  expect(item.patch.requestBody.content['application/merge-patch+json'].schema).toEqual(ref(`${model}Patch`))
  expect(item.delete.operationId).toBe(`delete${model}`)
  for (const operation of [collection.get, collection.post, item.get, item.put, item.patch, item.delete].filter(Boolean)) {
    expect(operation.responses['401'].content['application/problem+json'].schema).toEqual(ref('Problem'))
  }
  // Every stored field can be filtered on, and the list parameters are documented.
  const params = collection.get.parameters.map((param: { name: string }) => param.name)
  expect(params).toEqual(expect.arrayContaining(['select', 'order', 'limit', 'offset', 'count', 'id', 'created_at']))
})

test('write-only and secret fields never appear in a response schema', () => {
  const user = document.components.schemas.User
  expect(Object.keys(user.properties)).not.toContain('password')
  expect(Object.keys(user.properties)).not.toContain('password_hash')
  expect(Object.keys(document.components.schemas.UserCreate.properties)).toContain('password')
})

test('the docs page loads Swagger UI from this server, not from a CDN', async () => {
  const page = await p.call('GET', '/api/docs')
  expect(page.status).toBe(200)
  const assets = [...String(page.body).matchAll(/(?:src|href)="([^"]+)"/g)].map((m) => m[1]!)
  expect(assets.length).toBeGreaterThanOrEqual(3)
  for (const asset of assets) {
    expect(asset).toStartWith('/api/docs/assets/')
    const reply = await p.api.request(asset)
    expect(reply.status).toBe(200)
    // Swagger UI itself, or its start-up script, which names the document.
    const text = await reply.text()
    if (asset.endsWith('/init.js')) expect(text).toContain('/api/openapi.json')
    else expect(text.length).toBeGreaterThan(1000)
  }
  expect((await p.call('GET', '/api/docs/assets/swagger-ui-dist/package.json')).status).toBe(404)
})

describe('with plugins whose routes are not declared with createRoute', () => {
  let withFixtures: TestPlatform
  let described: any
  beforeAll(async () => {
    withFixtures = await startTestPlatform({ SWITCHBOARD_PLUGIN_PATHS: join(import.meta.dir, '..', 'fixtures', 'plugins', 'good') })
    described = (await withFixtures.call('GET', '/api/openapi.json')).body
  })
  afterAll(() => withFixtures.close())

  test('each route is still listed at its mount point, a private one behind sign-in, and the document stays valid', async () => {
    const whoami = described.paths['/api/plugins/beta/whoami'].get
    expect(whoami.security).toEqual(signedIn)
    expect(whoami.tags).toEqual(['Plugin beta'])
    expect(whoami.responses['401'].content['application/problem+json'].schema).toEqual(ref('Problem'))
    // A public webhook receiver checks its own signature: the document says it needs no credential of the platform.
    const webhook = described.paths['/webhooks/demo'].post
    expect(webhook.tags).toEqual(['Plugin hooks'])
    expect(webhook.security).toEqual([])
    await expectValid(described)
  })
})
