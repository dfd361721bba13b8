/**
 * PGlite's WebAssembly, compiled once per process. Compiling it takes 170-200 ms, on the engine's helper threads;
 * PGlite itself would begin only once its data directory is there, which on a first start means after the template
 * is unpacked, with the platform's modules loading on the main thread meanwhile. main.ts begins it first instead
 * (embeddedDatabaseLikely), so that the compiling runs beside both. This module imports nothing, so that it can.
 */
let compiled: Promise<WebAssembly.Module> | undefined

export function pgliteWasm(): Promise<WebAssembly.Module> {
  compiled ??= (async () => {
    // Where PGlite looks for it: beside its entry point.
    const file = new URL('./pglite.wasm', import.meta.resolve('@electric-sql/pglite'))
    return WebAssembly.compile(await Bun.file(file).bytes())
  })()
  return compiled
}

/**
 * Whether this start is likely to open the embedded database, judged from the environment alone before the
 * configuration is loaded: no DATABASE_URL (empty counts as none, as in the configuration) and no file naming one.
 * A wrong guess costs a compile on helper threads, never a wrong store.
 */
export function embeddedDatabaseLikely(env: Record<string, string | undefined>): boolean {
  return !env.DATABASE_URL && env.DATABASE_URL_FILE === undefined
}
