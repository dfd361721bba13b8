import { PGlite } from '@electric-sql/pglite'
import { migratedTemplate } from './src/db/pgdata-template.ts'
const pg = new PGlite({ loadDataDir: await migratedTemplate() })
console.log((await pg.query('select oid, datname, current_database() as cur from pg_database')).rows)
console.log((await pg.query("select count(*) from pg_tables where schemaname='public'")).rows)
