import { ApiError } from '../errors.ts'
import type { AgentConfig, Executor } from '../db/schema.ts'
import type { Change } from '../models/define.ts'
import { hasRole, isAbove, standing, type Actor, type Role } from './actor.ts'

/**
 * The role ladder (member < admin < owner < superadmin): nobody grants a role above their own, nobody changes or
 * removes someone above them, a company keeps at least one owner, the platform at least one superadmin. These run
 * as model guards, inside the write's transaction, so two concurrent demotions cannot both pass.
 */

/** Where a user stands in a company: superadmin above everything, else their membership's role. */
async function standingOf(db: Executor, userId: string, companyId: string | null): Promise<Role | null> {
  const row = await db
    .selectFrom('users as u')
    .leftJoin('company_users as m', (join) => join.onRef('m.user_id', '=', 'u.id').on('m.company_id', '=', companyId))
    .select(['u.is_superadmin', 'm.role'])
    .where('u.id', '=', userId)
    .executeTakeFirst()
  if (!row) return null
  return row.is_superadmin ? 'superadmin' : row.role
}

function refuseAbove(actor: Actor, target: Role | null, what: string): void {
  const mine = standing(actor)
  if (target !== null && isAbove(target, mine)) {
    throw new ApiError('forbidden', `You may not ${what} someone whose role (${target}) is above yours (${mine ?? 'none'}).`)
  }
}

/** Locks the company's owners and refuses when `leaving` is the last of them. */
async function keepAnOwner(db: Executor, companyId: string, leaving: string): Promise<void> {
  const owners = await db
    .selectFrom('company_users')
    .select(['id', 'user_id'])
    .where('company_id', '=', companyId)
    .where('role', '=', 'owner')
    .forUpdate()
    .execute()
  if (owners.every((owner) => owner.user_id === leaving)) {
    throw new ApiError('conflict', 'A company keeps at least one owner: make someone else owner first.')
  }
}

/** Locks the superadmins and refuses when `leaving` is the last of them. */
async function keepASuperadmin(db: Executor, leaving: string): Promise<void> {
  const superadmins = await db.selectFrom('users').select('id').where('is_superadmin', '=', true).forUpdate().execute()
  if (superadmins.every((user) => user.id === leaving)) {
    throw new ApiError('conflict', 'The platform keeps at least one superadmin: make someone else superadmin first.')
  }
}

/** CompanyUser: granting, changing and removing memberships. */
export async function guardMembership(db: Executor, actor: Actor, { before, after }: Change<'company_users'>): Promise<void> {
  if (before && after && after.user_id !== before.user_id) {
    throw new ApiError('validation_error', 'A membership stays with its user; remove it and add the other user instead.', {
      errors: [{ path: 'user_id', message: 'cannot change' }],
    })
  }
  const companyId = (before ?? after)?.company_id ?? actor.companyId
  const userId = (before ?? after)?.user_id
  if (!companyId || !userId) throw new Error('a membership names its company and user')
  if (!actor.isSuperadmin) {
    if (after?.role && isAbove(after.role, standing(actor))) {
      throw new ApiError('forbidden', `You may not grant the role ${after.role}, which is above yours (${actor.role ?? 'none'}).`)
    }
    if (before) refuseAbove(actor, await standingOf(db, userId, companyId), after ? 'change the membership of' : 'remove')
  }
  if (before?.role === 'owner' && after?.role !== 'owner') await keepAnOwner(db, companyId, userId)
}

/** User: accounts, their superadmin flag and their password. */
export async function guardUser(db: Executor, actor: Actor, { before, after }: Change<'users'>): Promise<void> {
  const self = before?.id === actor.userId
  if (before && !self && !actor.isSuperadmin) {
    refuseAbove(actor, await standingOf(db, before.id, actor.companyId), after ? 'change' : 'delete')
  }
  const grantsSuperadmin = after?.is_superadmin !== undefined && after.is_superadmin !== (before?.is_superadmin ?? false)
  if (grantsSuperadmin && !actor.isSuperadmin) throw new ApiError('forbidden', 'Only a superadmin makes or unmakes superadmins.')
  if (before?.is_superadmin && (!after || after.is_superadmin === false)) await keepASuperadmin(db, before.id)
  if (before && !after) {
    // Deleting an account removes its memberships: none may be a company's last owner.
    const owned = await db.selectFrom('company_users').select('company_id').where('user_id', '=', before.id).where('role', '=', 'owner').execute()
    for (const { company_id } of owned) await keepAnOwner(db, company_id, before.id)
  }
  if (before && typeof after?.email === 'string' && after.email.toLowerCase() !== before.email.toLowerCase() && !actor.isSuperadmin) {
    // An address counts for sign-in and for mail to the agents: nobody claims one without showing they hold it.
    throw new ApiError('forbidden', 'An account’s address changes once the new one is confirmed: POST /api/me/email mails it a link to open, signed in.')
  }
  if (before && self && typeof after?.username === 'string' && after.username.toLowerCase() !== before.username.toLowerCase() && !actor.isSuperadmin && !hasRole(actor, 'admin')) {
    // Usernames are unique across every company: a member free to try names would learn who has an account
    // anywhere from which names are taken. Admins, who create accounts, rename them.
    throw new ApiError('forbidden', 'Your username is changed by your company’s admins.')
  }
  if (before && after?.password !== undefined) {
    if (self) throw new ApiError('forbidden', 'Change your own password with POST /api/me/password, giving the current one.')
    if (!actor.isSuperadmin) {
      throw new ApiError('forbidden', `Only the user or a superadmin sets a password; hand them a reset link instead (POST /api/users/${before.id}/password-reset).`)
    }
    // A password set for someone ends their sessions: whoever held one must sign in with the new password.
    await db.deleteFrom('sessions').where('user_id', '=', before.id).execute()
  }
}

/** AgentConfigRecord: an agent acting as a service account acts with that user's rights, so only admins choose it. */
export async function guardServiceAccount(_db: Executor, actor: Actor, { before, after }: Change<'agent_configs'>): Promise<void> {
  const account = (record?: Partial<Pick<AgentConfig, 'context_options'>>) => record?.context_options?.service_account ?? null
  if (after && account(after) !== account(before) && !hasRole(actor, 'admin')) {
    throw new ApiError('forbidden', 'Only company admins choose an agent’s service account.')
  }
}

/** Whether an admin of `companyId` may act on `userId` at all: in that company only, and not above them. */
export async function mayManageUser(db: Executor, actor: Actor, userId: string): Promise<boolean> {
  if (actor.isSuperadmin) return true
  if (actor.companyId === null || !hasRole(actor, 'admin')) return false
  const memberships = await db.selectFrom('company_users').select(['company_id', 'role']).where('user_id', '=', userId).execute()
  const here = memberships.find((m) => m.company_id === actor.companyId)
  if (!here || memberships.length > 1) return false
  const user = await db.selectFrom('users').select('is_superadmin').where('id', '=', userId).executeTakeFirst()
  return !user?.is_superadmin && !isAbove(here.role, standing(actor))
}
