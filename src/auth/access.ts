import { ApiError } from '../errors.ts'
import type { Clock } from '../clock.ts'
import type { Db } from '../db/schema.ts'
import type { Model, Verb } from '../models/define.ts'
import { hasRole, type Actor, type Role } from './actor.ts'

// Overrides written by another process are seen within this time; this process's own writes at once.
const CACHE_MS = 5_000

/** Per-verb model ACLs: the least role a model declares, unless a ModelAcl row overrides it. */
export class AccessPolicy {
  #overrides: Map<string, Role> | undefined
  #loadedAt = 0

  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
  ) {}

  async leastRole(model: Model, verb: Verb): Promise<Role> {
    const now = this.clock.now()
    if (!this.#overrides || now - this.#loadedAt > CACHE_MS) {
      const rows = await this.db.selectFrom('model_acls').select(['model', 'verb', 'min_role']).execute()
      this.#overrides = new Map(rows.map((r) => [`${r.model}:${r.verb}`, r.min_role]))
      this.#loadedAt = now
    }
    const declared = model.access[verb]
    // What a model keeps for superadmins is the host's business (what programs run, platform-wide settings): no
    // override opens it to companies.
    if (declared === 'superadmin') return declared
    return this.#overrides.get(`${model.name}:${verb}`) ?? declared
  }

  /** Throws 401 without an actor, 403 when the actor's role is below what the verb needs. */
  async authorize(actor: Actor | undefined, model: Model, verb: Verb): Promise<Actor> {
    if (!actor) throw unauthorized()
    if (model.tenantColumn && actor.companyId === null) {
      throw new ApiError('forbidden', `${model.name} records belong to a company, and you are not a member of any.`)
    }
    const least = await this.leastRole(model, verb)
    if (!hasRole(actor, least)) {
      throw new ApiError('forbidden', `Your role may not ${verb} ${model.name} records (needs ${least}).`)
    }
    return actor
  }

  invalidate(): void {
    this.#overrides = undefined
  }
}

export function unauthorized(): ApiError {
  return new ApiError('unauthorized', 'Sign in (POST /auth/login) or send a personal API token as Authorization: Bearer.', {
    headers: { 'WWW-Authenticate': 'Bearer realm="switchboard"' },
  })
}
