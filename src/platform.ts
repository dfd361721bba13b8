import { createAdminApp } from './admin/app.tsx'
import { createApiClient } from './admin/api-client.ts'
import { createApiApp } from './api/app.ts'
import { ensureDevelopmentActor } from './auth/development-actor.ts'
import type { Config } from './config.ts'
import { migrate } from './db/migrate.ts'
import type { Store } from './db/connect.ts'
import type { Logger } from './logger.ts'
import { createModelRegistry } from './models/registry.ts'
import type { Services } from './services.ts'

export interface Platform {
  services: Services
  api: ReturnType<typeof createApiApp>
  admin: ReturnType<typeof createAdminApp>
}

/** Builds the kernel services and both apps on an open store. Servers and signals are main.ts's business. */
export async function createPlatform(config: Config, store: Store, log: Logger): Promise<Platform> {
  const applied = await migrate(store.db)
  if (applied.length > 0) log.info('migrations applied', { migrations: applied })
  const services: Services = {
    config,
    db: store.db,
    models: createModelRegistry(),
    log,
    developmentActor: await ensureDevelopmentActor(store.db),
  }
  const api = createApiApp(services)
  const admin = createAdminApp(services, createApiClient(api))
  return { services, api, admin }
}
