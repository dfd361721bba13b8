import { expect, test } from 'bun:test'
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { discoverPlugins } from '../../src/plugin-host/discover.ts'
import { PluginHost } from '../../src/plugin-host/host.ts'
import { silentLogger } from '../../src/logger.ts'

const root = (name: string) => join(import.meta.dir, '..', 'fixtures', 'plugins', name)
const load = (name: string) => PluginHost.load(discoverPlugins([root(name)]), { log: silentLogger, env: {}, models: undefined as never, vault: undefined as never })

test('an mcp plugin’s tools become a virtual tool provider named after the plugin', async () => {
  const host = await load('tools')
  expect([...host.toolProviders.keys()]).toEqual(['notes'])
  expect(host.toolProviders.get('notes')!.map((t) => t.name)).toEqual(['whoami', 'add-note'])
})

test('a plugin of another kind that registers tools is refused at start, naming its manifest', async () => {
  await expect(load('tools-wrong-kind')).rejects.toThrow('service/manifest.json: setup failed: only an mcp plugin serves tools; this one is of kind service')
})

test('tools registered after setup (say, at start-up) are refused, not silently left out', async () => {
  const host = await load('tools-late')
  await expect(host.startup()).rejects.toThrow('late: registerTools() is for setup(), not later')
  expect(host.toolProviders.size).toBe(0)
})

const own = (name: string) => join(import.meta.dir, 'fixtures', name)

test('a config_schema outside the supported subset stops the start, naming the manifest and each field', () => {
  let message = ''
  try {
    discoverPlugins([own('bad-schema')])
  } catch (error) {
    message = (error as Error).message
  }
  expect(message).toContain('nested/manifest.json: config_schema.properties.limits.type: must be one of string, number, integer, boolean')
  expect(message).toContain('nested/manifest.json: config_schema.properties.port.default: must be a whole number')
})

test('a theme whose files leave its folder is refused at load, naming the field', () => {
  expect(() => discoverPlugins([own('bad-ui')])).toThrow('leaky/manifest.json: ui.css: must stay inside the plugin folder')
  expect(() => discoverPlugins([own('bad-ui')])).toThrow('leaky/manifest.json: ui.logo: must stay inside the plugin folder')
})

test('a theme file that is a symbolic link out of the folder is refused too', () => {
  const root = mkdtempSync(join(tmpdir(), 'theme-link-'))
  try {
    const dir = join(root, 'linked')
    mkdirSync(dir)
    writeFileSync(join(dir, 'manifest.json'), JSON.stringify({ name: 'linked', version: '1.0.0', kind: 'theme', description: 'Links out.', entry: 'index.ts', ui: { css: 'theme.css' } }))
    writeFileSync(join(root, 'secret.css'), 'body { color: red }')
    symlinkSync(join(root, 'secret.css'), join(dir, 'theme.css'))
    expect(() => discoverPlugins([root])).toThrow('linked/manifest.json: ui.css: must stay inside the plugin folder')
  } finally {
    rmSync(root, { recursive: true, force: true })
  }
})

test('a shipped theme and the fixture themes load with their files; themes start switched off', async () => {
  const host = await PluginHost.load(discoverPlugins([own('runtime'), join(import.meta.dir, '..', '..', 'plugins')]).filter((f) => f.manifest.kind === 'theme'), {
    log: silentLogger,
    env: {},
    models: undefined as never,
    vault: undefined as never,
  })
  expect(host.describe().map((p) => [p.name, p.enabled, p.theme])).toEqual([
    ['theme-light', false, { css: true, logo: true }],
    ['theme-dark', false, { css: true, logo: false }],
  ])
  expect(host.activeTheme()).toBeUndefined()
})
