import pino from 'pino'

export type Level = 'debug' | 'info' | 'warn' | 'error'

export interface Logger {
  debug(message: string, fields?: Record<string, unknown>): void
  info(message: string, fields?: Record<string, unknown>): void
  warn(message: string, fields?: Record<string, unknown>): void
  error(message: string, fields?: Record<string, unknown>): void
  /** A logger whose every line also carries `bindings` (a plugin's name, say). */
  child(bindings: Record<string, unknown>): Logger
}

/**
 * Fields whose values never reach the log, wherever they sit in a line's fields (down to three levels): whatever
 * names a password, a token, a key or a secret, and the headers that carry them. Enforced by pino's redaction, so a
 * careless `log.error('…', { body })` cannot leak one.
 */
export const REDACTED_FIELDS = [
  'password',
  'current_password',
  'new_password',
  'password_hash',
  'token',
  'token_hash',
  'access_token',
  'refresh_token',
  'id_token',
  'api_key',
  'apiKey',
  'secret',
  'client_secret',
  'authorization_code',
  'code_verifier',
  'value',
  'authorization',
  'cookie',
  'set-cookie',
  'x-api-key',
]

const REDACT_PATHS = REDACTED_FIELDS.flatMap((field) => {
  const key = /^[A-Za-z_$][\w$]*$/.test(field) ? field : `["${field}"]`
  const at = (prefix: string) => (key.startsWith('[') ? `${prefix.replace(/\.$/, '')}${key}` : `${prefix}${key}`)
  return [key, at('*.'), at('*.*.'), at('*.*.*.')]
})

/**
 * One JSON line per event on stderr, so stdout stays for what a person starting the server should read: pino, with
 * the platform's field names (`time`, `level`, `message`) and every secret-bearing field redacted.
 */
export function createLogger(minimum: Level | 'silent' = 'info', write: (line: string) => void = (l) => process.stderr.write(l)): Logger {
  return wrap(
    pino(
      {
        level: minimum,
        base: undefined,
        messageKey: 'message',
        timestamp: pino.stdTimeFunctions.isoTime,
        formatters: { level: (label) => ({ level: label }) },
        redact: { paths: REDACT_PATHS, censor: '[redacted]' },
      },
      { write },
    ),
  )
}

function wrap(log: pino.Logger): Logger {
  return {
    debug: (message, fields) => log.debug(fields ?? {}, message),
    info: (message, fields) => log.info(fields ?? {}, message),
    warn: (message, fields) => log.warn(fields ?? {}, message),
    error: (message, fields) => log.error(fields ?? {}, message),
    child: (bindings) => wrap(log.child(bindings)),
  }
}

export const silentLogger: Logger = { debug() {}, info() {}, warn() {}, error() {}, child: () => silentLogger }
