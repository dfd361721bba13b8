import type { Model } from '../models/define.ts'
import type { ApiRecord } from '../models/records.ts'

/** How the trail shows a secret that was set or changed: that it was, never its value. */
export const CHANGED = 'changed'

/** Columns every record has, which say nothing an admin asked about. */
const BOOKKEEPING = new Set(['id', 'version', 'created_at', 'updated_at'])

/**
 * What a write did to a record, field by field: `{to}` on create, `{from, to}` on update (changed fields only),
 * `{from}` on delete. Values are shown as a response shows them (a model's redaction hides the secrets of a field);
 * where a secret changed but its shown form did not, or a write-only field (a password) was given, the field says
 * "changed".
 */
export function recordChanges(model: Model, before: ApiRecord | undefined, after: ApiRecord | undefined, input?: ApiRecord): Record<string, unknown> {
  const shown = (record: ApiRecord | undefined) => (record && model.redact ? model.redact(record) : record)
  const [from, to] = [shown(before), shown(after)]
  const changes: Record<string, unknown> = {}
  for (const name of model.columns) {
    if (BOOKKEEPING.has(name) || name === model.tenantColumn) continue
    const [rawFrom, rawTo] = [before?.[name], after?.[name]]
    if (before && after && same(rawFrom, rawTo)) continue
    if (before && after && same(from?.[name], to?.[name])) changes[name] = CHANGED
    else changes[name] = { ...(before ? { from: from?.[name] ?? null } : {}), ...(after ? { to: to?.[name] ?? null } : {}) }
  }
  for (const name of model.writeOnly ?? []) {
    if (input?.[name] !== undefined && input[name] !== null) changes[name] = CHANGED
  }
  return changes
}

function same(a: unknown, b: unknown): boolean {
  return JSON.stringify(a ?? null) === JSON.stringify(b ?? null)
}
