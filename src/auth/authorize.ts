import { ApiError } from '../api/errors.ts'
import type { Model, Verb } from '../models/define.ts'
import { hasRole, type Actor } from './actor.ts'

/** Gates one verb on one model by the least role the model declares. */
export function authorize(actor: Actor, model: Model, verb: Verb): void {
  const least = model.access[verb]
  if (!hasRole(actor, least)) {
    throw new ApiError('forbidden', `Your role may not ${verb} ${model.name} records (needs ${least}).`)
  }
}
