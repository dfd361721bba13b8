import type { DeleteQueryBuilder, DeleteResult, Expression, ExpressionBuilder, InsertQueryBuilder, InsertResult, SelectQueryBuilder, SqlBool, UpdateQueryBuilder, UpdateResult } from 'kysely'
import type { CompanyRole, Database, Executor, TableName } from './schema.ts'

/** Who a scoped query is made for: the auth layer's Actor, as far as tenancy and record rules read it. */
export interface Caller {
  userId: string
  /** The company the request works in; null for a user who belongs to none. */
  companyId: string | null
  /** The user's role in that company. */
  role: CompanyRole | null
  isSuperadmin: boolean
}

/** What the scoped builder needs to know of a model. */
export interface TenantScope<T extends TableName = TableName> {
  table: T
  /** Column holding the owning company; set on insert, matched on every read, update and delete. */
  tenantColumn?: string
  /**
   * Extra rule on which rows the actor may see (`read`) or change (`write`), e.g. only participants see a
   * conversation's messages. Undefined means no rule beyond the tenant. A rule may branch only on the actor's
   * superadmin flag, role and whether it has a company, and must use the actor's ids as values: compiled reads
   * are reused across actors of the same shape (db/templates.ts).
   */
  recordRule?: (eb: ExpressionBuilder<any, any>, actor: Caller, access: 'read' | 'write') => Expression<SqlBool> | undefined
}

type Access = 'read' | 'write'

/** The builders of one scope; rows come back typed by the table. */
export interface ScopedBuilder {
  selectFrom<T extends TableName>(scope: TenantScope<T>): SelectQueryBuilder<Database, T, {}>
  /** Rows the actor may change, for telling "not yours to change" from "not there". */
  selectWritable<T extends TableName>(scope: TenantScope<T>): SelectQueryBuilder<Database, T, {}>
  updateTable<T extends TableName>(scope: TenantScope<T>): UpdateQueryBuilder<Database, T, T, UpdateResult>
  deleteFrom<T extends TableName>(scope: TenantScope<T>): DeleteQueryBuilder<Database, T, DeleteResult>
  insertInto<T extends TableName>(scope: TenantScope<T>, values: Record<string, unknown>): InsertQueryBuilder<Database, T, InsertResult>
}

/**
 * The one tenant-scoped query builder. Every query made on behalf of a caller starts here, so no handler writes
 * a tenant filter by hand and another tenant's rows are simply not there (404, never 403).
 */
export function scoped(db: Executor, actor: Caller): ScopedBuilder {
  return builder(db, actor.companyId, (scope, eb, access) => scope.recordRule?.(eb, actor, access))
}

/**
 * The same builder for what the kernel reads on behalf of a company rather than of a person (its MCP servers and
 * rules, its members): the tenant predicate alone, since record rules are about people.
 */
export function companyScoped(db: Executor, companyId: string): ScopedBuilder {
  return builder(db, companyId, () => undefined)
}

type Rule = (scope: TenantScope, eb: ExpressionBuilder<any, any>, access: Access) => Expression<SqlBool> | undefined

function builder(db: Executor, companyId: string | null, rule: Rule): ScopedBuilder {
  // Typed by ScopedBuilder's signatures: a table chosen at run time is beyond Kysely's inference.
  const k: any = db
  function restrict<Q extends { where: (...args: any[]) => any }>(query: Q, scope: TenantScope, access: Access): Q {
    let q = query
    // No company, no tenant rows: a null never equals anything, so the query matches nothing.
    if (scope.tenantColumn) q = q.where(`${scope.table}.${scope.tenantColumn}`, '=', companyId)
    if (scope.recordRule) q = q.where((eb: ExpressionBuilder<any, any>) => rule(scope, eb, access) ?? eb.lit(true))
    return q
  }
  return {
    selectFrom: (scope) => restrict(k.selectFrom(scope.table), scope, 'read'),
    selectWritable: (scope) => restrict(k.selectFrom(scope.table), scope, 'write'),
    updateTable: (scope) => restrict(k.updateTable(scope.table), scope, 'write'),
    deleteFrom: (scope) => restrict(k.deleteFrom(scope.table), scope, 'write'),
    insertInto: (scope, values) => k.insertInto(scope.table).values(scope.tenantColumn ? { ...values, [scope.tenantColumn]: companyId } : values),
  }
}
