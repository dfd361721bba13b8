import type { OpenAPIHono } from '@hono/zod-openapi'
import type { MiddlewareHandler } from 'hono'
import type { Clock } from '../clock.ts'
import type { Db } from '../db/schema.ts'
import { ApiError } from '../errors.ts'
import type { EventBus } from '../events/bus.ts'
import type { ApiEnv } from '../http/env.ts'
import type { Logger } from '../logger.ts'
import type { VirtualTool } from '../mcp/providers.ts'
import type { Runner } from '../runners/contract.ts'
import type { RunnerModels } from '../runners/registry.ts'
import type { Vault } from '../vault/vault.ts'
import type { ConfigSchema } from './config-schema.ts'
import { PluginError, type FoundPlugin } from './discover.ts'
import { effectiveSettings } from './live-settings.ts'
import { PluginRegistry, setUpPlugin, type LoadedPlugin } from './loader.ts'
import type { Manifest } from './manifest.ts'
import { mountPluginRoutes } from './mount.ts'
import { createPluginRouter } from './openapi.ts'
import { PluginSettings, type PluginSettingsView } from './plugin-settings.ts'
import type { Channels } from '../channels/channels.ts'
import type { PluginKernel } from './sdk.ts'
import { auditPlugin, lockStates, readStates, writeState, type PluginState } from './states.ts'
import type { Actor } from '../auth/actor.ts'

export type { LoadedPlugin } from './loader.ts'
export type { PluginSettingsView as PluginSettings } from './plugin-settings.ts'

export interface HostServices {
  log: Logger
  /** SWITCHBOARD_PLUGIN_* variables. */
  env: Readonly<Record<string, string>>
  models: RunnerModels
  vault: Vault
  /** Where plugin states are kept; without one (tests of the loader alone) every plugin keeps its default state. */
  db?: Db
  /** Ages the secret cache; the system clock when not given. */
  clock?: Clock
  /** Flushes the secret cache and follows plugin states changed in any process; none in tests of the loader alone. */
  events?: EventBus
}

/** What the plugins are set up against: the finished kernel. Absent parts (tests of the loader alone) refuse use. */
export interface KernelForPlugins {
  kernel?: PluginKernel
  channels?: Channels
}

/** What GET /api/plugins shows of a plugin. */
export interface PluginInfo {
  name: string
  version: string
  kind: Manifest['kind']
  description: string
  public_api: boolean
  mounted_at: string
  dependencies: string[]
  enabled: boolean
  config_schema: ConfigSchema | null
  theme: { css: boolean; logo: boolean } | null
}

/** The theme in use: its plugin and files. */
export interface ActiveTheme {
  plugin: string
  css?: string
  logo?: string
}

/**
 * The plugins, in two phases. Opened before the kernel services: which plugins there are (their manifests, in
 * dependency order), which are switched on (the gate every runner, tool and route of a plugin asks), their
 * settings and secrets, and the empty registry of runners and tools the kernel services read when called. Loaded
 * once the kernel stands: each plugin's setup() runs against it and fills the registry. Every plugin is set up
 * whatever its state, so switching one on needs no restart: its routes, runners and tools are there all along,
 * behind the gate.
 */
