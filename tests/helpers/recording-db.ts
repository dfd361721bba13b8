import type { KyselyPlugin } from 'kysely'
import type { Db } from '../../src/db/schema.ts'

/** What a recording store has been asked. */
export interface Recorded {
  /** Statements executed, however they were made (a builder's, a template's, raw SQL). */
  executed: number
  /** The SQL of statements sent already compiled (templates and raw SQL, as hot reads are), in order. */
  compiled: string[]
}

/**
 * Another instance of the store's Kysely that notes what it is asked, for a test that counts what a piece of the
 * kernel asks of the store. It has no direct path (connect.ts), so a template's statement too goes through Kysely's
 * executor on both stores, where it is seen.
 */
export function recordingDb(db: Db): { db: Db; recorded: Recorded } {
  const recorded: Recorded = { executed: 0, compiled: [] }
  const counting: KyselyPlugin = {
    transformQuery: (args) => args.node,
    transformResult: async (args) => {
      recorded.executed++
      return args.result
    },
  }
  const recording = db.withPlugin(counting) as Db
  const execute = recording.executeQuery.bind(recording)
  recording.executeQuery = ((query: Parameters<Db['executeQuery']>[0]) => {
    recorded.compiled.push('sql' in query ? query.sql : query.compile().sql)
    return execute(query)
  }) as Db['executeQuery']
  return { db: recording, recorded }
}
