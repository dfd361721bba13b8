/**
 * CRUD API benchmark: the generic CRUD API (Hono + Kysely, built exactly as src/main.ts builds it) against a
 * no-framework baseline (Bun.serve + postgres.js running the same SQL and returning the same JSON), both on
 * PostgreSQL. A hand-run benchmark, not a test. Target: the API serves at least 0.9x the baseline's requests per
 * second, both measured in the same run.
 *
 * Workloads, each driven by wrk at fixed concurrency with a personal API token (Authorization: Bearer):
 *   get-by-id   GET /api/v1/AgentConfigRecord/{id}                     (one record, with its ETag)
 *   list-50     GET /api/v1/AgentConfigRecord?enabled=eq.true&limit=50 (50 of the 150 enabled agents)
 *
 * It creates a fresh database sb_bench_<random>, seeds 200 agents through the API, then runs each server in its
 * own process (bench/crud-server.ts), one after the other and alternating over BENCH_ROUNDS rounds (the median
 * round counts), warming each workload up before measuring it. The
 * API's per-user throttle is configured out of the way (SWITCHBOARD_API_RATE_*), since it would otherwise answer
 * 429; its middleware still runs. The database is dropped at the end, on failure and on Ctrl-C. Takes about three
 * minutes with the defaults. The harness (database, server processes, wrk, report) is bench/harness.ts.
 *
 * Run:  node_modules/.bin/bun bench/crud.ts
 * Needs wrk (apt-get install -y wrk) and a PostgreSQL server whose admin connection may create databases.
 *
 * Environment (defaults in brackets):
 *   BENCH_DATABASE_URL  admin connection [postgres://postgres@127.0.0.1:5432/postgres]
 *   BENCH_THREADS       wrk threads [2]
 *   BENCH_CONNECTIONS   wrk connections, i.e. requests in flight [32]
 *   BENCH_DURATION      measured run per workload and server, in wrk's syntax [10s]
 *   BENCH_WARMUP        unmeasured run before it [3s]
 *   BENCH_POOL          PostgreSQL pool size of both servers [10]
 *   BENCH_ROUNDS        rounds, servers alternating; each result is the median round [3]
 *   BENCH_OPEN          1: also measure the same CRUD routes without the api's middleware, to tell their cost
 *                       from the handlers' [0]
 *   BENCH_CPU_PROF_DIR  where each server process writes a CPU profile (Bun's --cpu-prof, as markdown) [none]
 *   BENCH_WORKLOADS     which workloads to run, comma-separated (get-by-id, list-50) [both]
 */
import { expectStatus, JSON_HEADERS, measure, report, seedAgents, type Server, withApi, withDatabase, workloadsOf } from './harness.ts'

const AGENTS = 200

await withDatabase(`${AGENTS} agents`, async (env) => {
  // Signs in as the first superadmin, makes an API token, and seeds the agents with it.
  const seeded = await withApi(env, async ({ api, signIn }) => {
    const cookie = await signIn()
    const made = await api.request('/api/v1/ApiToken', { method: 'POST', headers: { ...JSON_HEADERS, cookie }, body: '{"name":"bench"}' })
    const { token } = (await (await expectStatus(made, 201, 'making an API token')).json()) as { token: string }
    const headers = { ...JSON_HEADERS, authorization: `Bearer ${token}` }
    const first = await seedAgents(api, headers, AGENTS)
    const paths: Record<string, string> = {
      'get-by-id': `/api/v1/AgentConfigRecord/${first.id}`,
      'list-50': '/api/v1/AgentConfigRecord?enabled=eq.true&limit=50',
    }
    const only = process.env.BENCH_WORKLOADS?.split(',')
    const workloads = await workloadsOf(api, headers, only ? Object.fromEntries(Object.entries(paths).filter(([name]) => only.includes(name))) : paths)
    return { companyId: first.company_id, token, workloads }
  })
  const header = `Authorization: Bearer ${seeded.token}`
  const tokenHash = new Bun.CryptoHasher('sha256').update(seeded.token).digest('hex')
  const servers: Server[] = [
    { label: 'baseline', mode: 'baseline', args: [seeded.companyId, tokenHash], header },
    { label: 'switchboard', mode: 'switchboard', header },
    ...(process.env.BENCH_OPEN === '1' ? [{ label: 'open', mode: 'open', header }] : []),
  ]
  const results = await measure(servers, seeded.workloads, env)
  report(seeded.workloads, servers, results, { reference: 'baseline', subject: 'switchboard', target: 0.9 })
})
