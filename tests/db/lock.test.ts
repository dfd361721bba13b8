import { expect, test } from 'bun:test'
import { existsSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { DataDirLockedError, lockDataDir } from '../../src/db/lock.ts'
import { until } from '../helpers/until.ts'

const dir = () => mkdtempSync(join(tmpdir(), 'switchboard-lock-'))
const holdBy = (data: string, pid: number) => writeFileSync(join(data, 'switchboard.lock'), String(pid))

function processState(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3)
  } catch {
    return undefined
  }
}

/**
 * A real zombie: the shell starts a short sleep in the background and then becomes a long sleep, which never
 * reaps it. Returns the zombie's pid and its parent, which must be killed to let the zombie go.
 */
async function makeZombie(): Promise<{ pid: number; parent: Bun.Subprocess }> {
  const parent = Bun.spawn(['sh', '-c', 'sleep 0.05 & echo $!; exec sleep 30'], { stdout: 'pipe' })
  const reader = parent.stdout.pipeThrough(new TextDecoderStream()).getReader()
  let line = ''
  while (!line.includes('\n')) {
    const { value, done } = await reader.read()
    if (done) throw new Error(`the shell ended before it printed the background pid: ${JSON.stringify(line)}`)
    line += value
  }
  reader.releaseLock()
  const pid = Number.parseInt(line, 10)
  await until(() => processState(pid) === 'Z', { what: `the background sleep (pid ${pid}) to exit and stay unreaped` })
  return { pid, parent }
}

test('a directory held by a live process is refused with a message that says what to do', async () => {
  const data = dir()
  const holder = Bun.spawn(['sleep', '30'])
  holdBy(data, holder.pid)
  try {
    await expect(lockDataDir(data, { waitMs: 0 })).rejects.toThrow(DataDirLockedError)
    await expect(lockDataDir(data, { waitMs: 0 })).rejects.toThrow(`in use by another Switchboard process (pid ${holder.pid})`)
  } finally {
    holder.kill()
    await holder.exited
  }
})

test('a live holder is waited for, and still refused once the wait is over', async () => {
  const data = dir()
  const holder = Bun.spawn(['sleep', '30'])
  holdBy(data, holder.pid)
  try {
    const started = Date.now()
    await expect(lockDataDir(data, { waitMs: 400, pollMs: 50 })).rejects.toThrow(DataDirLockedError)
    expect(Date.now() - started).toBeGreaterThanOrEqual(400)
    expect(readFileSync(join(data, 'switchboard.lock'), 'utf8')).toBe(String(holder.pid))
  } finally {
    holder.kill()
    await holder.exited
  }
})

test('a holder that exits during the wait hands the directory over', async () => {
  const data = dir()
  const holder = Bun.spawn(['sleep', '0.3'])
  holdBy(data, holder.pid)
  const started = Date.now()
  const release = await lockDataDir(data, { waitMs: 10_000, pollMs: 20 })
  expect(Date.now() - started).toBeGreaterThanOrEqual(200)
  expect(readFileSync(join(data, 'switchboard.lock'), 'utf8')).toBe(String(process.pid))
  release()
})

test('a holder that is a zombie (exited, not yet reaped) does not block', async () => {
  const data = dir()
  const zombie = await makeZombie()
  try {
    holdBy(data, zombie.pid)
    const started = Date.now()
    const release = await lockDataDir(data, { waitMs: 10_000 })
    expect(Date.now() - started).toBeLessThan(1_000)
    expect(readFileSync(join(data, 'switchboard.lock'), 'utf8')).toBe(String(process.pid))
    release()
  } finally {
    zombie.parent.kill()
    await zombie.parent.exited
  }
})

test('a lock left by a process that died is taken over', async () => {
  const data = dir()
  const gone = Bun.spawn(['true'])
  await gone.exited
  holdBy(data, gone.pid)
  const release = await lockDataDir(data)
  expect(await Bun.file(join(data, 'switchboard.lock')).text()).toBe(String(process.pid))
  release()
  expect(existsSync(join(data, 'switchboard.lock'))).toBe(false)
})

test('a lock naming our own pid that we do not hold was left by an earlier process, and is taken over', async () => {
  const data = dir()
  holdBy(data, process.pid)
  const release = await lockDataDir(data, { waitMs: 0 })
  // Taken over, not merely read: a second open from this process is now refused.
  await expect(lockDataDir(data, { waitMs: 0 })).rejects.toThrow(DataDirLockedError)
  release()
  expect(existsSync(join(data, 'switchboard.lock'))).toBe(false)
})

test('released, the directory can be locked again', async () => {
  const data = dir()
  const lockFile = join(data, 'switchboard.lock')
  const first = await lockDataDir(data)
  expect(readFileSync(lockFile, 'utf8')).toBe(String(process.pid))
  first()
  expect(existsSync(lockFile)).toBe(false)
  const again = await lockDataDir(data, { waitMs: 0 })
  expect(readFileSync(lockFile, 'utf8')).toBe(String(process.pid))
  await expect(lockDataDir(data, { waitMs: 0 })).rejects.toThrow(DataDirLockedError)
  again()
  expect(existsSync(lockFile)).toBe(false)
})

test('the same process cannot lock a directory twice, and releasing one handle frees it once', async () => {
  const data = dir()
  const release = await lockDataDir(data)
  await expect(lockDataDir(data)).rejects.toThrow(DataDirLockedError)
  release()
  release()
  const again = await lockDataDir(data)
  expect(existsSync(join(data, 'switchboard.lock'))).toBe(true)
  again()
})
