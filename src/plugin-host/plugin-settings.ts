import { TtlCache } from '../cache.ts'
import { systemClock, type Clock } from '../clock.ts'
import type { Db } from '../db/schema.ts'
import { ApiError } from '../errors.ts'
import type { EventBus } from '../events/bus.ts'
import { flushOn } from '../events/caches.ts'
import type { Vault } from '../vault/vault.ts'
import { isSecret, storedValues, validateSettings, type ConfigSchema } from './config-schema.ts'
import { environmentSettings } from './live-settings.ts'
import type { LoadedPlugin } from './loader.ts'
import { auditPlugin, lockStates, readStates, writeState, type PluginState } from './states.ts'
import { CHANGED } from '../audit/changes.ts'
import type { Actor } from '../auth/actor.ts'

/** A plugin's settings as GET /api/plugins/{name}/settings shows them; secrets only say whether they are set. */
export interface PluginSettingsView {
  values: Record<string, string | number | boolean>
  secrets: Record<string, { set: boolean }>
  fixed_by_environment: string[]
  version: number
}

// A plugin's secret read through the SDK is kept this long; writes flush it in every process at once.
const SECRET_CACHE_MS = 60_000

export interface PluginSettingsDeps {
  vault: Vault
  /** SWITCHBOARD_PLUGIN_* variables. */
  env: Readonly<Record<string, string>>
  db?: Db
  clock?: Clock
  events?: EventBus
}

/**
 * Plugins' settings (kept with their states) and secrets (kept in the vault, as plugins/<plugin>/<key>): read,
 * validated against the manifest's config_schema, written. What follows a change (ON_STARTUP again, the other
 * processes reading afresh) is the host's: `changed` tells it.
 */
export class PluginSettings {
  readonly #secrets: TtlCache<string, string | undefined>

  constructor(
    private readonly deps: PluginSettingsDeps,
    private readonly plugin: (name: string) => LoadedPlugin,
    private readonly defaultState: (plugin: LoadedPlugin) => PluginState,
    private readonly changed: (name: string) => Promise<void>,
  ) {
    this.#secrets = new TtlCache(deps.clock ?? systemClock, SECRET_CACHE_MS)
    if (deps.events) flushOn(deps.events, 'plugin-secrets', () => this.#secrets.clear())
  }

  /** A plugin's own secret, briefly cached. */
  async secret(plugin: string, key: string): Promise<string | undefined> {
    const name = `plugins/${plugin}/${key}`
    return this.#secrets.get(name, () => this.deps.vault.get({ scope: 'global', ownerId: null, name }))
  }

  /** A plugin's settings as stored, read afresh; secrets only say whether they are set. */
  async read(name: string): Promise<PluginSettingsView> {
    const plugin = this.plugin(name)
    const state = (await readStates(this.#db())).get(name) ?? this.defaultState(plugin)
    const env = environmentSettings(name, this.deps.env)
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
  async write(name: string, body: Record<string, unknown>, by: Actor, expected?: number[]): Promise<PluginSettingsView> {
    const plugin = this.plugin(name)
    const schema: ConfigSchema = plugin.schema ?? { type: 'object', properties: {}, required: [] }
    const env = environmentSettings(name, this.deps.env)
    const stored = await this.#storedSecrets(name)
    const { write, errors } = validateSettings(schema, body, (key) => key in env || stored.has(key))
    if (errors.length > 0) {
      throw new ApiError('validation_error', `${errors.length} setting(s) are not valid: ${errors.map((e) => `${e.path}: ${e.message}`).join('; ')}`, { errors })
    }
    await this.#db().transaction().execute(async (tx) => {
      await lockStates(tx)
      const state = (await readStates(tx)).get(name) ?? this.defaultState(plugin)
      if (expected && !expected.includes(state.version)) {
        throw new ApiError('precondition_failed', `The settings changed since you read them (now version ${state.version}); read them again and retry.`)
      }
      await writeState(tx, name, { enabled: state.enabled, settings: write.values })
      const changes: Record<string, unknown> = {}
      for (const key of new Set([...Object.keys(state.settings), ...Object.keys(write.values)])) {
        const [from, to] = [state.settings[key] ?? null, write.values[key] ?? null]
        if (JSON.stringify(from) !== JSON.stringify(to)) changes[key] = { from, to }
      }
      for (const [key, value] of Object.entries(write.secrets)) changes[key] = value === null ? 'deleted' : CHANGED
      await auditPlugin(tx, by, name, 'plugin_settings', changes)
    })
    if (Object.keys(write.secrets).length > 0) await this.writeSecrets(name, write.secrets)
    await this.changed(name)
    return this.read(name)
  }

  /** Sets (or, with null, deletes) secrets of a plugin; audited as `by`'s vault writes when a person makes them alone. */
  async writeSecrets(plugin: string, secrets: Record<string, string | null>, by?: Actor): Promise<void> {
    const { vault } = this.deps
    // The vault announces each change, which drops the cached secrets in every process.
    for (const [key, value] of Object.entries(secrets)) {
      const ref = { scope: 'global' as const, ownerId: null, name: `plugins/${plugin}/${key}` }
      if (value === null) await vault.delete(ref, by)
      else await vault.set(ref, value, by)
      this.#secrets.delete(ref.name)
    }
  }

  /** The keys of the plugin's secrets kept in the vault. */
  async #storedSecrets(plugin: string): Promise<Set<string>> {
    const prefix = `plugins/${plugin}/`
    return new Set((await this.deps.vault.list('global', null, prefix)).map((s) => s.name.slice(prefix.length)))
  }

  #db(): Db {
    if (!this.deps.db) throw new Error('plugin settings need a store: give the plugin host a db')
    return this.deps.db
  }
}
