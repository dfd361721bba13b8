import { expect, test } from 'bun:test'
import { parseConfigSchema, validateSettings } from '../../src/plugin-host/config-schema.ts'

test('the JSON Schema subset reads as it is written', () => {
  const { schema, problems } = parseConfigSchema({
    type: 'object',
    properties: { port: { type: 'integer', minimum: 1, maximum: 65535, default: 8080 }, token: { type: 'string', writeOnly: true } },
    required: ['port'],
  })
  expect(problems).toEqual([])
  expect(schema).toEqual({ type: 'object', properties: { port: { type: 'integer', minimum: 1, maximum: 65535, default: 8080 }, token: { type: 'string', writeOnly: true } }, required: ['port'] })
})

test('schemas outside the subset are refused, naming each field', () => {
  const { problems } = parseConfigSchema({
    type: 'object',
    properties: {
      nested: { type: 'object' },
      list: { type: 'array', items: { type: 'string' } },
      port: { type: 'integer', default: '80' },
      colour: { type: 'string', enum: ['red', 3] },
      Bad: { type: 'string' },
      key: { type: 'string', format: 'password', default: 'in-the-clear' },
      odd: { type: 'string', pattern: '(' },
    },
    required: ['missing'],
    oneOf: [],
  })
  expect(problems).toEqual([
    'config_schema.oneOf: not supported (settings are a JSON Schema object of scalar properties)',
    'config_schema.properties.nested.type: must be one of string, number, integer, boolean',
    'config_schema.properties.list.items: not supported (a setting is a string, number, integer or boolean)',
    'config_schema.properties.list.type: must be one of string, number, integer, boolean',
    'config_schema.properties.port.default: must be a whole number',
    'config_schema.properties.colour.enum: 3 is not a string',
    'config_schema.properties.Bad: a setting key is a lowercase letter, then lowercase letters, digits or _, at most 64',
    'config_schema.properties.key.default: a secret setting cannot have a default: it would sit in the manifest in clear',
    'config_schema.properties.odd.pattern: is not a valid regular expression',
    'config_schema.required: "missing" is not a property',
  ])
  expect(parseConfigSchema({ type: 'array' }).problems).toContain('config_schema.type: must be "object"')
})

test('validation splits secrets from values and names every bad key', () => {
  const { schema } = parseConfigSchema({
    type: 'object',
    properties: { ratio: { type: 'number', minimum: 0 }, name: { type: 'string', minLength: 2, pattern: '^[a-z]+$' }, key: { type: 'string', format: 'password' } },
    required: ['key'],
  })
  expect(validateSettings(schema, { ratio: 0.5, name: 'ab', key: 's3cret' }, () => false)).toEqual({ write: { values: { ratio: 0.5, name: 'ab' }, secrets: { key: 's3cret' } }, errors: [] })
  expect(validateSettings(schema, { ratio: -1, name: 'A' }, () => false).errors).toEqual([
    { path: 'ratio', message: 'must be at least 0' },
    { path: 'name', message: 'must be at least 2 characters' },
    { path: 'key', message: 'is required' },
  ])
  // A secret already set (or given by the environment) satisfies `required` without being sent again.
  expect(validateSettings(schema, {}, (key) => key === 'key').errors).toEqual([])
  expect(validateSettings(schema, { key: null }, () => true).errors).toEqual([{ path: 'key', message: 'is required' }])
})

test('the older form (key → description) reads as text settings; a key named like a credential is a secret', () => {
  const { schema, problems } = parseConfigSchema({ base_url: 'Endpoint root', api_key: 'Bearer key', bot_token: 'Bot token', models: 'Comma-separated ids' })
  expect(problems).toEqual([])
  expect(schema.properties).toMatchObject({
    base_url: { type: 'string', description: 'Endpoint root' },
    api_key: { type: 'string', writeOnly: true },
    bot_token: { type: 'string', writeOnly: true },
    models: { type: 'string' },
  })
  expect(schema.properties.models).not.toHaveProperty('writeOnly')
})
