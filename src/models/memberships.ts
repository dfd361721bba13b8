import type { TenantScope } from '../db/scoped.ts'

/**
 * Where memberships live, as the scoped builder needs it. Apart from the CompanyUser model, which spreads it, so
 * that a reference check asking "is this person one of ours" does not import the model (whose own reference leads
 * back through User to that check).
 */
export const MEMBERSHIPS = { table: 'company_users', tenantColumn: 'company_id' } as const satisfies TenantScope<'company_users'>
