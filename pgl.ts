import { PGlite } from '@electric-sql/pglite'
let t = performance.now()
const p = new PGlite()
await p.waitReady
console.log('mem init', performance.now() - t)
await p.exec('create table t (id uuid primary key, n int); insert into t values (gen_random_uuid(), 1)')
t = performance.now()
const dump = await p.dumpDataDir('none')
console.log('dump', performance.now() - t, dump.size)
t = performance.now()
const q = new PGlite({ loadDataDir: dump })
await q.waitReady
console.log('load', performance.now() - t, (await q.query('select count(*) from t')).rows)
t = performance.now()
const d = new PGlite('/tmp/pgdir-test')
await d.waitReady
console.log('dir init', performance.now() - t)
console.log((await d.query('select version()')).rows)
await d.close()
