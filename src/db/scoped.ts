import type { Expression, ExpressionBuilder, Kysely, SqlBool } from 'kysely'
import type { Actor } from '../auth/actor.ts'
import type { Executor, TableName } from './schema.ts'

/** What the scoped builder needs to know of a model. */
export interface TenantScope {
  table: TableName
  /** Column holding the owning company; set on insert, matched on every read, update and delete. */
  tenantColumn?: string
  /**
   * Extra rule on which rows the actor may see (`read`) or change (`write`), e.g. only participants see a
   * conversation's messages. Undefined means no rule beyond the tenant. A rule may branch only on the actor's
   * superadmin flag, role and whether it has a company, and must use the actor's ids as values: compiled reads
   * are reused across actors of the same shape (db/templates.ts).
   */
  recordRule?: (eb: ExpressionBuilder<any, any>, actor: Actor, access: 'read' | 'write') => Expression<SqlBool> | undefined
}

/**
 * The one tenant-scoped query builder. Every query made on behalf of a caller starts here, so no handler writes
 * a tenant filter by hand and another tenant's rows are simply not there (404, never 403).
 */
export function scoped(db: Executor, actor: Actor) {
  const k = db as unknown as Kysely<any>
  function restrict<Q extends { where: (...args: any[]) => any }>(query: Q, scope: TenantScope, access: 'read' | 'write'): Q {
    let q = query
    if (scope.tenantColumn) {
      // No company, no tenant rows: a null never equals anything, so the query matches nothing.
      q = q.where(`${scope.table}.${scope.tenantColumn}`, '=', actor.companyId)
    }
    if (scope.recordRule) {
      const rule = scope.recordRule
      q = q.where((eb: ExpressionBuilder<any, any>) => rule(eb, actor, access) ?? eb.lit(true))
    }
    return q
  }
  return {
    actor,
    selectFrom: (scope: TenantScope) => restrict(k.selectFrom(scope.table), scope, 'read'),
    /** Rows the actor may change, for telling "not yours to change" from "not there". */
    selectWritable: (scope: TenantScope) => restrict(k.selectFrom(scope.table), scope, 'write'),
    updateTable: (scope: TenantScope) => restrict(k.updateTable(scope.table), scope, 'write'),
    deleteFrom: (scope: TenantScope) => restrict(k.deleteFrom(scope.table), scope, 'write'),
    insertInto: (scope: TenantScope, values: Record<string, unknown>) =>
      k
        .insertInto(scope.table)
        .values(scope.tenantColumn ? { ...values, [scope.tenantColumn]: actor.companyId } : values),
  }
}
