/**
 * The floor of a start on the embedded database, for bench/first-start.ts: Bun, the migrated template unpacked into
 * `<data directory>/pgdata` when it holds no database yet, PGlite opened on it with the platform's settings, one
 * statement, then a port that answers, with PGlite's WebAssembly compiled from the first moment as the platform
 * compiles it. It loads PGlite and nothing of the platform but that compile (src/db/pglite-wasm.ts, which imports
 * nothing; bench/first-start.ts finds the template): what no start on PGlite can take less than on the machine it
 * runs on.
 *
 *   bun bench/bare-pglite.ts <template .tar> <data directory>
 */
import { pgliteWasm } from '../src/db/pglite-wasm.ts'
// As src/main.ts begins it, before anything else loads.
pgliteWasm().catch(() => {})
const [{ existsSync }, { join }, { PGlite }] = await Promise.all([import('node:fs'), import('node:path'), import('@electric-sql/pglite')])

const [template, dataDir] = process.argv.slice(2)
if (!template || !dataDir) {
  console.error('usage: bun bench/bare-pglite.ts <template .tar> <data directory>')
  process.exit(2)
}
const pgdata = join(dataDir, 'pgdata')
// As src/db/pgdata-template.ts restores it (without its move into place, which costs a rename).
if (!existsSync(join(pgdata, 'PG_VERSION'))) await new Bun.Archive(await Bun.file(template).bytes()).extract(pgdata)
// As src/db/connect.ts opens it.
const pglite = new PGlite({ dataDir: pgdata, pgliteWasmModule: await pgliteWasm(), startParams: [...PGlite.defaultStartParams, '-c', 'shared_buffers=32MB'] })
await pglite.waitReady
await pglite.query('SELECT 1')
const server = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: () => new Response('{}') })
// The line bench/first-start.ts waits for, as src/main.ts prints it.
console.log(`API and docs   http://127.0.0.1:${server.port}/api/docs`)
process.once('SIGTERM', async () => {
  server.stop(true)
  await pglite.close()
  process.exit(0)
})
