import { describe, expect, test } from 'bun:test'
import { join } from 'node:path'
import { usePlatform } from './platform.ts'

const FIXTURES = join(import.meta.dir, '..', 'fixtures', 'use-started')

/** Runs a fixture suite in its own `bun test`, as CI would, and answers its exit code and report. */
async function runSuite(file: string): Promise<{ code: number; report: string }> {
  const child = Bun.spawn([process.execPath, 'test', join(FIXTURES, file)], { stdout: 'pipe', stderr: 'pipe', env: { ...process.env, CI: 'true' } })
  const [stdout, stderr, code] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited])
  return { code, report: stdout + stderr }
}

test('a close that throws after a failed test leaves that failure visible and is reported on its own', async () => {
  const { code, report } = await runSuite('close-fails.ts')
  expect(code).toBe(1)
  expect(report).toContain('(fail) a test that fails on its own')
  expect(report).toContain('Expected: "what the test wanted"')
  expect(report).toContain('(pass) a test that passes')
  // Not swallowed: a failure of its own, naming what would not close and why.
  expect(report).toContain('Closing the fixture thing failed after the tests had run')
  expect(report).toContain('the store would not close')
  expect(report).toMatch(/2 fail/)
}, 30_000)

test('a start that fails is the one error reported: no second one from closing what never started', async () => {
  const { code, report } = await runSuite('start-fails.ts')
  expect(code).toBe(1)
  expect(report).toContain('the port was taken')
  expect(report).not.toContain('Closing the fixture thing')
  expect(report).not.toContain('is not running')
}, 30_000)

describe('usePlatform', () => {
  const p = usePlatform()
  test('gives the tests of its block a running platform', async () => {
    expect((await p().call('GET', '/api/me')).status).toBe(200)
  })
})
