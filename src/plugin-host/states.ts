import { sql } from 'kysely'
import type { Executor } from '../db/schema.ts'
import { jsonb } from '../db/jsonb.ts'
import { audit } from '../audit/trail.ts'
import type { Actor } from '../auth/actor.ts'

/** A plugin's persisted state; a plugin without a row has `version` 0 and its kind's default. */
export interface PluginState {
  enabled: boolean
  settings: Record<string, unknown>
  version: number
}

// Every change of plugin states takes this transaction lock first: the dependency and one-theme rules are judged
// on states nobody else is changing meanwhile.
// "plugins" in ASCII, as a 64-bit lock key.
const STATES_LOCK = '31654052487769715'

export async function lockStates(tx: Executor): Promise<void> {
  await sql`SELECT pg_advisory_xact_lock(${sql.lit(STATES_LOCK)}::bigint)`.execute(tx)
}

export async function readStates(db: Executor): Promise<Map<string, PluginState>> {
  const rows = await db.selectFrom('plugin_states').select(['name', 'enabled', 'settings', 'version']).execute()
  return new Map(rows.map((r) => [r.name, { enabled: r.enabled, settings: r.settings ?? {}, version: r.version }]))
}

/** Writes one plugin's state, counting the write in `version`; answers the new version. */
export async function writeState(db: Executor, name: string, state: { enabled: boolean; settings: Record<string, unknown> }): Promise<number> {
  const row = await db
    .insertInto('plugin_states')
    .values({ name, enabled: state.enabled, settings: jsonb(state.settings), version: 1, updated_at: sql`now()` })
    .onConflict((oc) => oc.column('name').doUpdateSet({ enabled: state.enabled, settings: jsonb(state.settings), version: sql`plugin_states.version + 1`, updated_at: sql`now()` }))
    .returning('version')
    .executeTakeFirstOrThrow()
  return row.version
}

/** Records a change of a plugin (platform-wide, a superadmin's doing) in the transaction that makes it. */
export function auditPlugin(tx: Executor, by: Actor, name: string, action: 'plugin_enable' | 'plugin_disable' | 'plugin_settings', changes: Record<string, unknown>): Promise<void> {
  return audit(tx, by.origin, { action, model: 'Plugin', recordId: name, companyId: null, actorId: by.userId, changes })
}
