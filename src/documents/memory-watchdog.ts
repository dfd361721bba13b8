import { readFile } from 'node:fs/promises'

/**
 * Kills a child process whose resident memory goes over a cap: every `intervalMs` it reads VmRSS from
 * /proc/<pid>/status and calls `onOver` (once) when the cap is passed. Linux only; elsewhere /proc is missing and
 * the watchdog sees nothing, leaving the time limit as the only bound.
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
  const status = `/proc/${pid}/status`
  let stopped = false
  const timer = setInterval(async () => {
    let rssBytes: number
    try {
      rssBytes = Number(/VmRSS:\s+(\d+) kB/.exec(await readFile(status, 'utf8'))?.[1] ?? 0) * 1024
    } catch {
      return // the process has ended, or this system has no /proc
    }
    if (!stopped && rssBytes > capBytes) {
      stopped = true
      clearInterval(timer)
      onOver(rssBytes)
    }
  }, intervalMs)
  return () => {
    stopped = true
    clearInterval(timer)
  }
}
