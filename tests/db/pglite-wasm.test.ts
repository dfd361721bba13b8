import { expect, spyOn, test } from 'bun:test'
import { openPglite } from '../../src/db/connect.ts'
import { embeddedDatabaseLikely, pgliteWasm } from '../../src/db/pglite-wasm.ts'

test('the embedded database is likely only without a DATABASE_URL or a file naming one', () => {
  expect(embeddedDatabaseLikely({})).toBe(true)
  // Empty means unset, as the configuration reads it.
  expect(embeddedDatabaseLikely({ DATABASE_URL: '' })).toBe(true)
  expect(embeddedDatabaseLikely({ DATABASE_URL: 'postgres://postgres@127.0.0.1:5432/postgres' })).toBe(false)
  expect(embeddedDatabaseLikely({ DATABASE_URL_FILE: '/run/secrets/database-url' })).toBe(false)
  expect(embeddedDatabaseLikely({ DATABASE_URL_FILE: '' })).toBe(true)
})

test('PGlite’s WebAssembly is compiled once per process, and the embedded database opens on that compile', async () => {
  const compiled = pgliteWasm()
  expect(pgliteWasm()).toBe(compiled)
  const module = await compiled
  const instantiate = spyOn(WebAssembly, 'instantiate')
  try {
    const pglite = await openPglite()
    try {
      expect((await pglite.query<{ answer: number }>('SELECT 41 + 1 AS answer')).rows).toEqual([{ answer: 42 }])
    } finally {
      await pglite.close()
    }
    // Instantiated from the module compiled above, not compiled again from the file.
    expect(instantiate.mock.calls.map(([source]) => source)).toContain(module)
  } finally {
    instantiate.mockRestore()
  }
})
