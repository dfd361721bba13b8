import { closeSync, fstatSync, readFileSync, writeSync } from 'node:fs'
import { openLibc } from './execve.ts'

/** Names the inherited pipe that carries the platform's variables into the re-executed image. Not a secret. */
export const HANDOVER_FD = 'SWITCHBOARD_HANDOVER_FD'

// Linux's default pipe capacity. Nobody reads before the exec, so a larger payload would block the write for ever.
const PIPE_CAPACITY = 65_536

type Env = Record<string, string | undefined>

/** The platform's own variables: its settings, its secrets, and the *_FILE forms that name secret files. */
export function isPlatformVariable(name: string): boolean {
  if (name === HANDOVER_FD) return false
  return name.startsWith('SWITCHBOARD_') || /^(DATABASE_URL|INTERNAL_API_SECRET)(_FILE)?$/.test(name)
}

/**
 * Keeps the platform's variables out of the process's environment block (/proc/<pid>/environ), which every process
 * of the same user can read and which keeps showing what the process was started with, whatever is later deleted
 * from process.env. The first image re-executes itself in place (same pid, so whoever started it still holds the
 * right one; same command line) without them, and hands their values over through an inherited pipe; the second
 * image reads them back into `env`. Where that cannot be done it warns and carries on as started.
 */
export function cleanEnviron(env: Env, warn: (message: string) => void = (message) => console.error(message)): void {
  if (env[HANDOVER_FD] !== undefined) return receive(env)
  const moving = Object.entries(env).filter(
    (entry): entry is [string, string] => isPlatformVariable(entry[0]) && typeof entry[1] === 'string',
  )
  // Also true after a hot reload of the re-executed image: its variables are back in env, but not in the block.
  if (moving.length === 0 || !environBlockHoldsPlatformVariables()) return
  const failure = reexecWithout(env, Object.fromEntries(moving))
  warn(
    `Warning: the platform's variables stay in this process's environment block, where other processes of the same ` +
      `user can read them (${failure}). The *_FILE variables keep secrets out of it.`,
  )
}

/** Returns only when the re-exec could not happen, with the reason. */
function reexecWithout(env: Env, moving: Record<string, string>): string {
  if (process.platform !== 'linux') return 'the re-exec that removes them is implemented on Linux only'
  // Bun's watch mode restarts the process with the block it was started with, which would hold no variables at all.
  if (process.execArgv.includes('--watch')) return 'bun --watch restarts the process with its original environment'
  const libc = openLibc()
  if (typeof libc === 'string') return libc
  const payload = Buffer.from(JSON.stringify(moving))
  if (payload.length > PIPE_CAPACITY) return `their ${payload.length} bytes exceed what a pipe holds`
  let pipe: ReturnType<typeof libc.pipe>
  try {
    pipe = libc.pipe()
    try {
      if (writeSync(pipe.writeFd, payload) !== payload.length) throw new Error('short write to the hand-over pipe')
    } finally {
      // The new image reads until end of file, so it must hold no write end.
      closeSync(pipe.writeFd)
    }
  } catch (error) {
    return (error as Error).message
  }
  const kept = Object.entries(env)
    .filter((entry): entry is [string, string] => typeof entry[1] === 'string' && !isPlatformVariable(entry[0]))
    .map(([name, value]) => `${name}=${value}`)
  const failure = libc.execve(
    process.execPath,
    [process.execPath, ...process.execArgv, ...process.argv.slice(1)],
    [...kept, `${HANDOVER_FD}=${pipe.readFd}`],
  )
  closeSync(pipe.readFd)
  return failure
}

/** Reads the hand-over fully, closes it, and puts the variables back into env (in memory only). */
function receive(env: Env): void {
  const fd = Number(env[HANDOVER_FD])
  delete env[HANDOVER_FD]
  let handed: unknown
  try {
    // Below 3 it would be stdio, which must not be read or closed.
    if (!Number.isInteger(fd) || fd < 3) throw new Error('not a descriptor number above stderr')
    try {
      if (!fstatSync(fd).isFIFO()) throw new Error('not a pipe')
      handed = JSON.parse(readFileSync(fd, 'utf8'))
    } finally {
      closeSync(fd)
    }
    if (typeof handed !== 'object' || handed === null) throw new Error('not a JSON object')
  } catch (error) {
    throw new Error(
      `${HANDOVER_FD} names no hand-over from a previous image (${(error as Error).message}). ` +
        'The platform sets it when it restarts itself; do not set it by hand.',
    )
  }
  for (const [name, value] of Object.entries(handed as Record<string, unknown>)) {
    if (isPlatformVariable(name) && typeof value === 'string') env[name] = value
  }
}

/** Whether the block the process was started with still holds them; where it cannot be read, assume it does. */
function environBlockHoldsPlatformVariables(): boolean {
  if (process.platform !== 'linux') return true
  try {
    return readFileSync('/proc/self/environ', 'latin1')
      .split('\0')
      .some((entry) => isPlatformVariable(entry.slice(0, entry.indexOf('='))))
  } catch {
    return true
  }
}
