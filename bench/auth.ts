/**
 * Identity and access overhead benchmark: GET /api/v1/AgentConfigRecord/{id} served by the real api app, with
 * cookie authentication, the origin guard, the per-user throttle and the rest of its middleware ("auth on"),
 * against the same route with authentication off ("auth off"), both measured in the same run. A hand-run
 * benchmark, not a test. Target: auth on serves at least 0.9x the requests per second of auth off.
 *
 *   auth on   the api app exactly as src/main.ts builds it (bench/crud-server.ts switchboard). Every request
 *             carries the session cookie of a POST /auth/login, resolved through the authenticator's cache; the
 *             throttle runs, configured (SWITCHBOARD_API_RATE_*) never to refuse.
 *   auth off  the same platform and CRUD routes and error handler on a bare app (bench/crud-server.ts open), acting
 *             as the seeded superadmin without looking at the request. What it leaves out is the cookie/session
 *             lookup, the throttle, the origin guard, and the request id and body limit middlewares. Its handlers
 *             still run the (cached) per-verb ACL check, and its query still goes through the tenant-scoped builder.
 *
 * Both are sent the very same request, cookie included, and must answer the same body byte for byte. It creates a
 * fresh database sb_bench_<random>, seeds 200 agents through the api, then runs each server in its own process,
 * one after the other and alternating over several rounds, warming up before measuring. The database is dropped at the end, on failure and on Ctrl-C.
 * Takes about a minute and a half with the defaults. The harness is bench/harness.ts, shared with bench/crud.ts.
 *
 * Run:  node_modules/.bin/bun bench/auth.ts
 * Needs wrk (apt-get install -y wrk) and a PostgreSQL server whose admin connection may create databases.
 *
 * Environment (defaults in brackets):
 *   BENCH_DATABASE_URL  admin connection [postgres://postgres@127.0.0.1:5432/postgres]
 *   BENCH_THREADS       wrk threads [2]
 *   BENCH_CONNECTIONS   wrk connections, i.e. requests in flight [32]
 *   BENCH_DURATION      measured run per server, in wrk's syntax [10s]
 *   BENCH_WARMUP        unmeasured run before it [3s]
 *   BENCH_POOL          PostgreSQL pool size of both servers [10]
 *   BENCH_ROUNDS        rounds, servers alternating; each result is the median round [3]
 */
import { JSON_HEADERS, measure, report, seedAgents, type Server, withApi, withDatabase, workloadsOf } from './harness.ts'

const AGENTS = 200

await withDatabase(`${AGENTS} agents`, async (env) => {
  const seeded = await withApi(env, async ({ api, signIn }) => {
    const cookie = await signIn()
    const headers = { ...JSON_HEADERS, cookie }
    const first = await seedAgents(api, headers, AGENTS)
    const workloads = await workloadsOf(api, headers, { 'get-by-id': `/api/v1/AgentConfigRecord/${first.id}` })
    return { cookie, workloads }
  })
  const header = `Cookie: ${seeded.cookie}`
  const servers: Server[] = [
    { label: 'auth off', mode: 'open', header },
    { label: 'auth on', mode: 'switchboard', header },
  ]
  const results = await measure(servers, seeded.workloads, env)
  report(seeded.workloads, servers, results, { reference: 'auth off', subject: 'auth on', target: 0.9 }, 'auth')
})
