import type { Actor } from '../auth/actor.ts'
import type { Services } from '../services.ts'

/** The typed request context of the api app. */
export interface ApiEnv {
  Variables: {
    requestId: string
    /** Unset for anonymous requests. */
    actor: Actor | undefined
    services: Services
  }
}
