import type { CompanyRole } from '../db/schema.ts'

export type Role = CompanyRole | 'superadmin'

/** Who a request acts for: set on every request before any handler runs. */
export interface Actor {
  userId: string
  /** The tenant the request works in. */
  companyId: string
  role: CompanyRole
  isSuperadmin: boolean
}

const RANK: Record<Role, number> = { member: 1, admin: 2, owner: 3, superadmin: 4 }

export function hasRole(actor: Actor, least: Role): boolean {
  return actor.isSuperadmin || RANK[actor.role] >= RANK[least]
}
