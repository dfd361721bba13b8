import { timingSafeEqual } from 'node:crypto'
import type { Hono } from 'hono'
import { sql } from 'kysely'
import { readMigrations } from '../../db/migrate.ts'
import { queueDepths } from '../../channels/queue.ts'
import type { ApiEnv } from '../../http/env.ts'
import { ApiError } from '../../errors.ts'
import type { Services } from '../../services.ts'

/**
 * What load balancers, orchestrators and Prometheus ask of each process, on the API port, ahead of sign-in:
 * /healthz (the process answers), /readyz (it can serve: store, migrations, event bus) and /metrics (behind a
 * token of its own). They are operators' probes, not the API, so they are not in its OpenAPI document.
 */
export function mountOperations(app: Hono<ApiEnv>, services: Services): void {
  // The migrations this code needs, read once: a probe comes every few seconds.
  const needed = readMigrations().map((m) => m.version)
  app.get('/healthz', (c) => c.json({ status: 'ok' }))

  app.get('/readyz', async (c) => {
    const checks = { store: false, migrations: false, events: services.events.listening(), serving: !services.drain.draining }
    try {
      const applied = new Set((await sql<{ version: string }>`SELECT version FROM schema_migrations`.execute(services.db)).rows.map((r) => r.version))
      checks.store = true
      checks.migrations = needed.every((version) => applied.has(version))
    } catch {
      // An unreachable store fails both checks.
    }
    const ready = checks.store && checks.migrations && checks.events && checks.serving
    return c.json({ status: ready ? 'ready' : services.drain.draining ? 'draining' : 'not ready', checks }, ready ? 200 : 503)
  })

  app.get('/metrics', async (c) => {
    const expected = services.config.metricsToken
    // Not configured: there is nothing here, as for any path nothing serves.
    if (!expected) throw new ApiError('not_found', 'Nothing is served at /metrics: set SWITCHBOARD_METRICS_TOKEN to serve it.')
    const given = /^Bearer\s+(\S+)$/i.exec(c.req.header('authorization') ?? '')?.[1] ?? ''
    if (!sameSecret(given, expected)) {
      throw new ApiError('unauthorized', 'Send the metrics token (SWITCHBOARD_METRICS_TOKEN) as a bearer token.', {
        headers: { 'WWW-Authenticate': 'Bearer realm="switchboard-metrics"' },
      })
    }
    const { contentType, text } = await services.metrics.scrape(async () => {
      services.metrics.breakers(services.upstreams.breakerStates())
      services.metrics.tasksRunning(services.tasks.running)
      services.metrics.pool(services.dbPool)
      const depths = await queueDepths(services.db)
      for (const queue of ['inbox', 'outbox'] as const) for (const state of ['pending', 'failed'] as const) services.metrics.queueDepth(queue, state, depths[queue][state])
    })
    return c.body(text, 200, { 'content-type': contentType })
  })
}

function sameSecret(given: string, expected: string): boolean {
  const [a, b] = [Buffer.from(given), Buffer.from(expected)]
  return a.length === b.length && timingSafeEqual(a, b)
}

