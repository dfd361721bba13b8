import type { AccessPolicy } from '../auth/access.ts'
import { hasRole, type Actor } from '../auth/actor.ts'
import type { Executor, VaultScope } from '../db/schema.ts'
import { ApiError } from '../errors.ts'
import { AgentConfigRecord } from '../models/agent-config.ts'
import { Company } from '../models/company.ts'
import { getRecord } from '../models/records.ts'
import { User } from '../models/user.ts'
import type { SecretRef } from './vault.ts'

export interface SecretPlace {
  scope: VaultScope
  /** Left out: the caller's own company or user. */
  owner_id?: string
  name: string
}

/**
 * Who may manage which secrets: global ones are the platform's (superadmins); a company's are its admins'; a
 * user's are their own; an agent's are its company admins'. Anything outside the caller's reach answers 404, as
 * the owner's own record would: whether it exists is judged by what the caller may read.
 */
export async function manageableSecret(db: Executor, access: AccessPolicy, actor: Actor, place: SecretPlace): Promise<SecretRef> {
  const ref = (ownerId: string | null): SecretRef => ({ scope: place.scope, ownerId, name: place.name })
  switch (place.scope) {
    case 'global':
      if (!actor.isSuperadmin) throw new ApiError('forbidden', 'Only a superadmin manages global secrets.')
      return ref(null)
    case 'company': {
      const company = place.owner_id ?? actor.companyId
      if (!company) throw new ApiError('forbidden', 'You are not a member of any company.')
      // A member reads only their own company; a superadmin any.
      await getRecord(db, actor, Company, company)
      if (!hasRole(actor, 'admin')) throw new ApiError('forbidden', 'Only company admins manage company secrets.')
      return ref(company)
    }
    case 'user': {
      const user = place.owner_id ?? actor.userId
      // Only superadmins manage someone else's: colleagues can read each other's records, not each other's secrets.
      if (user !== actor.userId && !actor.isSuperadmin) throw new ApiError('not_found', `No user ${user}.`)
      if (user !== actor.userId) await getRecord(db, actor, User, user)
      return ref(user)
    }
    case 'agent': {
      if (!place.owner_id) throw new ApiError('validation_error', 'An agent secret names its agent.', { errors: [{ path: 'owner_id', message: 'required for agent secrets' }] })
      await access.authorize(actor, AgentConfigRecord, 'update')
      await getRecord(db, actor, AgentConfigRecord, place.owner_id)
      return ref(place.owner_id)
    }
  }
}
