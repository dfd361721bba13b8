import { expect, test } from 'bun:test'
import { manualClock } from '../../src/clock.ts'
import { Breaker, BreakerOpen } from '../../src/mcp/breaker.ts'

const broken = () => Promise.reject(new Error('upstream down'))
const always = () => 'failure' as const

function setup() {
  const clock = manualClock()
  const breaker = new Breaker({ failures: 3, cooldownMs: 30_000 }, clock)
  let calls = 0
  const counted = (result: () => Promise<string>) => () => {
    calls += 1
    return result()
  }
  return { clock, breaker, calls: () => calls, counted }
}

test('it opens after the configured run of failures, then fails at once without calling', async () => {
  const { breaker, calls, counted } = setup()
  for (let i = 0; i < 3; i++) await expect(breaker.run(counted(broken), always)).rejects.toThrow('upstream down')
  expect(breaker.status()).toMatchObject({ state: 'open', failures: 3 })
  await expect(breaker.run(counted(async () => 'ok'), always)).rejects.toBeInstanceOf(BreakerOpen)
  expect(calls()).toBe(3)
})

test('a success in between resets the count; refused requests do not count at all', async () => {
  const { breaker } = setup()
  const refused = () => 'success' as const
  for (let i = 0; i < 2; i++) await breaker.run(broken, always).catch(() => {})
  await breaker.run(async () => 'ok', always)
  for (let i = 0; i < 5; i++) await breaker.run(broken, refused).catch(() => {})
  expect(breaker.status()).toMatchObject({ state: 'closed', failures: 0 })
})

test('after the cool-down exactly one probe goes through; its success closes the breaker', async () => {
  const { clock, breaker, calls, counted } = setup()
  for (let i = 0; i < 3; i++) await breaker.run(broken, always).catch(() => {})
  clock.advance(29_999)
  expect(breaker.status()).toMatchObject({ state: 'open', retry_at: new Date(clock.now() + 1).toISOString() })
  clock.advance(1)
  expect(breaker.state).toBe('half-open')

  let finish!: (value: string) => void
  const probe = breaker.run(counted(() => new Promise<string>((resolve) => (finish = resolve))), always)
  const others = await Promise.allSettled([breaker.run(counted(async () => 'x'), always), breaker.run(counted(async () => 'y'), always)])
  expect(others.map((o) => o.status)).toEqual(['rejected', 'rejected'])
  expect(calls()).toBe(1)
  finish('probed')
  expect(await probe).toBe('probed')
  expect(breaker.status()).toMatchObject({ state: 'closed', failures: 0, opened_at: null })
  expect(await breaker.run(counted(async () => 'again'), always)).toBe('again')
})

test('a failed probe opens it again for a whole cool-down', async () => {
  const { clock, breaker } = setup()
  for (let i = 0; i < 3; i++) await breaker.run(broken, always).catch(() => {})
  clock.advance(30_000)
  await expect(breaker.run(broken, always)).rejects.toThrow('upstream down')
  expect(breaker.status()).toMatchObject({ state: 'open', retry_at: new Date(clock.now() + 30_000).toISOString() })
  const quick = await breaker.run(async () => 'no', always).catch((error: BreakerOpen) => error)
  expect(quick).toBeInstanceOf(BreakerOpen)
  expect((quick as BreakerOpen).retryInMs).toBe(30_000)
})

test('a probe the upstream answers with a refusal still shows it is up, and closes the breaker', async () => {
  const { clock, breaker } = setup()
  for (let i = 0; i < 3; i++) await breaker.run(broken, always).catch(() => {})
  clock.advance(30_000)
  await expect(breaker.run(() => Promise.reject(new Error('bad params')), () => 'success')).rejects.toThrow('bad params')
  expect(breaker.state).toBe('closed')
})

test('a cancelled probe tells nothing: the breaker stays half-open and the next call probes', async () => {
  const { clock, breaker, calls, counted } = setup()
  for (let i = 0; i < 3; i++) await breaker.run(broken, always).catch(() => {})
  clock.advance(30_000)
  await expect(breaker.run(() => Promise.reject(new Error('cancelled')), () => 'neutral')).rejects.toThrow('cancelled')
  expect(breaker.state).toBe('half-open')
  expect(await breaker.run(counted(async () => 'probed'), always)).toBe('probed')
  expect(calls()).toBe(1)
  expect(breaker.state).toBe('closed')
})

test('a probe that hangs for a whole cool-down is given up, and the next call probes instead', async () => {
  const { clock, breaker } = setup()
  for (let i = 0; i < 3; i++) await breaker.run(broken, always).catch(() => {})
  clock.advance(30_000)
  let hang!: (value: string) => void
  const stuck = breaker.run(() => new Promise<string>((resolve) => (hang = resolve)), always)
  await expect(breaker.run(async () => 'no', always)).rejects.toBeInstanceOf(BreakerOpen)
  clock.advance(30_000)
  expect(await breaker.run(async () => 'second probe', always)).toBe('second probe')
  expect(breaker.state).toBe('closed')
  // The first probe ending late changes nothing.
  hang('late')
  await stuck
  expect(breaker.status()).toMatchObject({ state: 'closed', failures: 0 })
})

test('a call admitted before the breaker opened does not close it by succeeding late', async () => {
  const { breaker } = setup()
  let finish!: (value: string) => void
  const slow = breaker.run(() => new Promise<string>((resolve) => (finish = resolve)), always)
  for (let i = 0; i < 3; i++) await breaker.run(broken, always).catch(() => {})
  finish('late')
  expect(await slow).toBe('late')
  expect(breaker.state).toBe('open')
})
