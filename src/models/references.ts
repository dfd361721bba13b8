import type { Actor } from '../auth/actor.ts'
import { scoped } from '../db/scoped.ts'
import type { Executor } from '../db/schema.ts'
import { ApiError } from '../errors.ts'
import { MEMBERSHIPS } from './memberships.ts'
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

/** The referenced user must belong to the actor's company (none for an actor without one). */
export async function companyMember(db: Executor, actor: Actor, id: string): Promise<boolean> {
  const row = await scoped(db, actor).selectFrom(MEMBERSHIPS).select('id').where('user_id', '=', id).executeTakeFirst()
  return row !== undefined
}
