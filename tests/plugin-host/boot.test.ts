import { expect, test } from 'bun:test'
import { join } from 'node:path'
import { discoverPlugins } from '../../src/plugin-host/discover.ts'
import { PluginHost } from '../../src/plugin-host/host.ts'
import { silentLogger } from '../../src/logger.ts'
import { seenInSetup } from '../fixtures/plugins/kernel-in-setup/early/index.ts'
import { startTestPlatform } from '../helpers/platform.ts'

const FIXTURE = join(import.meta.dir, '..', 'fixtures', 'plugins', 'kernel-in-setup')

// The boot has two phases: the kernel services first (with an empty registry of runners and tools, which they read
// when called), then the plugins, set up against the finished kernel.
test('a plugin set up at boot finds the kernel services and its channel kernel already there', async () => {
  const p = await startTestPlatform({ SWITCHBOARD_PLUGIN_PATHS: FIXTURE })
  try {
    expect(seenInSetup).toEqual({ plans: true, records: true, channels: true })
    // The registry the kernel was built with is the one the plugins filled: the shipped runners and tools are there.
    expect((await p.client().GET('/api/runners')).data!.data.map((r) => r.name)).toContain('openai')
    expect((await p.client().GET('/api/mcp/tools')).data!.data.map((s) => s.name)).toContain('mcp-planning')
  } finally {
    await p.close()
  }
})

test('loaded alone, without a kernel, a plugin that reaches for it is told why', async () => {
  for (const key of Object.keys(seenInSetup)) delete seenInSetup[key as keyof typeof seenInSetup]
  await PluginHost.load(discoverPlugins([FIXTURE]), { log: silentLogger, env: {}, models: undefined as never, vault: undefined as never })
  expect(seenInSetup.error).toBe('early: no kernel services here (the loader runs alone)')
})
