import { jsonb } from '../db/jsonb.ts'
import type { Executor } from '../db/schema.ts'

/** Where a write came from: the request that made it and the address it came from, when a request did. */
export interface Origin {
  requestId?: string
  address?: string
}

/** What the trail says was done. Records of the generic API are created, updated and deleted; the rest are named. */
export const AUDIT_ACTIONS = [
  'create',
  'update',
  'delete',
  'sign_in',
  'sign_in_failed',
  'sign_out',
  'password_change',
  'password_reset_link',
  'password_reset',
  'password_force_reset',
  'plugin_enable',
  'plugin_disable',
  'plugin_settings',
  'secret_set',
  'secret_delete',
  'oauth_grant',
  'oauth_revoke',
  'approval_request',
  'approval_decision',
] as const
export type AuditAction = (typeof AUDIT_ACTIONS)[number]

/** One audited write, as the code that makes it says it. */
export interface AuditFact {
  action: AuditAction
  /** What was written: a model of the API (McpServer), or the thing's kind (Plugin, VaultSecret, Session). */
  model: string
  recordId?: string | null
  /** The company it happened in; null for a person's own account (a sign-in), which their companies' admins see. */
  companyId: string | null
  /** Who did it; null when nobody signed in did (a failed sign-in, a reset link spent). */
  actorId: string | null
  /** What changed: per field `{from, to}` for records, `"changed"` for a secret; a summary for other actions. */
  changes?: Record<string, unknown>
}

/**
 * Records `fact` on `db`, which is the write's own transaction wherever the write has one: the trail says exactly
 * what committed, never a write that rolled back.
 */
export async function audit(db: Executor, origin: Origin | undefined, fact: AuditFact): Promise<void> {
  await db
    .insertInto('audit_events')
    .values({
      id: Bun.randomUUIDv7(),
      company_id: fact.companyId,
      actor_id: fact.actorId,
      action: fact.action,
      model: fact.model,
      record_id: fact.recordId ?? null,
      changes: jsonb(fact.changes ?? {}),
      request_id: origin?.requestId ?? null,
      address: origin?.address ?? null,
    })
    .execute()
}

/** Deletes the events older than `days`, a batch at a time so a long backlog never holds one long lock. */
export async function sweepAudit(db: Executor, days: number, now: number, batch = 5000): Promise<number> {
  const cutoff = new Date(now - days * 86_400_000)
  let total = 0
  for (;;) {
    const deleted = await db
      .deleteFrom('audit_events')
      .where('id', 'in', (eb) => eb.selectFrom('audit_events').select('id').where('created_at', '<', cutoff).limit(batch))
      .executeTakeFirst()
    const n = Number(deleted.numDeletedRows)
    total += n
    if (n < batch) return total
  }
}
