/**
 * PGlite's WebAssembly, compiled once per process. Compiling it takes 170-200 ms, on the engine's helper threads;
 * PGlite itself would begin only once its data directory is there, which on a first start means after the template
 * is unpacked, with the platform's modules loading on the main thread meanwhile. main.ts begins it first instead
 * (embeddedDatabaseLikely), so that the compiling runs beside both. This module imports nothing, so that it can.
 */
let compiled: Promise<WebAssembly.Module> | undefined

export function pgliteWasm(): Promise<WebAssembly.Module> {
  if (compiled) return compiled
  compiled = (async () => {
    // Where PGlite looks for it: beside its entry point.
    const file = new URL('./pglite.wasm', import.meta.resolve('@electric-sql/pglite'))
    return WebAssembly.compile(await Bun.file(file).bytes())
  })()
  // A failure is not kept: the next opening tries again, as PGlite's own loading would.
  compiled.catch(() => (compiled = undefined))
  return compiled
}

/**
 * Whether this start is likely to open the embedded database, judged from the environment alone before the
 * configuration is loaded: no DATABASE_URL and no file naming one (empty counts as none, as in the configuration).
 * A wrong guess costs a compile on helper threads, never a wrong store.
 */
export function embeddedDatabaseLikely(env: Record<string, string | undefined>): boolean {
  return !env.DATABASE_URL && !env.DATABASE_URL_FILE
}
