import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import type { OpenAPIHono } from '@hono/zod-openapi'
import type { MiddlewareHandler } from 'hono'
import { requireActor } from '../auth/access.ts'
import { TtlCache } from '../cache.ts'
import { systemClock, type Clock } from '../clock.ts'
import type { Db } from '../db/schema.ts'
import { ApiError } from '../errors.ts'
import type { EventBus } from '../events/bus.ts'
import { flushOn } from '../events/caches.ts'
import type { ApiEnv } from '../http/env.ts'
import type { Logger } from '../logger.ts'
import type { VirtualTool } from '../mcp/providers.ts'
import type { Runner } from '../runners/contract.ts'
import type { RunnerModels } from '../runners/registry.ts'
import type { Vault } from '../vault/vault.ts'
import { isSecret, storedValues, validateSettings, type ConfigSchema } from './config-schema.ts'
import { PluginError, type FoundPlugin } from './discover.ts'
import { effectiveSettings, environmentSettings, liveView } from './live-settings.ts'
import type { Manifest } from './manifest.ts'
import { createPluginRouter } from './openapi.ts'
import { describePluginRoutes } from './route-docs.ts'
import type { Channels } from '../channels/channels.ts'
import type { ChannelKernel } from '../channels/contract.ts'
import type { Plugin, PluginEnv, PluginKernel } from './sdk.ts'
import { lockStates, readStates, writeState, type PluginState } from './states.ts'
import { switchedRunner } from './switched-runner.ts'
import type { ThemeFiles } from './theme-files.ts'
import { recordUsage } from './usage.ts'

interface LoadedPlugin {
  manifest: Manifest
  schema: ConfigSchema | null
  theme: ThemeFiles | null
  router: OpenAPIHono<PluginEnv>
  startup: Array<() => void | Promise<void>>
  /** What the plugin's `context.settings` shows; replaced whenever stored settings change. */
  settings: Record<string, string>
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
  /** Where plugin states are kept; without one (tests of the loader alone) every plugin keeps its default state. */
  db?: Db
  /** Ages the secret cache; the system clock when not given. */
  clock?: Clock
  /** Flushes the secret cache and follows plugin states changed in any process; none in tests of the loader alone. */
  events?: EventBus
  /**
   * The kernel services built-in tool plugins stand on, filled in once boot has built them (they need the plugins'
   * tools in turn); none in tests of the loader alone.
   */
  kernel?: PluginKernel
  /** What channel plugins receive and answer through; none in tests of the loader alone. */
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

/** A plugin's settings as GET /api/plugins/{name}/settings shows them; secrets only say whether they are set. */
export interface PluginSettings {
  values: Record<string, string | number | boolean>
  secrets: Record<string, { set: boolean }>
  fixed_by_environment: string[]
  version: number
}

/** The theme in use: its plugin and files. */
export interface ActiveTheme {
  plugin: string
  css?: string
  logo?: string
}

const TOOL_NAME = /^[A-Za-z0-9_-]{1,64}$/

// A plugin's secret read through the SDK is kept this long; writes flush it in every process at once.
const SECRET_CACHE_MS = 60_000

/**
 * The loaded plugins: their routers to mount, their runners and tools, their ON_STARTUP hooks, in dependency order;
 * and which of them are switched on. Every plugin is set up at boot whatever its state, so switching one on needs
 * no restart: its routes, runners and tools are there all along, behind a check of the live state.
 */
export class PluginHost {
  readonly #secrets: TtlCache<string, string | undefined>
  readonly #byName: Map<string, LoadedPlugin>
  /** The stored states; a plugin missing here has its kind's default. */
  #states: Map<string, PluginState>
  /** Plugins switched on whose dependencies are all on too. */
  #active = new Set<string>()
  /** Reloads of the states run one after the other, so hooks fire in the order the changes were made. */
  #refreshing: Promise<void> = Promise.resolve()
  /** The /api/v1/* throttle, for plugin routes that ask for it; set by mount(). */
  #apiRate: MiddlewareHandler = async () => {
    throw new Error('the plugin routes are not mounted yet')
  }

