import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import type { OpenAPIHono } from '@hono/zod-openapi'
import { requireActor } from '../auth/access.ts'
import { TtlCache } from '../cache.ts'
import type { EventBus } from '../events/bus.ts'
import { flushCaches, flushOn } from '../events/caches.ts'
import { systemClock, type Clock } from '../clock.ts'
import type { ApiEnv } from '../http/env.ts'
import type { Logger } from '../logger.ts'
import { PluginError, type FoundPlugin } from './discover.ts'
import type { Manifest } from './manifest.ts'
import type { VirtualTool } from '../mcp/providers.ts'
import type { Runner } from '../runners/contract.ts'
import type { RunnerModels } from '../runners/registry.ts'
import type { Vault } from '../vault/vault.ts'
import type { Plugin, PluginEnv } from './sdk.ts'
import type { MiddlewareHandler } from 'hono'
import { recordUsage } from './usage.ts'
import { createPluginRouter } from './openapi.ts'
import { describePluginRoutes } from './route-docs.ts'

interface LoadedPlugin {
  manifest: Manifest
  router: OpenAPIHono<PluginEnv>
  startup: Array<() => void | Promise<void>>
}

function isPlugin(value: unknown): value is Plugin {
  return typeof value === 'object' && value !== null && typeof (value as Plugin).setup === 'function'
}

export interface HostServices {
  log: Logger
  /** SWITCHBOARD_PLUGIN_* variables. */
  env: Readonly<Record<string, string>>
  models: RunnerModels
  vault: Vault
  /** Ages the secret cache; the system clock when not given. */
  clock?: Clock
  /** Flushes the secret cache when a secret is written in any process; none in tests of the loader alone. */
  events?: EventBus
}

const TOOL_NAME = /^[A-Za-z0-9_-]{1,64}$/

// A plugin's secret read through the SDK is kept this long; writes flush it in every process at once.
const SECRET_CACHE_MS = 60_000

