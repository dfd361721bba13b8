import { isAbove, roleRank } from '../auth/actor.ts'
import type { CompanyRole, Executor } from '../db/schema.ts'

const ROLES: readonly CompanyRole[] = ['member', 'admin', 'owner']

/** Whether `role` is above the role a SCIM token acts with. */
export const aboveToken = (role: CompanyRole, tokenRole: CompanyRole | 'superadmin') => isAbove(role, tokenRole)

/**
 * Gives people the role their SCIM groups map to, through the role mappings of the company's identity providers (the
 * same group names the providers send): the highest mapped group, else member. Nothing above the most any mapping
 * grants, or above the role of the token's maker, is given, and nobody already above it is changed; the company
 * keeps an owner.
 */
export async function syncGroupRoles(db: Executor, companyId: string, userIds: readonly string[], tokenRole: CompanyRole | 'superadmin'): Promise<void> {
  if (userIds.length === 0) return
  const mappings = (await db.selectFrom('identity_providers').select('role_mapping').where('company_id', '=', companyId).execute()).flatMap((p) => p.role_mapping)
  // Neither a mapping nor the token's maker reaches above their role.
  const ceiling = Math.min(roleRank(tokenRole), Math.max(roleRank('member'), ...mappings.map((m) => roleRank(m.role))))
  const roleOf = new Map<string, CompanyRole>()
  for (const { group, role } of mappings) if (!roleOf.has(group) || roleRank(role) > roleRank(roleOf.get(group)!)) roleOf.set(group, role)
  const groups = await db
    .selectFrom('scim_group_members as m')
    .innerJoin('scim_groups as g', 'g.id', 'm.group_id')
    .select(['m.user_id', 'g.display_name'])
    .where('g.company_id', '=', companyId)
    .where('m.user_id', 'in', [...userIds])
    .execute()
  const members = await db.selectFrom('company_users').select(['id', 'user_id', 'role']).where('company_id', '=', companyId).where('user_id', 'in', [...userIds]).execute()
  for (const member of members) {
    if (roleRank(member.role) > ceiling) continue
    const mapped = groups.filter((g) => g.user_id === member.user_id).map((g) => roleOf.get(g.display_name)).filter((r): r is CompanyRole => r !== undefined)
    // A mapped role above the ceiling gives the ceiling: the most this provisioning may give.
    const role = mapped.map((r) => (roleRank(r) <= ceiling ? r : ROLES[ceiling - 1]!)).reduce<CompanyRole>((best, r) => (roleRank(r) > roleRank(best) ? r : best), 'member')
    if (role === member.role) continue
    if (member.role === 'owner') {
      const owners = await db.selectFrom('company_users').select('id').where('company_id', '=', companyId).where('role', '=', 'owner').forUpdate().execute()
      if (owners.length <= 1) continue
    }
    await db.updateTable('company_users').set({ role, updated_at: new Date(), version: (eb) => eb('version', '+', 1) }).where('id', '=', member.id).execute()
  }
}
