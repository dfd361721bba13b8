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
 * names a password, a token, a key or a secret, and the headers that carry them. Enforced by the logger itself
 * (redacted, below), so a careless `log.error('…', { body })` cannot leak one.
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

const SECRET_FIELDS = new Set(REDACTED_FIELDS)
const CENSOR = '[redacted]'
/** How deep a secret is looked for: a field of a field of a field of a line's fields. */
const REDACT_DEPTH = 3

/**
 * `fields` with the value of every secret-bearing field censored, down to REDACT_DEPTH levels, in arrays as in
 * objects; the caller's objects are copied where something is censored, never changed. By hand rather than with
 * pino's redact option: its wildcard paths (`*.*.*.password`) took about 100 µs of every line, so of every request
 * (one log line each); this takes about one.
 */
export function redacted<T>(fields: T, depth = 0): T {
  if (typeof fields !== 'object' || fields === null || ArrayBuffer.isView(fields)) return fields
  let copy: Record<string, unknown> | undefined
  const source = fields as Record<string, unknown>
  for (const key of Object.keys(source)) {
    const value = source[key]
    const kept = SECRET_FIELDS.has(key) ? CENSOR : depth < REDACT_DEPTH ? redacted(value, depth + 1) : value
    if (kept === value) continue
    copy ??= copyOf(source)
    Object.defineProperty(copy, key, { value: kept, enumerable: true, writable: true, configurable: true })
  }
  return (copy ?? fields) as T
}

/**
 * A shallow copy that serializes as the original would: an array as an array; anything but a plain object keeps its
 * prototype and every own property, hidden ones too (an Error's message and stack, a toJSON that leaves fields out).
 */
function copyOf(source: Record<string, unknown>): Record<string, unknown> {
  if (Array.isArray(source)) return [...source] as unknown as Record<string, unknown>
  const prototype = Object.getPrototypeOf(source)
  return prototype === Object.prototype || prototype === null ? { ...source } : Object.create(prototype, Object.getOwnPropertyDescriptors(source))
}

/** The most text held back (in characters, so about as many bytes) before it is written at once. */
const BATCH_BYTES = 64 * 1024

/**
 * `write`, given the lines of one turn of the event loop together once the turn is over: a request's log line then
 * costs no write of its own, and none before its answer goes out (the request log makes the line as the answer passes
 * back through the middleware, before the server sends it). What is held is written at once past BATCH_BYTES, and
 * when the process exits; a line said while it exits is written straight away.
 */
export function batchedLines(write: (text: string) => void): ((line: string) => void) & { flush(): void } {
  let held = ''
  let pending: ReturnType<typeof setImmediate> | undefined
  let exiting = false
  const flush = () => {
    if (pending) clearImmediate(pending)
    pending = undefined
    if (!held) return
    const text = held
    held = ''
    write(text)
  }
  process.once('exit', () => {
    exiting = true
    flush()
  })
  const line = (text: string) => {
    if (exiting) return write(text)
    held += text
    if (held.length >= BATCH_BYTES) flush()
    else pending ??= setImmediate(flush)
  }
  return Object.assign(line, { flush })
}

/**
 * One JSON line per event on stderr, so stdout stays for what a person starting the server should read: pino, with
 * the platform's field names (`time`, `level`, `message`) and every secret-bearing field redacted (a child's
 * bindings too).
 */
export function createLogger(minimum: Level | 'silent' = 'info', write: (line: string) => void = batchedLines((text) => process.stderr.write(text))): Logger {
  return wrap(
    pino(
      {
        level: minimum,
        base: undefined,
        messageKey: 'message',
        timestamp: pino.stdTimeFunctions.isoTime,
        formatters: { level: (label) => ({ level: label }), log: (fields) => redacted(fields) },
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
    // pino formats a child's bindings once, without the log formatter.
    child: (bindings) => wrap(log.child(redacted(bindings))),
  }
}

export const silentLogger: Logger = { debug() {}, info() {}, warn() {}, error() {}, child: () => silentLogger }
