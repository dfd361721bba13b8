import { describe, expect, test } from 'bun:test'
import { join } from 'node:path'
import { checkSources, importsOf, runtimeCycles, type Violation } from './import-rules.ts'

const ROOT = join(import.meta.dir, '..', '..')

// Imports that break a rule today, each with what would end it. A listed import that is gone fails the test too,
// so the list only shrinks.
const KNOWN: ReadonlyArray<Omit<Violation, 'rule'> & { remedy: string }> = []

const line = (v: Omit<Violation, 'rule'> & { rule?: string }) => `${v.file}: import '${v.specifier}'${v.rule ? ` (${v.rule})` : ''}`

async function repositorySources(): Promise<Record<string, string>> {
  const sources: Record<string, string> = {}
  for (const folder of ['src', 'plugins']) {
    for await (const file of new Bun.Glob('**/*.{ts,tsx}').scan({ cwd: join(ROOT, folder) })) {
      sources[`${folder}/${file}`] = await Bun.file(join(ROOT, folder, file)).text()
    }
  }
  return sources
}

test('the import graph of src/ and plugins/ keeps the layering of DESIGN §1–2', async () => {
  const sources = await repositorySources()
  expect(Object.keys(sources).length).toBeGreaterThan(50)
  const found = checkSources(sources)
  const known = new Set(KNOWN.map(line))
  expect(found.filter((v) => !known.has(line({ file: v.file, specifier: v.specifier }))).map(line)).toEqual([])
  const stale = KNOWN.filter((k) => !found.some((v) => v.file === k.file && v.specifier === k.specifier))
  expect(stale.map((k) => `${line(k)} no longer breaks a rule: delete it from KNOWN`)).toEqual([])
})

test('no modules of src/ and plugins/ import each other in a ring at run time', async () => {
  expect(runtimeCycles(await repositorySources())).toEqual([])
})

describe('the checker', () => {
  const check = (file: string, source: string) => checkSources({ [file]: source }).map(line)

  test('names a plugin that imports another plugin’s file, and accepts the SDK, its own folder and packages', () => {
    expect(check('plugins/runner-kimi/index.ts', `import { openAICompatibleRunner } from '../runner-openai/runner.ts'`)).toEqual([
      "plugins/runner-kimi/index.ts: import '../runner-openai/runner.ts' (a plugin imports only the plugin SDK, its own folder and npm packages)",
    ])
    const fine = `
      import { definePlugin } from '../../src/plugin-host/sdk.ts'
      import { wire } from './wire.ts'
      import { z } from 'zod'
      import { readFile } from 'node:fs/promises'`
    expect(check('plugins/runner-kimi/index.ts', fine)).toEqual([])
  })

  test('reads type-only and dynamic imports, the type-only ones from the text, since the transpiler drops them', () => {
    expect(importsOf(`import type { Vault } from '../../src/vault/vault.ts'\nconst m = await import('./lazy.ts')`, 'ts').sort()).toEqual(['../../src/vault/vault.ts', './lazy.ts'])
    expect(check('plugins/notes/index.ts', `import type { Vault } from '../../src/vault/vault.ts'`)).toHaveLength(1)
    expect(check('src/agents/boot.ts', `export async function load() { return import('../../plugins/rlm/index.ts') }`)).toEqual([
      "src/agents/boot.ts: import '../../plugins/rlm/index.ts' (the kernel never imports a plugin (the loader finds plugins by their manifests))",
    ])
  })

  test('keeps the admin app off the store, by path and by package', () => {
    const source = `
      import { sql } from 'kysely'
      import { PostgresJSDialect } from 'kysely-postgres-js'
      import { PGlite } from '@electric-sql/pglite'
      import type { Db } from '../../db/schema.ts'
      import { html } from 'hono/html'`
    expect(check('src/admin/pages/users.tsx', source).map((entry) => entry.split("'")[1])).toEqual(['kysely', 'kysely-postgres-js', '@electric-sql/pglite', '../../db/schema.ts'])
  })

  test('keeps the kernel off the api layer, except the api layer itself and the composition root', () => {
    const source = `import { ProblemSchema } from '../api/responses.ts'`
    expect(check('src/plugin-host/openapi.ts', source)).toEqual([
      "src/plugin-host/openapi.ts: import '../api/responses.ts' (nothing outside src/api/ depends on the api layer)",
    ])
    expect(check('src/api/plugins/routes.ts', `import { ProblemSchema } from '../responses.ts'`)).toEqual([])
    expect(check('src/platform.ts', `import { createApiApp } from './api/app.ts'`)).toEqual([])
  })

  test('keeps the store off everything above it, type-only imports included', () => {
    expect(check('src/db/schema.ts', `import type { AgentVoice } from '../models/agent-config.ts'`)).toEqual([
      "src/db/schema.ts: import '../models/agent-config.ts' (the store (src/db/) imports nothing above itself)",
    ])
    expect(check('src/db/scoped.ts', `import type { CompanyRole } from './schema.ts'\nimport { sql } from 'kysely'`)).toEqual([])
  })

  test('finds a ring of run-time imports, however long, and not one closed only by a type-only import', () => {
    const ring = {
      'src/a.ts': `import { b } from './b.ts'\nexport const a = b`,
      'src/b.ts': `import { c } from './c.ts'\nexport const b = c`,
      'src/c.ts': `import { a } from './a.ts'\nexport const c = () => a`,
      'src/d.ts': `import { a } from './a.ts'\nexport const d = a`,
    }
    expect(runtimeCycles(ring)).toEqual([['src/a.ts', 'src/b.ts', 'src/c.ts']])
    expect(runtimeCycles({ ...ring, 'src/c.ts': `import type { A } from './a.ts'\nexport const c = (x: A) => x` })).toEqual([])
  })
})
