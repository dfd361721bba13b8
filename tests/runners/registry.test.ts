import { afterAll, beforeAll, expect, test } from 'bun:test'
import type { KyselyPlugin } from 'kysely'
import { systemClock } from '../../src/clock.ts'
import type { Store } from '../../src/db/connect.ts'
import type { Db } from '../../src/db/schema.ts'
import { MemoryBus } from '../../src/events/memory.ts'
import { Writes } from '../../src/events/writes.ts'
import { silentLogger } from '../../src/logger.ts'
import type { ModelEntry, Runner } from '../../src/runners/contract.ts'
import { RunnerModels, RunnerRefused } from '../../src/runners/registry.ts'
import { freshStore } from '../helpers/database.ts'

// What a start asks of the model registry: each runner seen for the first time gets the models it ships with, a
// runner holding unconfirmed placeholders is refused, and all of it costs one read (a write and a read more when one
// is new).
let store: Store
beforeAll(async () => {
  store = await freshStore()
})
afterAll(() => store.close())

const runner = (name: string, models: ModelEntry[]) => ({ name, models: () => models }) as unknown as Runner
const model = (id: string, placeholder = false): ModelEntry => ({ id, name: id.toUpperCase(), api_id: `${id}-api`, ...(placeholder ? { placeholder } : {}) })

/** The registry on a view of the store that counts the statements sent through it. */
function counted(): { registry: RunnerModels; statements: () => number } {
  let statements = 0
  const counter: KyselyPlugin = {
    transformQuery: ({ node }) => {
      statements++
      return node
    },
    transformResult: async ({ result }) => result,
  }
  const db = store.db.withPlugin(counter) as Db
  return { registry: new RunnerModels(db, systemClock, new MemoryBus(silentLogger), new Writes(db, { checkOutbound: async () => {} }, silentLogger)), statements: () => statements }
}

const stored = (runnerName: string) =>
  store.db.selectFrom('runner_models').select(['model_id', 'name', 'api_id', 'curated']).where('runner', '=', runnerName).orderBy('model_id').execute()

test('new runners get the models they ship with, in one write between two reads', async () => {
  const { registry, statements } = counted()
  await registry.prepare([runner('alpha', [model('a1'), model('a2')]), runner('beta', [model('b1')])])
  expect(statements()).toBe(3)
  expect(await stored('alpha')).toEqual([
    { model_id: 'a1', name: 'A1', api_id: 'a1-api', curated: false },
    { model_id: 'a2', name: 'A2', api_id: 'a2-api', curated: false },
  ])
  expect(await stored('beta')).toEqual([{ model_id: 'b1', name: 'B1', api_id: 'b1-api', curated: false }])
})

test('a start that finds every runner known reads once and leaves their registries as they are', async () => {
  await store.db.updateTable('runner_models').set({ name: 'Renamed', curated: true }).where('runner', '=', 'alpha').where('model_id', '=', 'a1').execute()
  const { registry, statements } = counted()
  // The runner now ships other models: a known runner's registry is its own (refreshed on request), not replaced.
  await registry.prepare([runner('alpha', [model('a3')]), runner('beta', [model('b1')])])
  expect(statements()).toBe(1)
  expect((await stored('alpha')).map((m) => [m.model_id, m.name])).toEqual([
    ['a1', 'Renamed'],
    ['a2', 'A2'],
  ])
})

test('processes starting together on one database both start, and each model is stored once', async () => {
  const [one, two] = [counted().registry, counted().registry]
  const gamma = () => runner('gamma', [model('g2'), model('g1')])
  expect(await Promise.all([one.prepare([gamma()]), two.prepare([gamma()])])).toEqual([undefined, undefined])
  expect((await stored('gamma')).map((m) => m.model_id)).toEqual(['g1', 'g2'])
})

test('processes that ship different models store them all, and both judge what was stored', async () => {
  const [one, two] = [counted().registry, counted().registry]
  const outcomes = await Promise.allSettled([one.prepare([runner('eps', [model('e1')])]), two.prepare([runner('eps', [model('e1', true), model('e2')])])])
  // Whichever stored e1 first decides whether it is a placeholder; both starts read that same row.
  const e1 = await store.db.selectFrom('runner_models').select('placeholder').where('runner', '=', 'eps').where('model_id', '=', 'e1').executeTakeFirstOrThrow()
  expect(outcomes.map((o) => o.status)).toEqual(e1.placeholder ? ['rejected', 'rejected'] : ['fulfilled', 'fulfilled'])
  expect((await stored('eps')).map((m) => m.model_id)).toEqual(['e1', 'e2'])
})

test('a model listed twice by its runner is stored once, as first listed', async () => {
  await counted().registry.prepare([runner('zeta', [model('z1'), model('z1', true)])])
  const rows = await store.db.selectFrom('runner_models').select(['model_id', 'placeholder']).where('runner', '=', 'zeta').execute()
  expect(rows).toEqual([{ model_id: 'z1', placeholder: false }])
})

test('a runner whose registry holds placeholders is refused, naming them, whether they were just stored or found', async () => {
  const guessing = runner('guessing', [model('sure'), model('perhaps', true), model('maybe', true)])
  const first = await counted().registry.prepare([guessing]).catch((error: Error) => error)
  expect(first).toBeInstanceOf(RunnerRefused)
  expect((first as Error).message).toBe('Runner "guessing" is refused: its model registry holds unconfirmed placeholder ids (maybe, perhaps). Confirm their api_id with POST /api/runners/guessing/models.')
  // Stored all the same, so an admin can confirm it; the next start is refused until then.
  expect((await stored('guessing')).map((m) => m.model_id)).toEqual(['maybe', 'perhaps', 'sure'])
  await expect(counted().registry.prepare([runner('delta', [model('d1')]), guessing, runner('theta', [model('t1')])])).rejects.toThrow('unconfirmed placeholder ids (maybe, perhaps)')
  // The other runners are prepared all the same, before the refused one and after it.
  expect((await stored('delta')).map((m) => m.model_id)).toEqual(['d1'])
  expect((await stored('theta')).map((m) => m.model_id)).toEqual(['t1'])
})
