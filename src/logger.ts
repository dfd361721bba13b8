export type Level = 'debug' | 'info' | 'warn' | 'error'

export interface Logger {
  debug(message: string, fields?: Record<string, unknown>): void
  info(message: string, fields?: Record<string, unknown>): void
  warn(message: string, fields?: Record<string, unknown>): void
  error(message: string, fields?: Record<string, unknown>): void
}

const ORDER: Record<Level, number> = { debug: 10, info: 20, warn: 30, error: 40 }

/** One JSON line per event on stderr, so stdout stays for what a person starting the server should read. */
export function createLogger(minimum: Level = 'info', write: (line: string) => void = (l) => process.stderr.write(l)): Logger {
  const emit = (level: Level) => (message: string, fields: Record<string, unknown> = {}) => {
    if (ORDER[level] < ORDER[minimum]) return
    write(`${JSON.stringify({ time: new Date().toISOString(), level, message, ...fields })}\n`)
  }
  return { debug: emit('debug'), info: emit('info'), warn: emit('warn'), error: emit('error') }
}

export const silentLogger: Logger = { debug() {}, info() {}, warn() {}, error() {} }
