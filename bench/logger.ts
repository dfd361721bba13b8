/**
 * The logger of a platform a benchmark measures (bench/crud-server.ts, bench/mcp-server.ts), as production runs it:
 * every request's line is made, and written in batches as production writes them (batchedLines), so their cost is
 * counted. The info lines go to /dev/null rather than flood the terminal; warnings and errors go to stderr.
 */
import { openSync, writeSync } from 'node:fs'
import { batchedLines, createLogger, type Logger } from '../src/logger.ts'

export function benchLogger(): Logger {
  const nowhere = openSync('/dev/null', 'w')
  const info = batchedLines((text) => writeSync(nowhere, text))
  return createLogger('info', (line) => (line.startsWith('{"level":"info"') ? info(line) : process.stderr.write(line)))
}
