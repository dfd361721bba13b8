import { sql } from 'kysely'
import { TtlCache } from '../cache.ts'
import type { Clock } from '../clock.ts'
import type { Db, Executor } from '../db/schema.ts'
import type { EventBus } from '../events/bus.ts'
import { flushOn } from '../events/caches.ts'
import type { Writes } from '../events/writes.ts'
import type { ModelEntry, Runner } from './contract.ts'

export interface RegistryModel extends ModelEntry {
  curated: boolean
  in_catalogue: boolean
}

export class RunnerRefused extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'RunnerRefused'
  }
}

function toModel(row: { model_id: string; name: string; api_id: string; placeholder: boolean; curated: boolean; in_catalogue: boolean }): RegistryModel {
  return { id: row.model_id, name: row.name, api_id: row.api_id, placeholder: row.placeholder, curated: row.curated, in_catalogue: row.in_catalogue }
}

/** A new registry row for a runner's model; `flags` say whether it is curated and in the catalogue. */
function newRow(runner: string, model: ModelEntry, flags: { curated: boolean; in_catalogue?: boolean }) {
  return { id: Bun.randomUUIDv7(), runner, model_id: model.id, name: model.name, api_id: model.api_id, placeholder: model.placeholder ?? false, ...flags }
}

// Registry edits flush the cache in every process at once (event `cache.flush`); this is the backstop.
const CACHE_MS = 60_000

/** The persisted model registry of every runner (table runner_models). */
export class RunnerModels {
  readonly #cache: TtlCache<string, RegistryModel[]>

  constructor(
    private readonly db: Db,
    clock: Clock,
    events: EventBus,
    private readonly writes: Writes,
  ) {
    this.#cache = new TtlCache(clock, CACHE_MS)
    flushOn(events, 'runner-models', () => this.#cache.clear())
  }

  /**
   * At start: a runner seen for the first time gets the models it ships with; then a runner whose registry holds
   * unconfirmed placeholder ids is refused, naming it and them. One read for every runner (two more, a write and a
   * read, when one is new), not two statements per runner: this runs before the platform serves. Processes starting
   * together on one database may both find a runner new: each stores what the other has not, and both judge what
   * ended up stored.
   */
  async prepare(runners: Iterable<Runner>): Promise<void> {
    const all = [...runners]
    if (all.length === 0) return
    const registered = (names: string[]) =>
      this.db.selectFrom('runner_models').select(['runner', 'model_id', 'placeholder']).where('runner', 'in', names).orderBy('runner').orderBy('model_id').execute()
    let stored = await registered(all.map((r) => r.name))
    const known = new Set(stored.map((row) => row.runner))
    const fresh = all.filter((runner) => !known.has(runner.name))
    // One row per model id (the first a runner lists), in key order: two processes inserting the same rows then take
    // their locks in the same order, and cannot deadlock.
    const rows = new Map<string, { runner: string; model: ModelEntry }>()
    for (const runner of fresh) {
      for (const model of runner.models()) {
        const key = JSON.stringify([runner.name, model.id])
        if (!rows.has(key)) rows.set(key, { runner: runner.name, model })
      }
    }
    const shipped = [...rows.keys()].sort().map((key) => {
      const { runner, model } = rows.get(key)!
      return newRow(runner, model, { curated: false })
    })
    if (shipped.length > 0) {
      await this.db.insertInto('runner_models').values(shipped).onConflict((oc) => oc.columns(['runner', 'model_id']).doNothing()).execute()
      stored = [...stored, ...(await registered(fresh.map((r) => r.name)))]
    }
    for (const runner of all) {
      const placeholders = stored.filter((row) => row.runner === runner.name && row.placeholder).map((row) => row.model_id)
      if (placeholders.length > 0) {
        throw new RunnerRefused(
          `Runner "${runner.name}" is refused: its model registry holds unconfirmed placeholder ids (${placeholders.join(', ')}). ` +
            `Confirm their api_id with POST /api/runners/${runner.name}/models.`,
        )
      }
    }
  }

  async list(runner: string): Promise<RegistryModel[]> {
    const rows = await this.db.selectFrom('runner_models').selectAll().where('runner', '=', runner).orderBy('model_id').execute()
    return rows.map(toModel)
  }

  /**
   * The model an agent names (its first model when none is named); undefined when the registry has no such
   * model. The agent's choice is read from the store on every turn; the registry behind it is cached briefly,
   * as it sits on the path to the first token.
   */
  async resolve(runner: string, modelId: string): Promise<ModelEntry | undefined> {
    const models = await this.#cache.get(runner, () => this.list(runner))
    return modelId ? models.find((m) => m.id === modelId) : models[0]
  }

  /** Adds or changes a model by hand: curated from now on, so refreshes keep its name and api_id. */
  async curate(runner: string, model: ModelEntry): Promise<RegistryModel> {
    const stored = await this.db
      .insertInto('runner_models')
      .values(newRow(runner, model, { curated: true }))
      .onConflict((oc) =>
        oc.columns(['runner', 'model_id']).doUpdateSet({
          name: model.name,
          api_id: model.api_id,
          placeholder: model.placeholder ?? false,
          curated: true,
          version: (eb) => eb('runner_models.version', '+', 1),
          updated_at: sql`now()`,
        }),
      )
      .returning('model_id')
      .executeTakeFirstOrThrow()
    await this.writes.announced({ type: 'runner-models', runner })
    // By the id as stored, which the store may have made well-formed (a lone surrogate becomes U+FFFD).
    return (await this.list(runner)).find((m) => m.id === stored.model_id)!
  }

  /**
   * Merges the provider's catalogue: new models are added, uncurated ones follow the catalogue, curated ones keep
   * their name and api_id, and models the catalogue omits stay (marked as not in it).
   */
  async refresh(runner: string, catalogue: ModelEntry[]): Promise<{ added: number; updated: number; kept: number; models: RegistryModel[] }> {
    const merged = await this.db.transaction().execute(async (tx) => {
      const existing = new Map((await tx.selectFrom('runner_models').selectAll().where('runner', '=', runner).forUpdate().execute()).map((r) => [r.model_id, r]))
      let added = 0
      let updated = 0
      const seen = new Set<string>()
      for (const model of catalogue) {
        seen.add(model.id)
        const row = existing.get(model.id)
        if (!row) {
          await this.#insert(tx, runner, model, { curated: false, in_catalogue: true })
          added++
        } else {
          const changes = row.curated ? { in_catalogue: true } : { in_catalogue: true, name: model.name, api_id: model.api_id }
          await tx.updateTable('runner_models').set({ ...changes, updated_at: sql`now()` }).where('id', '=', row.id).execute()
          if (!row.curated && (row.name !== model.name || row.api_id !== model.api_id)) updated++
        }
      }
      const omitted = [...existing.keys()].filter((id) => !seen.has(id))
      if (omitted.length > 0) {
        await tx.updateTable('runner_models').set({ in_catalogue: false }).where('runner', '=', runner).where('model_id', 'in', omitted).execute()
      }
      const models = (await tx.selectFrom('runner_models').selectAll().where('runner', '=', runner).orderBy('model_id').execute()).map(toModel)
      return { added, updated, kept: omitted.length, models }
    })
    // After the commit: a process that reloads on hearing it reads the merged registry.
    await this.writes.announced({ type: 'runner-models', runner })
    return merged
  }

  async #insert(db: Executor, runner: string, model: ModelEntry, flags: { curated: boolean; in_catalogue?: boolean }) {
    await db
      .insertInto('runner_models')
      .values(newRow(runner, model, flags))
      .execute()
  }
}
