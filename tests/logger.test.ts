import { expect, test } from 'bun:test'
import { batchedLines, createLogger, REDACTED_FIELDS, redacted } from '../src/logger.ts'

function capture(level?: Parameters<typeof createLogger>[0]) {
  const lines: string[] = []
  return { log: createLogger(level, (line) => lines.push(line)), lines, parsed: () => lines.map((line) => JSON.parse(line)) }
}

test('one JSON line per event: time, level, message and the fields', () => {
  const { log, parsed } = capture()
  log.info('started', { port: 8000 })
  expect(parsed()).toEqual([{ time: expect.stringMatching(/^\d{4}-\d\d-\d\dT/), level: 'info', message: 'started', port: 8000 }])
})

test('every secret-bearing field is redacted, at the top and nested, whatever the caller passed', () => {
  const { log, lines } = capture()
  const secrets = Object.fromEntries(REDACTED_FIELDS.map((field, i) => [field, `leak-${i}-${field}`]))
  log.error('careless', { ...secrets, body: { ...secrets, deeper: { ...secrets, deepest: secrets } }, headers: { authorization: 'Bearer sb_leak', cookie: 'switchboard_session_token=leak' } })
  const line = lines.join('')
  expect(line).not.toContain('leak')
  expect(line).toContain('[redacted]')
  expect(JSON.parse(line).body.deeper.password).toBe('[redacted]')
})

test('secrets in arrays and in a child logger’s bindings are redacted too; the caller’s objects are left as they were', () => {
  const { log, lines } = capture()
  const fields = { calls: [{ tool: 'fetch', headers: { authorization: 'Bearer leak-1' } }], user: { name: 'ann', token: 'leak-2' } }
  log.child({ api_key: 'leak-3', plugin: 'p' }).info('calls', fields)
  const line = JSON.parse(lines.join(''))
  expect(line).toMatchObject({ api_key: '[redacted]', plugin: 'p', calls: [{ tool: 'fetch', headers: { authorization: '[redacted]' } }], user: { name: 'ann', token: '[redacted]' } })
  expect(fields.calls[0]!.headers.authorization).toBe('Bearer leak-1')
  expect(fields.user.token).toBe('leak-2')
})

test('redacted copies only what holds a secret, and leaves bytes and what has none alone', () => {
  const clean = { a: { b: [1, 2] } }
  expect(redacted(clean)).toBe(clean)
  const bytes = new Uint8Array(3)
  const mixed = { clean, bytes, login: { password: 'x' } }
  const out = redacted(mixed)
  expect(out).not.toBe(mixed)
  expect(out.clean).toBe(clean)
  expect(out.bytes).toBe(bytes)
  expect(out.login).toEqual({ password: '[redacted]' })
  // What is not a plain object keeps its prototype and hidden properties: an error stays an error, a toJSON still
  // decides what is written.
  const failure = Object.assign(new Error('refused'), { config: { headers: { authorization: 'Bearer x' } } })
  const copied = redacted({ err: failure }).err
  expect(copied).toBeInstanceOf(Error)
  expect(copied.message).toBe('refused')
  expect(copied.config.headers.authorization).toBe('[redacted]')
  class Account {
    token = 'x'
    private_key = 'y'
    toJSON() {
      return { token: this.token }
    }
  }
  expect(JSON.stringify(redacted({ account: new Account() }))).toBe('{"account":{"token":"[redacted]"}}')
  // Three levels below the line's own fields, as far as the redaction reaches.
  expect(redacted({ a: { b: { c: { token: 'x' } } } })).toEqual({ a: { b: { c: { token: '[redacted]' } } } })
})

test('a child logger carries its bindings; levels below the minimum and a silent logger write nothing', () => {
  const { log, parsed } = capture('warn')
  log.child({ plugin: 'channel-email' }).warn('mailbox unreachable', { agent: 'a' })
  log.info('not written')
  expect(parsed()).toEqual([expect.objectContaining({ level: 'warn', plugin: 'channel-email', agent: 'a', message: 'mailbox unreachable' })])
  const silent = capture('silent')
  silent.log.error('nothing')
  expect(silent.lines).toEqual([])
})

test('lines said in one turn of the event loop are written together, in order, once the turn is over', async () => {
  const writes: string[] = []
  const line = batchedLines((text) => writes.push(text))
  line('one\n')
  line('two\n')
  expect(writes).toEqual([])
  await new Promise((resolve) => setImmediate(resolve))
  expect(writes).toEqual(['one\ntwo\n'])
  line('three\n')
  line.flush()
  expect(writes).toEqual(['one\ntwo\n', 'three\n'])
  // A burst larger than the batch is written as it fills, not held.
  const big = 'x'.repeat(40 * 1024)
  line(big)
  line(big)
  expect(writes.at(-1)).toBe(big + big)
  await new Promise((resolve) => setImmediate(resolve))
  expect(writes).toHaveLength(3)
})
