import { closeSync, mkdirSync, openSync, readFileSync, renameSync, rmSync, writeSync } from 'node:fs'
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

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0)
    return true
  } catch (error) {
    // EPERM: the process exists but belongs to someone else.
    return (error as NodeJS.ErrnoException).code === 'EPERM'
  }
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

/**
 * PGlite has no lock of its own, and two processes writing one directory corrupt it. An exclusive-create lock
 * file holding our pid guards it. A file left by a process that died is moved aside before a new one is made,
 * so of two processes taking over the same stale lock only one wins.
 */
export function lockDataDir(dir: string): () => void {
  mkdirSync(dir, { recursive: true })
  const path = join(dir, 'switchboard.lock')
  if (held.has(path)) throw new DataDirLockedError(dir, process.pid)
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
      if (holder !== undefined && isAlive(holder)) throw new DataDirLockedError(dir, holder)
      const aside = `${path}.stale-${process.pid}`
      try {
        renameSync(path, aside)
      } catch (moveError) {
        // Another process moved it first; try again, and meet its fresh lock.
        if ((moveError as NodeJS.ErrnoException).code === 'ENOENT') continue
        throw moveError
      }
      const moved = readHolder(aside)
      if (moved !== holder && moved !== undefined && isAlive(moved)) {
        // We moved a lock made a moment ago by a process that took over first: give it back.
        renameSync(aside, path)
        throw new DataDirLockedError(dir, moved)
      }
      rmSync(aside, { force: true })
    }
  }
  throw new Error(`Could not lock the data directory ${dir}: another process keeps recreating ${path}.`)
}
