import { ApiError } from '../errors.ts'
import { TtlCache } from '../cache.ts'
import type { Clock } from '../clock.ts'
import type { Db } from '../db/schema.ts'
import type { EventBus } from '../events/bus.ts'
import { flushOn } from '../events/caches.ts'
import type { Model, Verb } from '../models/define.ts'
import { hasRole, type Actor, type Role } from './actor.ts'

// Writes of overrides flush the cache in every process at once (event `cache.flush`); this is the backstop.
const CACHE_MS = 60_000

/** Per-verb model ACLs: the least role a model declares, unless a ModelAcl row overrides it. */
export class AccessPolicy {
  // One entry: every override, read in one query.
  readonly #overrides: TtlCache<'all', Map<string, Role>>

  constructor(
    private readonly db: Db,
    clock: Clock,
    events: EventBus,
  ) {
    this.#overrides = new TtlCache(clock, CACHE_MS)
    flushOn(events, 'acl', () => this.#overrides.clear())
  }

  async leastRole(model: Model, verb: Verb): Promise<Role> {
    return (await this.leastRoles(model))(verb)
  }

  /** The least role of each verb on a model, from one read of the overrides: for asking about several verbs. */
  async leastRoles(model: Model): Promise<(verb: Verb) => Role> {
    const overrides = await this.#overrides.get('all', async () => {
      const rows = await this.db.selectFrom('model_acls').select(['model', 'verb', 'min_role']).execute()
      return new Map(rows.map((r) => [`${r.model}:${r.verb}`, r.min_role]))
    })
    return (verb) => {
      const declared = model.access[verb]
      // What a model keeps for superadmins is the host's business (what programs run, platform-wide settings): no
      // override opens it to companies.
      if (declared === 'superadmin') return declared
      return overrides.get(`${model.name}:${verb}`) ?? declared
    }
  }

  /** Throws 401 without an actor, 403 when the actor's role is below what the verb needs. */
  async authorize(caller: Actor | undefined, model: Model, verb: Verb): Promise<Actor> {
    const actor = requireActor(caller)
    if (model.tenantColumn && actor.companyId === null) {
      throw new ApiError('forbidden', `${model.name} records belong to a company, and you are not a member of any.`)
    }
    const least = await this.leastRole(model, verb)
    if (!hasRole(actor, least)) {
      throw new ApiError('forbidden', `Your role may not ${verb} ${model.name} records (needs ${least}).`)
    }
    return actor
  }

}

export function unauthorized(): ApiError {
  return new ApiError('unauthorized', 'Sign in (POST /auth/login) or send a personal API token as Authorization: Bearer.', {
    headers: { 'WWW-Authenticate': 'Bearer realm="switchboard"' },
  })
}

/** The signed-in caller, or a 401 problem: the one check for routes that need someone signed in. */
export function requireActor(actor: Actor | undefined): Actor {
  if (!actor) throw unauthorized()
  return actor
}
