import { expect, spyOn, test } from 'bun:test'
import { join } from 'node:path'
import { verifyPassword } from '../../src/auth/login.ts'

const ROOT = join(import.meta.dir, '..', '..')

// An argon2id verify, as for a user's wrong password, so that a wrong name takes as long.
test('a login for no such user is checked against an argon2id hash', async () => {
  const verify = spyOn(Bun.password, 'verify')
  try {
    expect(await verifyPassword(undefined, 'guess')).toBeUndefined()
    expect(verify).toHaveBeenCalledTimes(1)
    expect(String(verify.mock.calls[0]![1])).toStartWith('$argon2id$')
  } finally {
    verify.mockRestore()
  }
})

test('a user without a password is refused, whatever is typed', async () => {
  const user = { id: 'u', username: 'ann', email: 'ann@example.com', display_name: 'Ann', is_superadmin: false, password_hash: null, deactivated_at: null, known_address: false }
  expect(await verifyPassword(user, '')).toBeUndefined()
})

// A top-level await in any module of the platform holds the evaluation of everything that imports it at each start.
// The login module's stand-in hash was one (200 ms of argon2id before the first request could be served). A load
// that waits never prints (Bun ends the child, or the 20 s limit does).
test('the platform’s modules load without waiting for a password hash', async () => {
  const script = [
    'Bun.password.hash = () => new Promise(() => {})',
    "await Promise.all([import('./src/platform.ts'), import('./src/plugin-host/discover.ts'), import('./src/runners/registry.ts')])",
    "console.log('loaded')",
  ].join('\n')
  const child = Bun.spawn([process.execPath, '-e', script], { cwd: ROOT, stdout: 'pipe', stderr: 'pipe', timeout: 20_000 })
  const [out, err] = await Promise.all([new Response(child.stdout).text(), new Response(child.stderr).text(), child.exited])
  expect(out.trim(), err).toBe('loaded')
})
