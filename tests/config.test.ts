import { expect, test } from 'bun:test'
import { resolve } from 'node:path'
import { ConfigError, loadConfig } from '../src/config.ts'

test('defaults follow the design', () => {
  const config = loadConfig({})
  expect(config).toMatchObject({
    host: '127.0.0.1',
    apiPort: 8000,
    adminPort: 8080,
    baseUrl: 'http://127.0.0.1:8000',
    dataDir: resolve('./data'),
    pluginPaths: [],
    databaseUrl: undefined,
    internalApiSecret: undefined,
    sessionInactivityHours: 72,
    sessionMaxDays: 30,
  })
})

test('values are read and converted; an empty variable counts as unset', () => {
  const config = loadConfig({
    SWITCHBOARD_API_PORT: '9000',
    SWITCHBOARD_ADMIN_PORT: '',
    SWITCHBOARD_BASE_URL: 'https://sb.example.com/',
    SWITCHBOARD_PLUGIN_PATHS: '/opt/a::/opt/b',
    DATABASE_URL: 'postgres://u@db:5432/sb',
    SWITCHBOARD_SESSION_INACTIVITY_HOURS: '1.5',
  })
  expect(config).toMatchObject({
    apiPort: 9000,
    adminPort: 8080,
    baseUrl: 'https://sb.example.com',
    pluginPaths: ['/opt/a', '/opt/b'],
    databaseUrl: 'postgres://u@db:5432/sb',
    sessionInactivityHours: 1.5,
  })
})

test('one error names every bad variable', () => {
  let error: unknown
  try {
    loadConfig({
      SWITCHBOARD_API_PORT: 'eighty',
      SWITCHBOARD_ADMIN_PORT: '70000',
      DATABASE_URL: 'mysql://db/x',
      SWITCHBOARD_SESSION_MAX_DAYS: '-1',
      INTERNAL_API_SECRET: 'short',
      SWITCHBOARD_BASE_URL: 'ftp://x',
    })
  } catch (e) {
    error = e
  }
  expect(error).toBeInstanceOf(ConfigError)
  const problems = (error as ConfigError).problems
  expect(problems.map((p) => p.split(':')[0]).sort()).toEqual([
    'DATABASE_URL',
    'INTERNAL_API_SECRET',
    'SWITCHBOARD_ADMIN_PORT',
    'SWITCHBOARD_API_PORT',
    'SWITCHBOARD_BASE_URL',
    'SWITCHBOARD_SESSION_MAX_DAYS',
  ])
  expect((error as Error).message).toContain('(got "eighty")')
})

test('the throttle store is chosen by name, or left to the store kind when unset; another name is refused', () => {
  expect(loadConfig({}).throttleStore).toBeUndefined()
  expect(loadConfig({ SWITCHBOARD_THROTTLE_STORE: 'memory' }).throttleStore).toBe('memory')
  expect(() => loadConfig({ SWITCHBOARD_THROTTLE_STORE: 'redis' })).toThrow(/SWITCHBOARD_THROTTLE_STORE/)
})

test('OpenTelemetry: traces go to the traces endpoint, or the base endpoint’s /v1/traces, with the headers given; off without one or when told', () => {
  expect(loadConfig({}).tracing.endpoint).toBeUndefined()
  expect(loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://collector:4318/' }).tracing.endpoint).toBe('http://collector:4318/v1/traces')
  expect(loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://a:4318', OTEL_EXPORTER_OTLP_TRACES_ENDPOINT: 'http://b:4318/traces' }).tracing.endpoint).toBe('http://b:4318/traces')
  expect(loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://a:4318', OTEL_TRACES_EXPORTER: 'none' }).tracing.endpoint).toBeUndefined()
  expect(loadConfig({ OTEL_EXPORTER_OTLP_ENDPOINT: 'http://a:4318', OTEL_SDK_DISABLED: 'true' }).tracing.endpoint).toBeUndefined()
  expect(loadConfig({ OTEL_EXPORTER_OTLP_HEADERS: 'api-key=a%20b, tenant=t' }).tracing.headers).toEqual({ 'api-key': 'a b', tenant: 't' })
  expect(() => loadConfig({ OTEL_EXPORTER_OTLP_HEADERS: 'api-key=%E0%A4%A' })).toThrow(ConfigError)
})

test('DATABASE_DIRECT_URL goes beside DATABASE_URL only; a bad database URL is never echoed (it may hold a password)', () => {
  const config = loadConfig({ DATABASE_URL: 'postgres://u@pgbouncer:6432/sb', DATABASE_DIRECT_URL: 'postgres://u@db:5432/sb' })
  expect([config.databaseUrl, config.databaseDirectUrl]).toEqual(['postgres://u@pgbouncer:6432/sb', 'postgres://u@db:5432/sb'])
  expect(() => loadConfig({ DATABASE_DIRECT_URL: 'postgres://u@db:5432/sb' })).toThrow(/DATABASE_DIRECT_URL: it goes around the pooler/)
  expect(() => loadConfig({ DATABASE_URL: 'mysql://u:hunter2@db/x' })).toThrow(/DATABASE_URL: .*\(got a hidden value\)/)
  expect(() => loadConfig({ DATABASE_URL: 'mysql://u:hunter2@db/x' })).not.toThrow(/hunter2/)
})
