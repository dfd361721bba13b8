import { expect, test } from 'bun:test'
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { DataDirLockedError, lockDataDir } from '../../src/db/lock.ts'

const dir = () => mkdtempSync(join(tmpdir(), 'switchboard-lock-'))

test('a directory held by a live process is refused with a message that says what to do', async () => {
  const data = dir()
  const holder = Bun.spawn(['sleep', '30'])
  writeFileSync(join(data, 'switchboard.lock'), String(holder.pid))
  try {
    expect(() => lockDataDir(data)).toThrow(DataDirLockedError)
    expect(() => lockDataDir(data)).toThrow(`in use by another Switchboard process (pid ${holder.pid})`)
  } finally {
    holder.kill()
    await holder.exited
  }
})

test('a lock left by a process that died is taken over', async () => {
  const data = dir()
  const gone = Bun.spawn(['true'])
  await gone.exited
  writeFileSync(join(data, 'switchboard.lock'), String(gone.pid))
  const release = lockDataDir(data)
  expect(await Bun.file(join(data, 'switchboard.lock')).text()).toBe(String(process.pid))
  release()
  expect(existsSync(join(data, 'switchboard.lock'))).toBe(false)
})

test('released, the directory can be locked again', () => {
  const data = dir()
  lockDataDir(data)()
  const again = lockDataDir(data)
  again()
})

test('the same process cannot lock a directory twice, and releasing one handle frees it once', () => {
  const data = dir()
  const release = lockDataDir(data)
  expect(() => lockDataDir(data)).toThrow(DataDirLockedError)
  release()
  release()
  const again = lockDataDir(data)
  expect(existsSync(join(data, 'switchboard.lock'))).toBe(true)
  again()
})
