import { afterAll, beforeAll, expect, test } from 'bun:test'
import type { Actor } from '../../src/auth/actor.ts'
import type { Store } from '../../src/db/connect.ts'
import { Writes, type Written } from '../../src/events/writes.ts'
import { createLogger } from '../../src/logger.ts'
import { freshStore } from '../helpers/database.ts'

// The one path of a write's consequences: heard after commit, never for a write rolled back, joined to a caller's
// transaction when asked, and a consequence that fails neither hides the write from the other parts nor its failure.
let store: Store
const actor: Actor = { userId: Bun.randomUUIDv7(), companyId: null, role: null, isSuperadmin: true }
const noOutbound = {
  checkOutbound: async () => {
    throw new Error('no outbound addresses here')
  },
}
const logged: string[] = []
let writes: Writes
const heard: Array<{ write: Written; committed: number }> = []
const companies = async () => Number((await store.db.selectFrom('companies').select((eb) => eb.fn.countAll<number>().as('n')).executeTakeFirstOrThrow()).n)

beforeAll(async () => {
  store = await freshStore()
  writes = new Writes(store.db, noOutbound, createLogger('error', (line) => void logged.push(line)))
  // What a listener sees of the store when it hears a write: the write is there already.
  writes.on(async (write) => void heard.push({ write, committed: await companies() }))
})
afterAll(() => store.close())

const credentials = (user_id: string): Written => ({ type: 'credentials', user_id })
const addCompany = (db: Parameters<Parameters<Writes['run']>[1]>[0]['db'], slug: string) => db.insertInto('companies').values({ id: Bun.randomUUIDv7(), name: slug, slug }).execute()

test('run: what was announced is heard once the work is over, and also when it failed after writing', async () => {
  heard.length = 0
  const before = await companies()
  await writes.run(actor, async (scope) => {
    await addCompany(scope.db, 'run-one')
    scope.announce(credentials('a'))
    expect(heard).toEqual([])
  })
  expect(heard).toEqual([{ write: credentials('a'), committed: before + 1 }])
  await expect(
    writes.run(actor, async (scope) => {
      await addCompany(scope.db, 'run-two')
      scope.announce(credentials('b'))
      throw new Error('later step failed')
    }),
  ).rejects.toThrow('later step failed')
  // Each write on the pool committed on its own: the one made is heard.
  expect(heard.at(-1)).toEqual({ write: credentials('b'), committed: before + 2 })
})

test('transaction: heard after commit; a rollback is heard by nobody', async () => {
  heard.length = 0
  const before = await companies()
  await writes.transaction(actor, async (scope) => {
    await addCompany(scope.db, 'tx-one')
    scope.announce(credentials('c'))
  })
  expect(heard).toEqual([{ write: credentials('c'), committed: before + 1 }])
  await expect(
    writes.transaction(actor, async (scope) => {
      await addCompany(scope.db, 'tx-two')
      scope.announce(credentials('d'))
      throw new Error('rolled back')
    }),
  ).rejects.toThrow('rolled back')
  expect(heard).toHaveLength(1)
  expect(await companies()).toBe(before + 1)
})

test('a service given the caller’s scope joins its transaction: its writes are heard when the caller’s commit', async () => {
  heard.length = 0
  const service = (within: Parameters<Writes['transaction']>[2]) =>
    writes.transaction(
      actor,
      async (scope) => {
        await addCompany(scope.db, `joined-${crypto.randomUUID().slice(0, 6)}`)
        scope.announce(credentials('inner'))
      },
      within,
    )
  await writes.transaction(actor, async (scope) => {
    await service(scope)
    expect(heard).toEqual([])
    scope.announce(credentials('outer'))
  })
  expect(heard.map((h) => h.write)).toEqual([credentials('inner'), credentials('outer')])
  // Rolled back by the caller, the service's write is gone and unheard.
  const before = await companies()
  await expect(
    writes.transaction(actor, async (scope) => {
      await service(scope)
      throw new Error('caller failed')
    }),
  ).rejects.toThrow('caller failed')
  expect(await companies()).toBe(before)
  expect(heard).toHaveLength(2)
})

test('a consequence that fails is logged and raised, and the other parts still hear the write', async () => {
  heard.length = 0
  const stop = writes.on(() => {
    throw new Error('cache unreachable')
  })
  const after: Written[] = []
  const stopAfter = writes.on((write) => void after.push(write))
  try {
    await expect(writes.announced(credentials('e'))).rejects.toThrow('cache unreachable')
    expect(heard.map((h) => h.write)).toEqual([credentials('e')])
    expect(after).toEqual([credentials('e')])
    expect(logged.some((line) => line.includes('a write’s consequence failed') && line.includes('cache unreachable'))).toBe(true)
  } finally {
    stop()
    stopAfter()
  }
})
