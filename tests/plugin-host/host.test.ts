import { expect, test } from 'bun:test'
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
