import { defaultValues, storedValues, type ConfigSchema } from './config-schema.ts'
import type { PluginState } from './states.ts'

/** What the host keeps of a plugin for its settings. */
export interface SettingsHolder {
  manifest: { name: string }
  schema: ConfigSchema | null
  /** Replaced, never changed in place, whenever stored settings change. */
  settings: Record<string, string>
}

/** SWITCHBOARD_PLUGIN_<NAME>_<KEY> variables of one plugin, by key in lower case. */
export function environmentSettings(plugin: string, env: Readonly<Record<string, string>>): Record<string, string> {
  const prefix = `SWITCHBOARD_PLUGIN_${plugin.toUpperCase().replaceAll('-', '_')}_`
  return Object.fromEntries(
    Object.entries(env)
      .filter(([name]) => name.startsWith(prefix))
      .map(([name, value]) => [name.slice(prefix.length).toLowerCase(), value]),
  )
}

/**
 * What a plugin reads as its settings, as text like the environment it used to come from: the schema's defaults,
 * then what an admin stored, then the environment, which the operator set and so has the last word.
 */
export function effectiveSettings(plugin: SettingsHolder, state: PluginState | undefined, env: Readonly<Record<string, string>>): Record<string, string> {
  const merged = { ...defaultValues(plugin.schema), ...storedValues(plugin.schema, state?.settings ?? {}) }
  return { ...Object.fromEntries(Object.entries(merged).map(([key, value]) => [key, String(value)])), ...environmentSettings(plugin.manifest.name, env) }
}

/** A read-only view of the plugin's settings that follows every change, so a plugin never holds a stale copy. */
export function liveView(plugin: SettingsHolder): Readonly<Record<string, string>> {
  const has = (key: string | symbol) => typeof key === 'string' && Object.hasOwn(plugin.settings, key)
  return new Proxy({} as Record<string, string>, {
    get: (_, key) => (has(key) ? plugin.settings[key as string] : undefined),
    has: (_, key) => has(key),
    ownKeys: () => Object.keys(plugin.settings),
    getOwnPropertyDescriptor: (_, key) => (has(key) ? { value: plugin.settings[key as string], enumerable: true, configurable: true, writable: false } : undefined),
    set: () => false,
    deleteProperty: () => false,
    defineProperty: () => false,
  })
}
