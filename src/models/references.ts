import { ApiError } from '../errors.ts'
import { getRecord } from './records.ts'
import type { Model, ReferenceCheck } from './define.ts'

/** The referenced record must be one the actor can read (same tenant, and its record rule). */
export function visible(model: () => Model): ReferenceCheck {
  return async (db, actor, id) => {
    try {
      await getRecord(db, actor, model(), id)
      return true
    } catch (error) {
      if (error instanceof ApiError && error.code === 'not_found') return false
      throw error
    }
  }
}

/** The referenced user must belong to the actor's company. */
export const companyMember: ReferenceCheck = async (db, actor, id) => {
  if (actor.companyId === null) return false
  const row = await db
    .selectFrom('company_users')
    .select('id')
    .where('company_id', '=', actor.companyId)
    .where('user_id', '=', id)
    .executeTakeFirst()
  return row !== undefined
}
