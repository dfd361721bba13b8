import { existsSync, readdirSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { parseConfigSchema, type ConfigSchema } from './config-schema.ts'
import { Manifest } from './manifest.ts'
import { themeFiles, type ThemeFiles } from './theme-files.ts'

/** Start-up stops on this, naming the manifest file and what is wrong with it. */
export class PluginError extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'PluginError'
  }
}

export interface FoundPlugin {
  manifest: Manifest
  dir: string
  file: string
  /** The manifest's config_schema, normalised; null when it declares none. */
  schema: ConfigSchema | null
  /** A theme's stylesheet and logo; null for other kinds. */
  theme: ThemeFiles | null
}

/** Reads every `<root>/<folder>/manifest.json`; any bad manifest is an error naming its file and field. */
export function discoverPlugins(roots: readonly string[]): FoundPlugin[] {
  const found: FoundPlugin[] = []
  const problems: string[] = []
  for (const root of roots) {
    if (!existsSync(root)) {
      problems.push(`${root}: plugin folder does not exist`)
      continue
    }
    for (const entry of readdirSync(root, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
      const file = join(root, entry.name, 'manifest.json')
      if (!entry.isDirectory() || !existsSync(file)) continue
      let json: unknown
      try {
        json = JSON.parse(readFileSync(file, 'utf8'))
      } catch (error) {
        problems.push(`${file}: not valid JSON (${(error as Error).message})`)
        continue
      }
      const parsed = Manifest.safeParse(json)
      if (!parsed.success) {
        for (const issue of parsed.error.issues) {
          const field = issue.code === 'unrecognized_keys' ? issue.keys.join(', ') : issue.path.join('.') || '(manifest)'
          problems.push(`${file}: ${field}: ${issue.code === 'unrecognized_keys' ? 'unknown field' : issue.message}`)
        }
        continue
      }
      const manifest = parsed.data
      const dir = join(root, entry.name)
      const config = manifest.config_schema ? parseConfigSchema(manifest.config_schema) : undefined
      const theme = themeFiles(manifest, dir)
      const wrong = [...(config?.problems ?? []), ...theme.problems]
      if (wrong.length > 0) {
        problems.push(...wrong.map((problem) => `${file}: ${problem}`))
        continue
      }
      found.push({ manifest, dir, file, schema: config?.schema ?? null, theme: theme.files ?? null })
    }
  }
  const byName = new Map<string, FoundPlugin>()
  for (const plugin of found) {
    const twin = byName.get(plugin.manifest.name)
    if (twin) problems.push(`${plugin.file}: name: "${plugin.manifest.name}" is also the name of ${twin.file}`)
    byName.set(plugin.manifest.name, plugin)
  }
  if (problems.length > 0) throw new PluginError(`Plugins could not be loaded:\n${problems.map((p) => `  - ${p}`).join('\n')}`)
  return inDependencyOrder(found)
}

/** Dependencies first; a missing dependency or a cycle is an error naming the manifests involved. */
function inDependencyOrder(plugins: FoundPlugin[]): FoundPlugin[] {
  const byName = new Map(plugins.map((p) => [p.manifest.name, p]))
  const ordered: FoundPlugin[] = []
  const state = new Map<string, 'visiting' | 'done'>()
  const visit = (plugin: FoundPlugin, path: string[]) => {
    const name = plugin.manifest.name
    if (state.get(name) === 'done') return
    if (state.get(name) === 'visiting') {
      throw new PluginError(`${plugin.file}: dependencies: a cycle ${[...path.slice(path.indexOf(name)), name].join(' → ')}`)
    }
    state.set(name, 'visiting')
    for (const dependency of plugin.manifest.dependencies) {
      const needed = byName.get(dependency)
      if (!needed) throw new PluginError(`${plugin.file}: dependencies: no plugin named "${dependency}" is installed`)
      visit(needed, [...path, name])
    }
    state.set(name, 'done')
    ordered.push(plugin)
  }
  for (const plugin of plugins) visit(plugin, [])
  return ordered
}
