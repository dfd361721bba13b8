/**
 * The layering of DESIGN §1–2 as rules over the import graph: plugins reach the kernel only through the SDK, the
 * kernel never imports a plugin, the admin app never touches the store, the kernel does not depend on the api layer,
 * the store imports nothing above itself, and no modules import each other in a ring at run time.
 */
import { posix } from 'node:path'

/** Where an import leads: a file of this repository (repository-relative) or an npm package or built-in module. */
export type Target = { kind: 'file'; path: string } | { kind: 'package'; name: string }

export interface Violation {
  file: string
  specifier: string
  rule: string
}

const SDK = 'src/plugin-host/sdk'
const STORE_PACKAGES = /^(kysely(-.*)?|postgres|@electric-sql\/pglite)$/

// The transpiler leaves out imports that only bring in types, since they vanish at run time. A type still ties a
// plugin or the admin app to a module, so those statements are read from the text as well.
const STATIC_STATEMENT = /^[ \t]*(?:import|export)[ \t]+(?:type[ \t]+[^'";]*?|\{[^}'";]*\}[ \t]*)from[ \t]*['"]([^'"\n]+)['"]/gm

/** Every module a file imports: static, dynamic and re-exports through Bun's scanner, and type-only statements. */
export function importsOf(source: string, loader: 'ts' | 'tsx'): string[] {
  const scanned = new Bun.Transpiler({ loader }).scanImports(source).map((entry) => entry.path)
  const typeOnly = [...source.matchAll(STATIC_STATEMENT)].map((match) => match[1]!)
  return [...new Set([...scanned, ...typeOnly])]
}

export function resolveImport(file: string, specifier: string): Target {
  if (specifier.startsWith('.')) return { kind: 'file', path: posix.normalize(posix.join(posix.dirname(file), specifier)) }
  // An absolute path or URL is a file somewhere; it counts as outside every folder a rule allows.
  if (specifier.startsWith('/') || specifier.startsWith('file:')) return { kind: 'file', path: specifier }
  const parts = specifier.split('/')
  return { kind: 'package', name: specifier.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0]! }
}

const stem = (path: string) => path.replace(/\.(tsx?|jsx?|mjs)$/, '')
const isUnder = (target: Target, folder: string) => target.kind === 'file' && target.path.startsWith(folder)

interface Rule {
  name: string
  applies: (file: string) => boolean
  breaks: (target: Target, file: string) => boolean
}

const RULES: Rule[] = [
  {
    name: 'a plugin imports only the plugin SDK, its own folder and npm packages',
    applies: (file) => file.startsWith('plugins/'),
    breaks(target, file) {
      if (target.kind === 'package') return false
      const own = file.split('/').length > 2 ? `${file.split('/').slice(0, 2).join('/')}/` : undefined
      return stem(target.path) !== SDK && !(own && target.path.startsWith(own))
    },
  },
  {
    name: 'the kernel never imports a plugin (the loader finds plugins by their manifests)',
    applies: (file) => file.startsWith('src/'),
    breaks: (target) => isUnder(target, 'plugins/'),
  },
  {
    name: 'the admin app never touches the store; it goes through the public API',
    applies: (file) => file.startsWith('src/admin/'),
    breaks: (target) => isUnder(target, 'src/db/') || (target.kind === 'package' && STORE_PACKAGES.test(target.name)),
  },
  {
    name: 'the store (src/db/) imports nothing above itself',
    applies: (file) => file.startsWith('src/db/'),
    breaks: (target) => target.kind === 'file' && !isUnder(target, 'src/db/'),
  },
  {
    name: 'nothing outside src/api/ depends on the api layer',
    // The composition root builds the api app; that is its job.
    applies: (file) => file.startsWith('src/') && !file.startsWith('src/api/') && file !== 'src/platform.ts',
    breaks: (target) => isUnder(target, 'src/api/'),
  },
]

/** The rule an import breaks, if any. */
export function brokenRule(file: string, specifier: string): string | undefined {
  const target = resolveImport(file, specifier)
  return RULES.find((rule) => rule.applies(file) && rule.breaks(target, file))?.name
}

/** Every broken rule in a set of sources, keyed by repository-relative path. */
export function checkSources(sources: Readonly<Record<string, string>>): Violation[] {
  const violations: Violation[] = []
  for (const [file, source] of Object.entries(sources)) {
    for (const specifier of importsOf(source, file.endsWith('.tsx') ? 'tsx' : 'ts')) {
      const rule = brokenRule(file, specifier)
      if (rule) violations.push({ file, specifier, rule })
    }
  }
  return violations
}

/**
 * Rings of modules that import each other at run time (type-only imports vanish and do not count), each as the
 * files in it, sorted. A ring makes one of its modules run before what it imports has finished loading: a class or
 * constant it reads at load time is then not there yet, depending on which file was imported first.
 */
export function runtimeCycles(sources: Readonly<Record<string, string>>): string[][] {
  const graph = new Map<string, string[]>()
  for (const [file, source] of Object.entries(sources)) {
    const loader = file.endsWith('.tsx') ? 'tsx' : 'ts'
    const runtime = new Bun.Transpiler({ loader }).scanImports(source).map((entry) => resolveImport(file, entry.path))
    graph.set(file, runtime.flatMap((target) => (target.kind === 'file' && target.path in sources ? [target.path] : [])))
  }
  // Tarjan's strongly connected components: every ring is one component of more than one file (or a file importing itself).
  let counter = 0
  const index = new Map<string, number>()
  const low = new Map<string, number>()
  const stack: string[] = []
  const onStack = new Set<string>()
  const rings: string[][] = []
  const visit = (file: string): void => {
    index.set(file, counter)
    low.set(file, counter++)
    stack.push(file)
    onStack.add(file)
    for (const next of graph.get(file) ?? []) {
      if (!index.has(next)) {
        visit(next)
        low.set(file, Math.min(low.get(file)!, low.get(next)!))
      } else if (onStack.has(next)) low.set(file, Math.min(low.get(file)!, index.get(next)!))
    }
    if (low.get(file) !== index.get(file)) return
    const ring: string[] = []
    let member: string
    do {
      member = stack.pop()!
      onStack.delete(member)
      ring.push(member)
    } while (member !== file)
    if (ring.length > 1 || graph.get(file)!.includes(file)) rings.push(ring.sort())
  }
  for (const file of graph.keys()) if (!index.has(file)) visit(file)
  return rings
}
