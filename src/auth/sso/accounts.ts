import type { CompanyRole, Executor, Row } from '../../db/schema.ts'
import { roleRank } from '../actor.ts'

/** Why a verified sign-in still gets nobody in, in words for the sign-in page. */
export class SignInRefused extends Error {
  constructor(
    readonly reason: 'exists' | 'unverified' | 'unknown' | 'no_role' | 'not_member' | 'deactivated',
    message: string,
  ) {
    super(message)
    this.name = 'SignInRefused'
  }
}

type Provider = Row<'identity_providers'>

/** What the ID token says of the person, as far as accounts go. */
export interface IdentityClaims {
  sub: string
  email?: unknown
  email_verified?: unknown
  name?: unknown
  preferred_username?: unknown
  [claim: string]: unknown
}

/** The role the groups claim gives through the mapping (the highest); groups the mapping does not name give nothing. */
export function mappedRole(provider: Pick<Provider, 'role_mapping' | 'groups_claim'>, claims: IdentityClaims): CompanyRole | undefined {
  const raw = claims[provider.groups_claim]
  const groups = new Set(Array.isArray(raw) ? raw.filter((g): g is string => typeof g === 'string') : typeof raw === 'string' ? [raw] : [])
  let best: CompanyRole | undefined
  for (const { group, role } of provider.role_mapping) if (groups.has(group) && (!best || roleRank(role) > roleRank(best))) best = role
  return best
}

/** The most the provider may grant: the highest role of its mapping and its default. */
function ceiling(provider: Provider): number {
  return Math.max(roleRank(provider.default_role ?? 'member'), ...provider.role_mapping.map((m) => roleRank(m.role)))
}

async function membership(db: Executor, userId: string, companyId: string) {
  return db.selectFrom('company_users').select(['id', 'role']).where('user_id', '=', userId).where('company_id', '=', companyId).executeTakeFirst()
}

/**
 * Keeps the person's role what the mapping says, when it says anything. A role above the most the provider may
 * grant is left alone (the provider could not have given it, so it may not take it away), and the company keeps an
 * owner.
 */
async function syncRole(db: Executor, provider: Provider, userId: string, role: CompanyRole | undefined): Promise<void> {
  if (!role) return
  const member = await membership(db, userId, provider.company_id)
  if (!member || member.role === role || roleRank(member.role) > ceiling(provider)) return
  if (member.role === 'owner') {
    const owners = await db.selectFrom('company_users').select('user_id').where('company_id', '=', provider.company_id).where('role', '=', 'owner').forUpdate().execute()
    if (owners.length <= 1) return
  }
  await db.updateTable('company_users').set({ role, updated_at: new Date(), version: (eb) => eb('version', '+', 1) }).where('id', '=', member.id).execute()
}

/** A person the company's identity system deactivated signs in nowhere, through a provider neither. */
async function refuseDeactivated(db: Executor, userId: string): Promise<void> {
  const user = await db.selectFrom('users').select('deactivated_at').where('id', '=', userId).executeTakeFirst()
  if (user?.deactivated_at) throw new SignInRefused('deactivated', 'This account is deactivated by its company’s identity system.')
}

/** A username nobody has: the provider's preferred one, else the email's local part, made unique with a suffix. */
async function freeUsername(db: Executor, claims: IdentityClaims): Promise<string> {
  const wanted = [claims.preferred_username, typeof claims.email === 'string' ? claims.email.split('@')[0] : undefined].find((v): v is string => typeof v === 'string' && v.trim() !== '')
  const base = (wanted ?? 'person').toLowerCase().replace(/[^a-z0-9._-]+/g, '-').replace(/^-+|-+$/g, '').slice(0, 40) || 'person'
  for (let attempt = 0; ; attempt++) {
    const name = attempt === 0 ? base : `${base}-${Math.random().toString(36).slice(2, 7)}`
    const taken = await db.selectFrom('users').select('id').where((eb) => eb(eb.fn('lower', ['username']), '=', name)).executeTakeFirst()
    if (!taken) return name
  }
}

/**
 * The account a verified sign-in is: the one this subject signed in as before; else an existing member with the same
 * email, only when the provider links by email, the email is verified, and that member is nobody the provider could
 * not have made (a superadmin, a member of another company, a role above the provider's); else someone new, when
 * the provider creates people. Runs in the sign-in's transaction.
 */
export async function accountFor(db: Executor, provider: Provider, claims: IdentityClaims, now: Date): Promise<{ userId: string; created: boolean }> {
  const role = mappedRole(provider, claims)
  const known = await db.selectFrom('user_identities').select('user_id').where('provider_id', '=', provider.id).where('subject', '=', claims.sub).executeTakeFirst()
  if (known) {
    if (!(await membership(db, known.user_id, provider.company_id))) throw new SignInRefused('not_member', 'You are no longer a member of the company this provider signs in to.')
    await refuseDeactivated(db, known.user_id)
    await syncRole(db, provider, known.user_id, role)
    return { userId: known.user_id, created: false }
  }
  const email = typeof claims.email === 'string' ? claims.email.trim().toLowerCase() : undefined
  const existing = email ? await db.selectFrom('users').select(['id', 'is_superadmin']).where((eb) => eb(eb.fn('lower', ['email']), '=', email)).executeTakeFirst() : undefined
  if (existing) {
    const refuse = () => new SignInRefused('exists', 'An account with this email exists already; it is not linked to this provider. Sign in with your password, or ask an admin to allow linking.')
    if (!provider.link_by_email) throw refuse()
    if (claims.email_verified !== true) throw new SignInRefused('unverified', 'The provider has not verified this email, so it cannot sign in as the account that has it.')
    const memberships = await db.selectFrom('company_users').select(['company_id', 'role']).where('user_id', '=', existing.id).execute()
    const here = memberships.find((m) => m.company_id === provider.company_id)
    if (existing.is_superadmin || !here || memberships.length > 1 || roleRank(here.role) > ceiling(provider)) throw refuse()
    await refuseDeactivated(db, existing.id)
    await db.insertInto('user_identities').values({ id: Bun.randomUUIDv7(), provider_id: provider.id, user_id: existing.id, subject: claims.sub }).execute()
    await syncRole(db, provider, existing.id, role)
    return { userId: existing.id, created: false }
  }
  if (!provider.jit) throw new SignInRefused('unknown', 'This provider signs in only people the company has added; ask an admin to add you.')
  const given = role ?? provider.default_role
  if (!given) throw new SignInRefused('no_role', 'You are in none of the groups this company lets sign in.')
  if (!email) throw new SignInRefused('unknown', 'The provider sent no email address, which a new account needs.')
  const userId = Bun.randomUUIDv7()
  const displayName = typeof claims.name === 'string' && claims.name.trim() ? claims.name.trim().slice(0, 200) : email
  await db.insertInto('users').values({ id: userId, email, username: await freeUsername(db, claims), display_name: displayName, avatar: null, password_hash: null, created_at: now, updated_at: now }).execute()
  await db.insertInto('company_users').values({ id: Bun.randomUUIDv7(), company_id: provider.company_id, user_id: userId, role: given, created_at: now, updated_at: now }).execute()
  await db.insertInto('user_identities').values({ id: Bun.randomUUIDv7(), provider_id: provider.id, user_id: userId, subject: claims.sub }).execute()
  return { userId, created: true }
}
