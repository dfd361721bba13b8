import { closeSync, existsSync, mkdirSync, openSync, readFileSync, renameSync, rmSync, writeSync } from 'node:fs'
import { join } from 'node:path'

export class DataDirLockedError extends Error {
  constructor(dir: string, pid: number) {
    super(
      `The data directory ${dir} is in use by another Switchboard process (pid ${pid}). ` +
        'The embedded database allows one process at a time: stop that process, or set DATABASE_URL to share ' +
        'a PostgreSQL server between processes.',
    )
    this.name = 'DataDirLockedError'
  }
}

/** Whether `pid` may still write: a zombie has exited and only waits for its parent to reap it. */
function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0)
  } catch (error) {
    // EPERM: the process exists but belongs to someone else.
    if ((error as NodeJS.ErrnoException).code !== 'EPERM') return false
  }
  return !hasExited(pid)
}

function hasExited(pid: number): boolean {
  let stat: string
  try {
    stat = readFileSync(`/proc/${pid}/stat`, 'utf8')
  } catch {
    // Gone since kill() answered, where /proc is there to ask; elsewhere kill() is all there is to go by.
    return existsSync('/proc/self/stat')
  }
  // The state follows the command name, which is in parentheses and may itself hold spaces and parentheses.
  const state = stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3)
  return state === 'Z' || state === 'X'
}

function readHolder(path: string): number | undefined {
  try {
    const pid = Number.parseInt(readFileSync(path, 'utf8'), 10)
    return Number.isInteger(pid) ? pid : undefined
  } catch {
    return undefined
  }
}

// Directories this process holds: a second open from the same process is refused too.
const held = new Set<string>()

export interface LockOptions {
  /**
   * How long a live holder is waited for before the start is refused: a process killed a moment ago may still be
   * exiting when it is restarted.
   */
  waitMs?: number
  pollMs?: number
}

/**
 * PGlite has no lock of its own, and two processes writing one directory corrupt it. An exclusive-create lock
 * file holding our pid guards it. A file left by a process that died is moved aside before a new one is made,
 * so of two processes taking over the same stale lock only one wins.
 */
export async function lockDataDir(dir: string, { waitMs = 5_000, pollMs = 100 }: LockOptions = {}): Promise<() => void> {
  mkdirSync(dir, { recursive: true })
  const path = join(dir, 'switchboard.lock')
  if (held.has(path)) throw new DataDirLockedError(dir, process.pid)
  const deadline = Date.now() + waitMs
  for (;;) {
    try {
      return takeLock(dir, path)
    } catch (error) {
      if (!(error instanceof DataDirLockedError) || Date.now() >= deadline) throw error
      await Bun.sleep(Math.min(pollMs, Math.max(0, deadline - Date.now())))
    }
  }
}

function takeLock(dir: string, path: string): () => void {
  // A file naming our own pid that we do not hold was left by an earlier process that had the same pid (a
  // container's first process has the same one on every start).
  const holds = (pid: number) => (pid === process.pid ? held.has(path) : isRunning(pid))
  for (let attempt = 0; attempt < 3; attempt++) {
    try {
      const fd = openSync(path, 'wx', 0o600)
      writeSync(fd, String(process.pid))
      closeSync(fd)
      held.add(path)
      return () => {
        if (!held.delete(path)) return
        rmSync(path, { force: true })
      }
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== 'EEXIST') throw error
      const holder = readHolder(path)
      if (holder !== undefined && holds(holder)) throw new DataDirLockedError(dir, holder)
      const aside = `${path}.stale-${process.pid}`
      try {
        renameSync(path, aside)
      } catch (moveError) {
        // Another process moved it first; try again, and meet its fresh lock.
        if ((moveError as NodeJS.ErrnoException).code === 'ENOENT') continue
        throw moveError
      }
      const moved = readHolder(aside)
      if (moved !== holder && moved !== undefined && holds(moved)) {
        // We moved a lock made a moment ago by a process that took over first: give it back.
        renameSync(aside, path)
        throw new DataDirLockedError(dir, moved)
      }
      rmSync(aside, { force: true })
    }
  }
  throw new Error(`Could not lock the data directory ${dir}: another process keeps recreating ${path}.`)
}
