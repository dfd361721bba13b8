import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import type { OpenAPIHono } from '@hono/zod-openapi'
import type { MiddlewareHandler } from 'hono'
import type { ChannelKernel } from '../channels/contract.ts'
import type { Logger } from '../logger.ts'
import type { VirtualTool } from '../mcp/providers.ts'
import type { Runner } from '../runners/contract.ts'
import type { RunnerModels } from '../runners/registry.ts'
import type { ConfigSchema } from './config-schema.ts'
import { PluginError, type FoundPlugin } from './discover.ts'
import { liveView } from './live-settings.ts'
import type { Manifest } from './manifest.ts'
import type { Plugin, PluginEnv, PluginKernel } from './sdk.ts'
import { switchedRunner } from './switched-runner.ts'
import type { ThemeFiles } from './theme-files.ts'
import { recordUsage } from './usage.ts'

/** A plugin the host knows: its manifest and files from discovery, and what its setup() gave. */
export interface LoadedPlugin {
  manifest: Manifest
  schema: ConfigSchema | null
  theme: ThemeFiles | null
  router: OpenAPIHono<PluginEnv>
  startup: Array<() => void | Promise<void>>
  /** What the plugin's `context.settings` shows; replaced whenever stored settings change. */
  settings: Record<string, string>
}

/**
 * What plugins register while they are set up: runners by name (each refusing to run while its plugin is off),
 * the plugin of each, and mcp plugins' built-in tools by plugin name. Made empty before the kernel services, which
 * read it when they are called; filled by the loader once the kernel stands.
 */
export class PluginRegistry {
  readonly runners = new Map<string, Runner>()
  /** The plugin that registered each runner. */
  readonly runnerPlugins = new Map<string, string>()
  /** Built-in tools of mcp plugins, by plugin name: the virtual tool providers. */
  readonly toolProviders = new Map<string, VirtualTool[]>()
}

/** What the loader gives each plugin's setup() besides its own files and settings. */
export interface LoaderContext {
  log: Logger
  models: RunnerModels
  registry: PluginRegistry
  /** Whether a plugin is switched on (with all it depends on): a runner of a plugin switched off refuses turns. */
  isEnabled(plugin: string): boolean
  /** One of the plugin's own secrets. */
  secret(plugin: string, key: string): Promise<string | undefined>
  keepSecret(plugin: string, key: string, value: string | null): Promise<void>
  /** The /api/v1/* throttle, once the api app exists. */
  throttle: MiddlewareHandler<PluginEnv>
  /** The finished kernel services; none in tests of the loader alone. */
  kernel?: PluginKernel
  /** The channel kernel of each channel plugin; none in tests of the loader alone. */
  channelKernel?: (plugin: string) => ChannelKernel
}

const TOOL_NAME = /^[A-Za-z0-9_-]{1,64}$/

function isPlugin(value: unknown): value is Plugin {
  return typeof value === 'object' && value !== null && typeof (value as Plugin).setup === 'function'
}

/**
 * Imports one plugin's entry and runs its setup() against the finished kernel; a plugin that fails names its
 * manifest. Tools may be registered only during setup: agents and the gateway take the providers as they are.
 */
export async function setUpPlugin(found: FoundPlugin, loaded: LoadedPlugin, context: LoaderContext): Promise<void> {
  const { manifest, dir, file } = found
  const { registry, log, models } = context
  let module: { default?: unknown }
  try {
    module = await import(pathToFileURL(join(dir, manifest.entry)).href)
  } catch (error) {
    throw new PluginError(`${file}: entry: ${manifest.entry} could not be loaded: ${(error as Error).message}`)
  }
  if (!isPlugin(module.default)) throw new PluginError(`${file}: entry: ${manifest.entry} has no default export made with definePlugin()`)
  let settingUp = true
  let channelKernel: ChannelKernel | undefined
  try {
    await module.default.setup({
      manifest,
      settings: liveView(loaded),
      log: log.child({ plugin: manifest.name }),
      router: loaded.router,
      onStartup: (hook) => loaded.startup.push(hook),
      runner: (name) => registry.runners.get(name),
      model: (runner, modelId = '') => models.resolve(runner, modelId),
      registerTools(tools) {
        if (!settingUp) throw new Error(`${manifest.name}: registerTools() is for setup(), not later`)
        if (manifest.kind !== 'mcp') throw new Error(`only an mcp plugin serves tools; this one is of kind ${manifest.kind}`)
        const mine = registry.toolProviders.get(manifest.name) ?? []
        for (const tool of tools) {
          if (!TOOL_NAME.test(tool.name)) throw new Error(`tool name "${tool.name}": use 1 to 64 of A-Z a-z 0-9 _ -`)
          if (mine.some((t) => t.name === tool.name)) throw new Error(`a tool named "${tool.name}" is already registered`)
          mine.push(tool)
        }
        registry.toolProviders.set(manifest.name, mine)
      },
      registerRunner(runner) {
        if (registry.runners.has(runner.name)) throw new Error(`a runner named "${runner.name}" is already registered`)
        registry.runners.set(runner.name, switchedRunner(runner, manifest.name, (plugin) => context.isEnabled(plugin)))
        registry.runnerPlugins.set(runner.name, manifest.name)
      },
      secret: (key) => context.secret(manifest.name, key),
      keepSecret: (key, value) => context.keepSecret(manifest.name, key, value),
      get kernel() {
        if (!context.kernel) throw new Error(`${manifest.name}: no kernel services here (the loader runs alone)`)
        return context.kernel
      },
      get channels() {
        if (!context.channelKernel) throw new Error(`${manifest.name}: no channel kernel here (the loader runs alone)`)
        return (channelKernel ??= context.channelKernel(manifest.name))
      },
      throttle: context.throttle,
      recordUsage: (c, usage) => recordUsage(c, manifest.name, usage),
    })
  } catch (error) {
    throw new PluginError(`${file}: setup failed: ${(error as Error).message}`)
  } finally {
    settingUp = false
  }
}

