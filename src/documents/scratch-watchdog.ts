import { readdir, stat } from 'node:fs/promises'
import { join } from 'node:path'

/**
 * Calls `onOver` (once) when the files under `dir` add up to more than `capBytes`, checked every `intervalMs`. A
 * reader's scratch directory is its only writable place, and a library may inflate a zip bomb there rather than in
 * memory (exceljs spools a worksheet that comes before its shared strings), where the memory watchdog sees nothing.
 */
export function watchScratch(dir: string, capBytes: number, onOver: (bytes: number) => void, intervalMs = 100): () => void {
  let stopped = false
  const timer = setInterval(async () => {
    const bytes = await sizeOf(dir).catch(() => 0)
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

async function sizeOf(dir: string): Promise<number> {
  let total = 0
  for (const entry of await readdir(dir, { withFileTypes: true, recursive: true })) {
    if (entry.isFile()) total += (await stat(join(entry.parentPath, entry.name)).catch(() => ({ size: 0 }))).size
  }
  return total
}
