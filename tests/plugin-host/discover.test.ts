import { expect, test } from 'bun:test'
import { join } from 'node:path'
import { discoverPlugins, PluginError } from '../../src/plugin-host/discover.ts'
import { PluginHost } from '../../src/plugin-host/host.ts'
import { silentLogger } from '../../src/logger.ts'

const fixtures = join(import.meta.dir, '..', 'fixtures', 'plugins')
const root = (name: string) => join(fixtures, name)

function failure(roots: string[]): string {
  try {
    discoverPlugins(roots)
  } catch (error) {
    expect(error).toBeInstanceOf(PluginError)
    return (error as Error).message
  }
  throw new Error('expected the plugins to be refused')
}

test('manifests are read and put in dependency order', () => {
  const found = discoverPlugins([root('good')])
  const names = found.map((p) => p.manifest.name)
  expect(names.indexOf('alpha')).toBeLessThan(names.indexOf('beta'))
  expect(found.find((p) => p.manifest.name === 'hooks')!.manifest).toMatchObject({ kind: 'channel', public_api: true, public_api_prefix: '/webhooks/demo', dependencies: [] })
})

test.each([
  ['bad-json', 'broken/manifest.json: not valid JSON'],
  ['bad-field', 'wrong/manifest.json: colour: unknown field'],
  ['bad-field', 'wrong/manifest.json: kind:'],
  ['bad-field', 'wrong/manifest.json: version: a semantic version'],
  ['missing-dep', 'lonely/manifest.json: dependencies: no plugin named "ghost" is installed'],
  ['cycle', 'dependencies: a cycle first → second → first'],
  ['escape', 'outside/manifest.json: entry: must stay inside the plugin folder'],
  ['duplicate', 'two/manifest.json: name: "same" is also the name of'],
])('%s is refused, naming the file and the field', (fixture, message) => {
  expect(failure([root(fixture)])).toContain(message)
})

test('a missing plugin folder is refused by name', () => {
  expect(failure([root('no-such-folder')])).toContain('no-such-folder: plugin folder does not exist')
})

test('an entry without a definePlugin() default export is refused, naming its manifest', async () => {
  const found = discoverPlugins([root('no-export')])
  await expect(PluginHost.load(found, { log: silentLogger, env: {}, models: undefined as never, vault: undefined as never })).rejects.toThrow('empty/manifest.json: entry: index.ts has no default export made with definePlugin()')
})
