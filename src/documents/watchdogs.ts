import { readdir, readFile, stat } from 'node:fs/promises'
import { join } from 'node:path'

/** Every `intervalMs`, measures; calls `onOver` once when the measure passes `capBytes`. Returns the way to stop. */
function watchOver(measure: () => Promise<number>, capBytes: number, onOver: (bytes: number) => void, intervalMs: number): () => void {
  let stopped = false
  const timer = setInterval(async () => {
    // A measure that fails (the process has ended, no /proc here) is no verdict.
    const bytes = await measure().catch(() => 0)
    if (!stopped && bytes > capBytes) {
      stopped = true
      clearInterval(timer)
      onOver(bytes)
    }
  }, intervalMs)
  return () => {
    stopped = true
    clearInterval(timer)
  }
}

/**
 * Calls `onOver` (once) when a child process's resident memory goes over a cap, read from /proc/<pid>/status
 * (VmRSS). Linux only; elsewhere /proc is missing and the watchdog sees nothing, leaving the time limit as the only
 * bound.
 *
 * Why a watchdog and not an rlimit, measured with Bun 1.4.5 on this machine (Linux x64, 24 GB):
 * - `prlimit --as` caps address space, and JavaScriptCore reserves far more than it uses: Bun does not even start
 *   under 512 MB; at 1 GB it starts, and a process allocating buffers dies at 375 MB resident, at 2 GB a process
 *   filling its heap with objects at 1.6 GB. The cap bears no stable relation to the memory really used.
 * - `prlimit --data` (brk and private mappings): Bun with the document libraries loaded needs 512 MB to start; at
 *   1 GB buffers die at 445 MB resident and heap objects at 717 MB, the latter by SIGABRT or SIGSEGV.
 * - This watchdog at 50 ms, cap 256 MB: killed at 285 MB (buffers, 50 MB steps), 275 MB (heap objects), 294 MB
 *   (one 4 GB allocation being filled); cap 512 MB: 550 and 528 MB. It enforces the figure it is given, within
 *   what can be allocated between two samples, and a kill by the parent is told apart from a crash.
 */
export function watchMemory(pid: number, capBytes: number, onOver: (rssBytes: number) => void, intervalMs = 50): () => void {
  return watchOver(() => treeRss(pid), capBytes, onOver, intervalMs)
}

/** The resident memory of a process and all its descendants (a sandbox runs the reader as a grandchild). */
async function treeRss(pid: number): Promise<number> {
  const rss = Number(/VmRSS:\s+(\d+) kB/.exec(await readFile(`/proc/${pid}/status`, 'utf8'))?.[1] ?? 0) * 1024
  const children = await childrenOf(pid)
  const below = await Promise.all(children.map((child) => treeRss(child).catch(() => 0)))
  return below.reduce((sum, bytes) => sum + bytes, rss)
}

async function childrenOf(pid: number): Promise<number[]> {
  const tasks = await readdir(`/proc/${pid}/task`).catch(() => [] as string[])
  const lists = await Promise.all(tasks.map((task) => readFile(`/proc/${pid}/task/${task}/children`, 'utf8').catch(() => '')))
  return lists.flatMap((list) => list.split(/\s+/).filter(Boolean).map(Number))
}

/**
 * Calls `onOver` (once) when the files under `dir` add up to more than `capBytes`. A reader's scratch directory is
 * its only writable place, and a library may inflate a zip bomb there rather than in memory (exceljs spools a
 * worksheet that comes before its shared strings), where the memory watchdog sees nothing.
 */
export function watchScratch(dir: string, capBytes: number, onOver: (bytes: number) => void, intervalMs = 100): () => void {
  return watchOver(() => sizeOf(dir), capBytes, onOver, intervalMs)
}

async function sizeOf(dir: string): Promise<number> {
  let total = 0
  for (const entry of await readdir(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile()) total += (await stat(join(entry.parentPath, entry.name)).catch(() => ({ size: 0 }))).size
  }
  return total
}
