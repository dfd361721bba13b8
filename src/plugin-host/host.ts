import { join } from 'node:path'
import { pathToFileURL } from 'node:url'
import type { OpenAPIHono } from '@hono/zod-openapi'
import { Hono } from 'hono'
import { unauthorized } from '../auth/access.ts'
import type { ApiEnv } from '../api/context.ts'
import type { Logger } from '../logger.ts'
import { PluginError, type FoundPlugin } from './discover.ts'
import type { Manifest } from './manifest.ts'
import type { Runner } from '../runners/contract.ts'
import type { RunnerModels } from '../runners/registry.ts'
import type { Plugin, PluginEnv } from './sdk.ts'

interface LoadedPlugin {
  manifest: Manifest
  router: Hono<PluginEnv>
  startup: Array<() => void | Promise<void>>
}

function isPlugin(value: unknown): value is Plugin {
  return typeof value === 'object' && value !== null && typeof (value as Plugin).setup === 'function'
}

/** The loaded plugins: their routers to mount, their runners and their ON_STARTUP hooks, in dependency order. */
export class PluginHost {
  private constructor(
    private readonly plugins: LoadedPlugin[],
    /** Runners by name, as plugins registered them. */
    readonly runners: ReadonlyMap<string, Runner>,
  ) {}

  /** Imports each plugin's entry and runs its setup; a plugin that fails names its manifest. */
  static async load(found: readonly FoundPlugin[], log: Logger, env: Readonly<Record<string, string>>, models: RunnerModels): Promise<PluginHost> {
    const plugins: LoadedPlugin[] = []
    const runners = new Map<string, Runner>()
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
      const loaded: LoadedPlugin = { manifest, router: new Hono<PluginEnv>(), startup: [] }
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
          registerRunner(runner) {
            if (runners.has(runner.name)) throw new Error(`a runner named "${runner.name}" is already registered`)
            runners.set(runner.name, runner)
          },
        })
      } catch (error) {
        throw new PluginError(`${file}: setup failed: ${(error as Error).message}`)
      }
      plugins.push(loaded)
    }
    return new PluginHost(plugins, runners)
  }

  /** Mounts every router on the api app: public ones at their prefix, the others behind sign-in. */
  mount(app: OpenAPIHono<ApiEnv>): void {
    for (const { manifest, router } of this.plugins) {
      if (router.routes.length === 0) continue
      if (manifest.public_api) {
        app.route(manifest.public_api_prefix ?? `/${manifest.name}`, router as never)
      } else {
        const base = `/api/plugins/${manifest.name}`
        app.use(`${base}/*`, async (c, next) => {
          if (!c.get('actor')) throw unauthorized()
          await next()
        })
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
