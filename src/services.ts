import type { Config } from './config.ts'
import type { Db } from './db/schema.ts'
import type { ModelRegistry } from './models/registry.ts'
import type { Logger } from './logger.ts'
import type { Actor } from './auth/actor.ts'

/** Kernel services, built once at boot and handed to both apps. No module holds a connection of its own. */
export interface Services {
  config: Config
  db: Db
  models: ModelRegistry
  log: Logger
  /** Until sign-in lands every request acts as the seeded administrator (see auth/development-actor.ts). */
  developmentActor: Actor
}
