/**
 * The floor of a start on the embedded database, for bench/first-start.ts: the platform's own way of making its
 * database (the migrated template copied into `<data directory>/pgdata` when it holds none, then PGlite opened on
 * it as the platform opens it) and one statement, then a port that answers; none of the platform. What no start
 * on PGlite can take less than on the machine it runs on.
 *
 *   bun bench/bare-pglite.ts <data directory>
 */
import { join } from 'node:path'
import { openPglite } from '../src/db/connect.ts'
import { restoreTemplate } from '../src/db/pgdata-template.ts'

const dataDir = process.argv[2]
if (!dataDir) {
  console.error('usage: bun bench/bare-pglite.ts <data directory>')
  process.exit(2)
}
const pgdata = join(dataDir, 'pgdata')
await restoreTemplate(pgdata)
const pglite = await openPglite({ dataDir: pgdata })
await pglite.query('SELECT 1')
const server = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: () => new Response('{}') })
// The line bench/first-start.ts waits for, as src/main.ts prints it.
console.log(`API and docs   http://127.0.0.1:${server.port}/api/docs`)
process.once('SIGTERM', async () => {
  server.stop(true)
  await pglite.close()
  process.exit(0)
})