export class PluginHost {
  readonly #byName: Map<string, LoadedPlugin>
  readonly #registry = new PluginRegistry()
  readonly #settings: PluginSettings
  /** The stored states; a plugin missing here has its kind's default. */
  #states: Map<string, PluginState>
  /** Plugins switched on whose dependencies are all on too. */
  #active = new Set<string>()
  #loaded = false
  /** Reloads of the states run one after the other, so hooks fire in the order the changes were made. */
  #refreshing: Promise<void> = Promise.resolve()
  /** The /api/v1/* throttle, for plugin routes that ask for it; set by mount(). */
  #apiRate: MiddlewareHandler = async () => {
    throw new Error('the plugin routes are not mounted yet')
  }

  private constructor(
    private readonly found: readonly FoundPlugin[],
    private readonly plugins: LoadedPlugin[],
    private readonly services: HostServices,
    states: Map<string, PluginState>,
  ) {
    this.#byName = new Map(plugins.map((p) => [p.manifest.name, p]))
    this.#states = states
    this.#active = this.#activeOf(states)
    this.#settings = new PluginSettings(services, (name) => this.#plugin(name), (plugin) => this.#defaultState(plugin), (name) => this.#announce(name))
    const { events } = services
    if (events) {
      // This process followed its own change before announcing it.
      events.subscribe('plugin.changed', (_, origin) => {
        if (origin === 'elsewhere') void this.refresh().catch(() => {})
      })
      events.onMissed(() => void this.refresh().catch(() => {}))
    }
  }

  /** The first phase: the plugins found, their states and settings, and an empty registry. Nothing is imported. */
  static async open(found: readonly FoundPlugin[], services: HostServices): Promise<PluginHost> {
    const states = services.db ? await readStates(services.db) : new Map<string, PluginState>()
    const plugins = found.map(({ manifest, schema, theme }): LoadedPlugin => {
      const plugin: LoadedPlugin = { manifest, schema, theme, router: createPluginRouter(), startup: [], settings: {} }
      plugin.settings = effectiveSettings(plugin, states.get(manifest.name), services.env)
      return plugin
    })
    return new PluginHost(found, plugins, services, states)
  }

  /** Both phases at once, for the loader's own tests (no kernel: a plugin that reaches for it is told so). */
  static async load(found: readonly FoundPlugin[], services: HostServices, kernel: KernelForPlugins = {}): Promise<PluginHost> {
    const host = await PluginHost.open(found, services)
    await host.load(kernel)
    return host
  }

  /** The second phase: imports each plugin's entry and runs its setup() against the finished kernel. */
  async load({ kernel, channels }: KernelForPlugins): Promise<void> {
    if (this.#loaded) throw new Error('the plugins are loaded already')
    this.#loaded = true
    const context = {
      log: this.services.log,
      models: this.services.models,
      registry: this.#registry,
      isEnabled: (plugin: string) => this.isEnabled(plugin),
      secret: (plugin: string, key: string) => this.#settings.secret(plugin, key),
      keepSecret: (plugin: string, key: string, value: string | null) => this.#settings.writeSecrets(plugin, { [key]: value }),
      // The api app, and so its throttle, exists only once the plugins are loaded: mount() hands it over.
      throttle: ((c, next) => this.#apiRate(c, next)) as MiddlewareHandler,
      kernel,
      channelKernel: channels ? (plugin: string) => channels.kernelFor(plugin) : undefined,
    }
    for (const [index, found] of this.found.entries()) await setUpPlugin(found, this.plugins[index]!, context)
  }

  /** Runners by name, as plugins registered them; each refuses to run while its plugin is switched off. */
  get runners(): ReadonlyMap<string, Runner> {
    return this.#registry.runners
  }

  /** Built-in tools of mcp plugins, by plugin name: the virtual tool providers (asked with isEnabled()). */
  get toolProviders(): ReadonlyMap<string, readonly VirtualTool[]> {
    return this.#registry.toolProviders
  }

  /** Whether the plugin is switched on, and so are all it depends on. */
  isEnabled(name: string): boolean {
    return this.#active.has(name)
  }

  /** Stores a secret for the plugin that registered `runner` (a provider API key). */
  async setRunnerSecret(runner: string, key: string, value: string, by: Actor): Promise<void> {
    const plugin = this.#registry.runnerPlugins.get(runner)
    if (!plugin) throw new Error(`no plugin registered the runner ${runner}`)
    await this.#settings.writeSecrets(plugin, { [key]: value }, by)
  }

  /** Mounts every plugin's router on the api app, each behind the gate (see mountPluginRoutes). */
  mount(app: OpenAPIHono<ApiEnv>, apiRate: MiddlewareHandler): void {
    this.#apiRate = apiRate
    mountPluginRoutes(app, this.plugins, (name) => this.isEnabled(name), apiRate)
  }

  /**
   * ON_STARTUP: every hook of the plugins switched on, in dependency order. A failing hook stops the start, naming
   * its plugin.
   */
  async startup(): Promise<void> {
    for (const plugin of this.plugins) {
      if (!this.isEnabled(plugin.manifest.name)) continue
      await this.#fire(plugin)
    }
  }

  /** What GET /api/plugins shows. */
  describe(): PluginInfo[] {
    return this.plugins.map((plugin) => this.#info(plugin))
  }

  /** One plugin, as GET /api/plugins shows it; 404 for a name no plugin has. */
  info(name: string): PluginInfo {
    return this.#info(this.#plugin(name))
  }

  /** Every runner, the plugin that registered it, and whether that plugin is on. */
  runnerList(): Array<{ name: string; plugin: string; enabled: boolean }> {
    return [...this.#registry.runnerPlugins].map(([name, plugin]) => ({ name, plugin, enabled: this.isEnabled(plugin) }))
  }

  /** The theme plugin switched on, if any. */
  activeTheme(): ActiveTheme | undefined {
    const plugin = this.plugins.find((p) => p.theme && this.isEnabled(p.manifest.name))
    return plugin?.theme ? { plugin: plugin.manifest.name, ...plugin.theme } : undefined
  }

  /**
   * Switches a plugin on or off in every process. On: its dependencies must be on (409 naming them), and a theme
   * switches the other theme off. Off: no plugin that is on may depend on it (409 naming them).
   */
  async setEnabled(name: string, enabled: boolean, by: Actor): Promise<PluginInfo> {
    const plugin = this.#plugin(name)
    const changed = await this.#db().transaction().execute(async (tx) => {
      await lockStates(tx)
      const states = await readStates(tx)
      const state = (p: LoadedPlugin) => states.get(p.manifest.name) ?? this.#defaultState(p)
      if (state(plugin).enabled === enabled) return false
      const onDependents = (target: LoadedPlugin) => this.plugins.filter((p) => p.manifest.dependencies.includes(target.manifest.name) && state(p).enabled).map((p) => p.manifest.name)
      if (enabled) {
        const off = plugin.manifest.dependencies.filter((d) => !state(this.#plugin(d)).enabled)
        if (off.length > 0) throw new ApiError('conflict', `The plugin ${name} depends on ${off.join(', ')}, which ${off.length > 1 ? 'are' : 'is'} disabled: enable ${off.length > 1 ? 'them' : 'it'} first.`)
        const otherThemes = plugin.manifest.kind === 'theme' ? this.plugins.filter((p) => p !== plugin && p.manifest.kind === 'theme' && state(p).enabled) : []
        for (const other of otherThemes) {
          const needing = onDependents(other)
          if (needing.length > 0) throw new ApiError('conflict', `Enabling the theme ${name} disables the theme ${other.manifest.name}, which ${needing.join(', ')} ${needing.length > 1 ? 'need' : 'needs'}.`)
          await writeState(tx, other.manifest.name, { ...state(other), enabled: false })
          await auditPlugin(tx, by, other.manifest.name, 'plugin_disable', { enabled: { from: true, to: false }, because: `the theme ${name} was enabled` })
        }
      } else {
        const needing = onDependents(plugin)
        if (needing.length > 0) throw new ApiError('conflict', `${needing.join(', ')} ${needing.length > 1 ? 'depend' : 'depends'} on the plugin ${name} and ${needing.length > 1 ? 'are' : 'is'} enabled: disable ${needing.length > 1 ? 'them' : 'it'} first.`)
      }
      await writeState(tx, name, { ...state(plugin), enabled })
      await auditPlugin(tx, by, name, enabled ? 'plugin_enable' : 'plugin_disable', { enabled: { from: !enabled, to: enabled } })
      return true
    })
    if (changed) await this.#announce(name)
    return this.#info(plugin)
  }

  /** A plugin's settings as stored, read afresh; secrets only say whether they are set. */
  settings(name: string): Promise<PluginSettingsView> {
    return this.#settings.read(name)
  }

  /** Replaces a plugin's settings and secrets (see PluginSettings.write); the plugin follows in every process. */
  writeSettings(name: string, body: Record<string, unknown>, by: Actor, expected?: number[]): Promise<PluginSettingsView> {
    return this.#settings.write(name, body, by, expected)
  }

  /**
   * Reads the states afresh and follows them: a plugin that came on, or whose settings changed while on, runs its
   * ON_STARTUP hooks again. A failing hook is logged: the change is made, and the plugin says what went wrong.
   */
  refresh(): Promise<void> {
    const next = this.#refreshing.then(() => this.#reload())
    this.#refreshing = next.catch((error: Error) => this.services.log.error('plugin states could not be read', { error: error.message }))
    return next
  }

  async #reload(): Promise<void> {
    if (!this.services.db) return
    const states = await readStates(this.services.db)
    const [before, versions] = [this.#active, this.#states]
    this.#states = states
    this.#active = this.#activeOf(states)
    for (const plugin of this.plugins) {
      const name = plugin.manifest.name
      plugin.settings = effectiveSettings(plugin, states.get(name), this.services.env)
      const changed = !before.has(name) || (versions.get(name)?.version ?? 0) !== (states.get(name)?.version ?? 0)
      if (!this.#active.has(name) || !changed) continue
      try {
        await this.#fire(plugin)
      } catch (error) {
        this.services.log.error('plugin start-up hook failed after a change', { plugin: name, error: (error as Error).message })
      }
    }
  }

  /** Follows a change here, then tells the other processes, which read the store themselves. */
  async #announce(name: string): Promise<void> {
    await this.refresh()
    await this.services.events?.publish('plugin.changed', { plugin: name })
  }

  async #fire({ manifest, startup }: LoadedPlugin): Promise<void> {
    for (const hook of startup) {
      try {
        await hook()
      } catch (error) {
        throw new PluginError(`Plugin ${manifest.name}: ON_STARTUP failed: ${(error as Error).message}`)
      }
    }
  }

  #activeOf(states: Map<string, PluginState>): Set<string> {
    const active = new Set<string>()
    // Dependency order: a plugin's dependencies are judged before it.
    for (const plugin of this.plugins) {
      const { name, dependencies } = plugin.manifest
      if ((states.get(name) ?? this.#defaultState(plugin)).enabled && dependencies.every((d) => active.has(d))) active.add(name)
    }
    return active
  }

  /** Without a row: on, except a theme, which waits to be chosen. */
  #defaultState(plugin: LoadedPlugin): PluginState {
    return { enabled: plugin.manifest.kind !== 'theme', settings: {}, version: 0 }
  }

  #plugin(name: string): LoadedPlugin {
    const plugin = this.#byName.get(name)
    if (!plugin) throw new ApiError('not_found', `There is no plugin ${name}. Plugins: ${[...this.#byName.keys()].join(', ')}.`)
    return plugin
  }

  #db(): Db {
    if (!this.services.db) throw new Error('plugin states need a store: give PluginHost.load a db')
    return this.services.db
  }

  #info({ manifest, schema, theme }: LoadedPlugin): PluginInfo {
    return {
      name: manifest.name,
      version: manifest.version,
      kind: manifest.kind,
      description: manifest.description,
      public_api: manifest.public_api,
      mounted_at: manifest.public_api ? (manifest.public_api_prefix ?? `/${manifest.name}`) : `/api/plugins/${manifest.name}`,
      dependencies: manifest.dependencies,
      enabled: this.isEnabled(manifest.name),
      config_schema: schema,
      theme: theme ? { css: theme.css !== undefined, logo: theme.logo !== undefined } : null,
    }
  }
}