  private constructor(
    private readonly plugins: LoadedPlugin[],
    /** Runners by name, as plugins registered them; each refuses to run while its plugin is switched off. */
    readonly runners: ReadonlyMap<string, Runner>,
    /** The plugin that registered each runner. */
    private readonly runnerPlugins: ReadonlyMap<string, string>,
    /** Built-in tools of mcp plugins, by plugin name: the virtual tool providers (asked with isEnabled()). */
    readonly toolProviders: ReadonlyMap<string, readonly VirtualTool[]>,
    private readonly services: HostServices,
    states: Map<string, PluginState>,
  ) {
    this.#byName = new Map(plugins.map((p) => [p.manifest.name, p]))
    this.#states = states
    this.#active = this.#activeOf(states)
    this.#secrets = new TtlCache(services.clock ?? systemClock, SECRET_CACHE_MS)
    const { events } = services
    if (events) {
      flushOn(events, 'plugin-secrets', () => this.#secrets.clear())
      // This process followed its own change before announcing it.
      events.subscribe('plugin.changed', (_, origin) => {
        if (origin === 'elsewhere') void this.refresh().catch(() => {})
      })
      events.onMissed(() => void this.refresh().catch(() => {}))
    }
  }

  /** Imports each plugin's entry and runs its setup; a plugin that fails names its manifest. */
  static async load(found: readonly FoundPlugin[], services: HostServices): Promise<PluginHost> {
    const { log, env, models } = services
    const states = services.db ? await readStates(services.db) : new Map<string, PluginState>()
    const plugins: LoadedPlugin[] = []
    const runners = new Map<string, Runner>()
    const runnerPlugins = new Map<string, string>()
    const toolProviders = new Map<string, VirtualTool[]>()
    let host: PluginHost | undefined
    for (const { manifest, dir, file, schema, theme } of found) {
      let module: { default?: unknown }
      try {
        module = await import(pathToFileURL(join(dir, manifest.entry)).href)
      } catch (error) {
        throw new PluginError(`${file}: entry: ${manifest.entry} could not be loaded: ${(error as Error).message}`)
      }
      if (!isPlugin(module.default)) {
        throw new PluginError(`${file}: entry: ${manifest.entry} has no default export made with definePlugin()`)
      }
      const loaded: LoadedPlugin = { manifest, schema, theme, router: createPluginRouter(), startup: [], settings: {} }
      let channelKernel: ChannelKernel | undefined
      loaded.settings = effectiveSettings(loaded, states.get(manifest.name), env)
      const pluginLog = prefixed(log, manifest.name)
      try {
        await module.default.setup({
          manifest,
          settings: liveView(loaded),
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
            runners.set(runner.name, switchedRunner(runner, manifest.name, (plugin) => host?.isEnabled(plugin) ?? true))
            runnerPlugins.set(runner.name, manifest.name)
          },
          secret: (key) => host!.secret(manifest.name, key),
          get kernel() {
            if (!services.kernel?.plans) throw new Error(`${manifest.name}: the kernel services are there once boot is over, not during setup()`)
            return services.kernel
          },
          get channels() {
            if (!services.channels) throw new Error(`${manifest.name}: no channel kernel here (the loader runs alone)`)
            return (channelKernel ??= services.channels.kernelFor(manifest.name))
          },
          // The api app, and so its throttle, exists only once the plugins are loaded: mount() hands it over.
          throttle: (c, next) => host!.#apiRate(c, next),
          recordUsage: (c, usage) => recordUsage(c, manifest.name, usage),
        })
      } catch (error) {
        throw new PluginError(`${file}: setup failed: ${(error as Error).message}`)
      }
      plugins.push(loaded)
    }
    host = new PluginHost(plugins, runners, runnerPlugins, toolProviders, services, states)
    return host
  }

  /** Whether the plugin is switched on, and so are all it depends on. */
  isEnabled(name: string): boolean {
    return this.#active.has(name)
  }

  /** A plugin's own secret (vault name plugins/<plugin>/<key>), briefly cached. */
  async secret(plugin: string, key: string): Promise<string | undefined> {
    const name = `plugins/${plugin}/${key}`
    return this.#secrets.get(name, () => this.services.vault.get({ scope: 'global', ownerId: null, name }))
  }

  /** Stores a secret for the plugin that registered `runner` (a provider API key). */
  async setRunnerSecret(runner: string, key: string, value: string): Promise<void> {
    const plugin = this.runnerPlugins.get(runner)
    if (!plugin) throw new Error(`no plugin registered the runner ${runner}`)
    await this.#writeSecrets(plugin, { [key]: value })
  }

