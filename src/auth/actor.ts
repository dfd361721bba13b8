import type { CompanyRole } from '../db/schema.ts'
import type { Caller } from '../db/scoped.ts'
import type { Origin } from '../audit/trail.ts'

export type Role = CompanyRole | 'superadmin'

/** Who a request acts for, set by the authentication middleware before any handler runs. */
export interface Actor extends Caller {
  /**
   * Set when the request carries an OAuth access token: what the person granted the MCP host, which limits the
   * token to that resource and those scopes.
   */
  grant?: { resource: string; scopes: readonly string[] }
  /** The request acting, for the audit trail; unset for work no request made (a channel message, a plan's next step). */
  origin?: Origin
}

const RANK: Record<Role, number> = { member: 1, admin: 2, owner: 3, superadmin: 4 }

/** A role's height on the ladder, for comparing and taking the highest of several. */
export function roleRank(role: Role): number {
  return RANK[role]
}

/** Whether `role` is above `other` on the ladder member < admin < owner < superadmin. */
export function isAbove(role: Role, other: Role | null): boolean {
  return other === null || RANK[role] > RANK[other]
}

/** Where the actor stands on the ladder in the company they work in. */
export function standing(actor: Actor): Role | null {
  return actor.isSuperadmin ? 'superadmin' : actor.role
}

/** Whether the actor's role reaches `least`. Any signed-in user counts as a member (their own user, tokens). */
export function hasRole(actor: Actor, least: Role): boolean {
  if (actor.isSuperadmin || least === 'member') return true
  return actor.role !== null && least !== 'superadmin' && RANK[actor.role] >= RANK[least]
}