/** The loaded plugins: their routers to mount, their runners and their ON_STARTUP hooks, in dependency order. */
export class PluginHost {
  readonly #secrets: TtlCache<string, string | undefined>
  /** The /api/v1/* throttle, for plugin routes that ask for it; set by mount(). */
  #apiRate: MiddlewareHandler = async () => {
    throw new Error('the plugin routes are not mounted yet')
  }

  private constructor(
    private readonly plugins: LoadedPlugin[],
    /** Runners by name, as plugins registered them. */
    readonly runners: ReadonlyMap<string, Runner>,
    /** The plugin that registered each runner. */
    private readonly runnerPlugins: ReadonlyMap<string, string>,
    /** Built-in tools of mcp plugins, by plugin name: the virtual tool providers. */
    readonly toolProviders: ReadonlyMap<string, readonly VirtualTool[]>,
    private readonly vault: Vault,
    clock: Clock,
    private readonly events: EventBus | undefined,
  ) {
    this.#secrets = new TtlCache(clock, SECRET_CACHE_MS)
    if (events) flushOn(events, 'plugin-secrets', () => this.#secrets.clear())
  }

  /** Imports each plugin's entry and runs its setup; a plugin that fails names its manifest. */
  static async load(found: readonly FoundPlugin[], services: HostServices): Promise<PluginHost> {
    const { log, env, models, vault } = services
    const plugins: LoadedPlugin[] = []
    const runners = new Map<string, Runner>()
    const runnerPlugins = new Map<string, string>()
    const toolProviders = new Map<string, VirtualTool[]>()
    let host: PluginHost | undefined
    for (const { manifest, dir, file } of found) {
      let module: { default?: unknown }
      try {
        module = await import(pathToFileURL(join(dir, manifest.entry)).href)
      } catch (error) {
        throw new PluginError(`${file}: entry: ${manifest.entry} could not be loaded: ${(error as Error).message}`)
      }
      if (!isPlugin(module.default)) {
        throw new PluginError(`${file}: entry: ${manifest.entry} has no default export made with definePlugin()`)
      }
      const loaded: LoadedPlugin = { manifest, router: createPluginRouter(), startup: [] }
      const pluginLog = prefixed(log, manifest.name)
      try {
        await module.default.setup({
          manifest,
          settings: settingsOf(manifest.name, env),
          log: pluginLog,
          router: loaded.router,
          onStartup: (hook) => loaded.startup.push(hook),
          runner: (name) => runners.get(name),
          model: (runner, modelId = '') => models.resolve(runner, modelId),
          registerTools(tools) {
            // Agents and the gateway take the providers as they are once start-up is done.
            if (plugins.includes(loaded)) throw new Error(`${manifest.name}: registerTools() is for setup(), not later`)
            if (manifest.kind !== 'mcp') throw new Error(`only an mcp plugin serves tools; this one is of kind ${manifest.kind}`)
            const mine = toolProviders.get(manifest.name) ?? []
            for (const tool of tools) {
              if (!TOOL_NAME.test(tool.name)) throw new Error(`tool name "${tool.name}": use 1 to 64 of A-Z a-z 0-9 _ -`)
              if (mine.some((t) => t.name === tool.name)) throw new Error(`a tool named "${tool.name}" is already registered`)
              mine.push(tool)
            }
            toolProviders.set(manifest.name, mine)
          },
          registerRunner(runner) {
            if (runners.has(runner.name)) throw new Error(`a runner named "${runner.name}" is already registered`)
            runners.set(runner.name, runner)
            runnerPlugins.set(runner.name, manifest.name)
          },
          secret: (key) => host!.secret(manifest.name, key),
          // The api app, and so its throttle, exists only once the plugins are loaded: mount() hands it over.
          throttle: (c, next) => host!.#apiRate(c, next),
          recordUsage: (c, usage) => recordUsage(c, manifest.name, usage),
        })
      } catch (error) {
        throw new PluginError(`${file}: setup failed: ${(error as Error).message}`)
      }
      plugins.push(loaded)
    }
    host = new PluginHost(plugins, runners, runnerPlugins, toolProviders, vault, services.clock ?? systemClock, services.events)
    return host
  }

  /** A plugin's own secret (vault name plugins/<plugin>/<key>), briefly cached. */
  async secret(plugin: string, key: string): Promise<string | undefined> {
    const name = `plugins/${plugin}/${key}`
    return this.#secrets.get(name, () => this.vault.get({ scope: 'global', ownerId: null, name }))
  }

  /** Stores a secret for the plugin that registered `runner` (a provider API key). */
  async setRunnerSecret(runner: string, key: string, value: string): Promise<void> {
    const plugin = this.runnerPlugins.get(runner)
    if (!plugin) throw new Error(`no plugin registered the runner ${runner}`)
    const name = `plugins/${plugin}/${key}`
    await this.vault.set({ scope: 'global', ownerId: null, name }, value)
    this.#secrets.delete(name)
    if (this.events) await flushCaches(this.events, 'plugin-secrets')
  }

  /** Mounts every router on the api app: public ones at their prefix, the others behind sign-in. */
  mount(app: OpenAPIHono<ApiEnv>, apiRate: MiddlewareHandler): void {
    this.#apiRate = apiRate
    for (const { manifest, router } of this.plugins) {
      if (router.routes.length === 0) continue
      // Mounting an OpenAPIHono router copies its declarations into the api app's document, under the prefix.
      describePluginRoutes(router, { name: manifest.name, private: !manifest.public_api })
      if (manifest.public_api) {
        app.route(manifest.public_api_prefix ?? `/${manifest.name}`, router as never)
      } else {
        const base = `/api/plugins/${manifest.name}`
        app.use(`${base}/*`, async (c, next) => {
          requireActor(c.get('actor'))
          await next()
        })
        // A signed-in plugin route is API like /api/v1/*, under the same per-user rate.
        app.use(`${base}/*`, apiRate)
        app.route(base, router as never)
      }
    }
  }

  /** ON_STARTUP: every hook, in dependency order. A failing hook stops the start, naming its plugin. */
  async startup(): Promise<void> {
    for (const { manifest, startup } of this.plugins) {
      for (const hook of startup) {
        try {
          await hook()
        } catch (error) {
          throw new PluginError(`Plugin ${manifest.name}: ON_STARTUP failed: ${(error as Error).message}`)
        }
      }
    }
  }

  /** What GET /api/plugins shows. */
  describe() {
    return this.plugins.map(({ manifest }) => ({
      name: manifest.name,
      version: manifest.version,
      kind: manifest.kind,
      description: manifest.description,
      public_api: manifest.public_api,
      mounted_at: manifest.public_api ? (manifest.public_api_prefix ?? `/${manifest.name}`) : `/api/plugins/${manifest.name}`,
      dependencies: manifest.dependencies,
    }))
  }
}

function settingsOf(plugin: string, env: Readonly<Record<string, string>>): Record<string, string> {
  const prefix = `SWITCHBOARD_PLUGIN_${plugin.toUpperCase().replaceAll('-', '_')}_`
  return Object.fromEntries(
    Object.entries(env)
      .filter(([name]) => name.startsWith(prefix))
      .map(([name, value]) => [name.slice(prefix.length).toLowerCase(), value]),
  )
}

function prefixed(log: Logger, plugin: string): Logger {
  const add = (fields?: Record<string, unknown>) => ({ plugin, ...fields })
  return {
    debug: (message, fields) => log.debug(message, add(fields)),
    info: (message, fields) => log.info(message, add(fields)),
    warn: (message, fields) => log.warn(message, add(fields)),
    error: (message, fields) => log.error(message, add(fields)),
  }
}