  /**
   * Mounts every router on the api app: public ones at their prefix, the others behind sign-in. Hono cannot
   * unmount a route, so each answers only while its plugin is on, and a 404 problem while it is off.
   */
  mount(app: OpenAPIHono<ApiEnv>, apiRate: MiddlewareHandler): void {
    this.#apiRate = apiRate
    for (const { manifest, router } of this.plugins) {
      if (router.routes.length === 0) continue
      const name = manifest.name
      const off = () => new ApiError('not_found', `The plugin ${name} is disabled; its routes answer again once a superadmin enables it.`)
      // Mounting an OpenAPIHono router copies its declarations into the api app's document, under the prefix.
      describePluginRoutes(router, { name, private: !manifest.public_api })
      if (manifest.public_api) {
        // A prefix may be shared (even "/"): while off, a request falls through to whatever else answers the path,
        // and is refused only when nothing outside this plugin would.
        const mine = new Set<object>()
        for (const route of router.routes) {
          const handler = route.handler
          route.handler = (c, next) => {
            if (this.isEnabled(name)) return handler(c, next)
            const later = c.req.matchedRoutes.slice(c.req.routeIndex + 1)
            if (later.some((r) => r.method !== 'ALL' && !mine.has(r))) return next()
            throw off()
          }
        }
        const before = app.routes.length
        app.route(manifest.public_api_prefix ?? `/${name}`, router as never)
        for (const route of app.routes.slice(before)) mine.add(route)
      } else {
        const base = `/api/plugins/${name}`
        app.use(`${base}/*`, async (_c, next) => {
          if (!this.isEnabled(name)) throw off()
          await next()
        })
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
    return [...this.runnerPlugins].map(([name, plugin]) => ({ name, plugin, enabled: this.isEnabled(plugin) }))
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
  async setEnabled(name: string, enabled: boolean): Promise<PluginInfo> {
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
        }
      } else {
        const needing = onDependents(plugin)
        if (needing.length > 0) throw new ApiError('conflict', `${needing.join(', ')} ${needing.length > 1 ? 'depend' : 'depends'} on the plugin ${name} and ${needing.length > 1 ? 'are' : 'is'} enabled: disable ${needing.length > 1 ? 'them' : 'it'} first.`)
      }
      await writeState(tx, name, { ...state(plugin), enabled })
      return true
    })
    if (changed) await this.#announce(name)
    return this.#info(plugin)
  }

  /** A plugin's settings as stored, read afresh; secrets only say whether they are set. */
  async settings(name: string): Promise<PluginSettings> {
    const plugin = this.#plugin(name)
    const state = (await readStates(this.#db())).get(name) ?? this.#defaultState(plugin)
    const env = environmentSettings(name, this.services.env)
    const stored = await this.#storedSecrets(name)
    const secretKeys = Object.entries(plugin.schema?.properties ?? {}).filter(([, spec]) => isSecret(spec)).map(([key]) => key)
    return {
      values: storedValues(plugin.schema, state.settings),
      secrets: Object.fromEntries(secretKeys.map((key) => [key, { set: stored.has(key) || key in env }])),
      fixed_by_environment: Object.keys(env).sort(),
      version: state.version,
    }
  }

  /**
   * Replaces a plugin's settings: non-secret ones as given (a key left out falls back to its default), secrets set
   * when given and deleted when null. 422 with a problem per key; 412 when `expected` does not name the version.
   */
  async writeSettings(name: string, body: Record<string, unknown>, expected?: number[]): Promise<PluginSettings> {
    const plugin = this.#plugin(name)
    const schema: ConfigSchema = plugin.schema ?? { type: 'object', properties: {}, required: [] }
    const env = environmentSettings(name, this.services.env)
    const stored = await this.#storedSecrets(name)
    const { write, errors } = validateSettings(schema, body, (key) => key in env || stored.has(key))
    if (errors.length > 0) {
      throw new ApiError('validation_error', `${errors.length} setting(s) are not valid: ${errors.map((e) => `${e.path}: ${e.message}`).join('; ')}`, { errors })
    }
    await this.#db().transaction().execute(async (tx) => {
      await lockStates(tx)
      const state = (await readStates(tx)).get(name) ?? this.#defaultState(plugin)
      if (expected && !expected.includes(state.version)) {
        throw new ApiError('precondition_failed', `The settings changed since you read them (now version ${state.version}); read them again and retry.`)
      }
      await writeState(tx, name, { enabled: state.enabled, settings: write.values })
    })
    if (Object.keys(write.secrets).length > 0) await this.#writeSecrets(name, write.secrets)
    await this.#announce(name)
    return this.settings(name)
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

  async #writeSecrets(plugin: string, secrets: Record<string, string | null>): Promise<void> {
    const { vault } = this.services
    // The vault announces each change, which drops the cached secrets in every process.
    for (const [key, value] of Object.entries(secrets)) {
      const ref = { scope: 'global' as const, ownerId: null, name: `plugins/${plugin}/${key}` }
      if (value === null) await vault.delete(ref)
      else await vault.set(ref, value)
      this.#secrets.delete(ref.name)
    }
  }

  /** The keys of the plugin's secrets kept in the vault. */
  async #storedSecrets(plugin: string): Promise<Set<string>> {
    const prefix = `plugins/${plugin}/`
    return new Set((await this.services.vault.list('global', null, prefix)).map((s) => s.name.slice(prefix.length)))
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

function prefixed(log: Logger, plugin: string): Logger {
  const add = (fields?: Record<string, unknown>) => ({ plugin, ...fields })
  return {
    debug: (message, fields) => log.debug(message, add(fields)),
    info: (message, fields) => log.info(message, add(fields)),
    warn: (message, fields) => log.warn(message, add(fields)),
    error: (message, fields) => log.error(message, add(fields)),
  }
}
