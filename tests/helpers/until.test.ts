import { expect, test } from 'bun:test'
import { hasSettled, until } from './until.ts'

test('until answers the first truthy value, as soon as there is one', async () => {
  let asks = 0
  const started = Date.now()
  expect(await until(() => ++asks >= 3 && 'ready', { what: 'the third ask', intervalMs: 5 })).toBe('ready')
  expect(asks).toBe(3)
  expect(Date.now() - started).toBeLessThan(1_000)
})

test('until fails naming what it waited for, and quoting the last error of the condition', async () => {
  await expect(until(() => false, { what: 'the upstream to be dropped', timeoutMs: 50 })).rejects.toThrow('Gave up after 50 ms waiting for the upstream to be dropped.')
  const throwing = () => {
    throw new Error('connection refused')
  }
  await expect(until(throwing, { what: 'the server', timeoutMs: 50 })).rejects.toThrow('waiting for the server (last attempt threw: connection refused).')
})

test('hasSettled tells a pending promise from a settled one, rejected ones included', async () => {
  expect(await hasSettled(new Promise(() => {}))).toBe(false)
  expect(await hasSettled(Promise.resolve().then(() => undefined).then(() => undefined))).toBe(true)
  expect(await hasSettled(Promise.reject(new Error('no')))).toBe(true)
})
