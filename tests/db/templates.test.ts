import { afterAll, beforeAll, expect, test } from 'bun:test'
import type { Store } from '../../src/db/connect.ts'
import { runTemplate, slot } from '../../src/db/templates.ts'
import { freshStore } from '../helpers/database.ts'

let store: Store
beforeAll(async () => {
  store = await freshStore()
  for (const [slug, name] of [['one', 'One'], ['two', 'Two'], ['three', 'Three']]) {
    await store.db.insertInto('companies').values({ id: Bun.randomUUIDv7(), slug: slug!, name: name! }).execute()
  }
})
afterAll(() => store.close())

test('a template is built once per key; later runs bind new values and keep the builder’s constants', async () => {
  let builds = 0
  const build = () => {
    builds++
    return store.db
      .selectFrom('companies')
      .select('slug')
      .where('slug', 'in', [slot(0), slot(1)])
      .where('name', '<>', 'Three') // a constant parameter, kept as written
      .orderBy('slug')
  }
  const key = `test|${crypto.randomUUID()}`
  expect(await runTemplate(store.db, key, build, ['one', 'three'])).toEqual([{ slug: 'one' }])
  expect(await runTemplate(store.db, key, build, ['two', 'one'])).toEqual([{ slug: 'one' }, { slug: 'two' }])
  expect(builds).toBe(1)
})

test('inside a transaction a template runs on that transaction', async () => {
  const key = `test|${crypto.randomUUID()}`
  const seen = await store.db.transaction().execute(async (tx) => {
    await tx.insertInto('companies').values({ id: Bun.randomUUIDv7(), slug: 'in-tx', name: 'In tx' }).execute()
    return runTemplate(tx, key, () => tx.selectFrom('companies').select('slug').where('slug', '=', slot(0)), ['in-tx'])
  })
  expect(seen).toEqual([{ slug: 'in-tx' }])
})
