// First: the process re-executes itself without the platform's variables in its environment block. The rest is
// imported after that, since static imports are all loaded before the first one runs: both images would load the
// whole platform. The few modules that open the store come first, so that the store's opening begins early; the
// platform's modules then load while it opens.
import './boot/clean-environ-now.ts'
import { embeddedDatabaseLikely, pgliteWasm } from './db/pglite-wasm.ts'
import type { Config } from './config.ts'
import type { Store } from './db/connect.ts'
import type { Platform } from './platform.ts'

// Before anything else loads: the embedded database's WebAssembly compiles on helper threads meanwhile.
if (embeddedDatabaseLikely(process.env)) pgliteWasm().catch(() => {})

const [{ isPlatformVariable }, { readSecretFiles }, { ConfigError, loadConfig }, { DataDirLockedError }, { openStore, opensNewDatabase }, { createLogger }, { firstPassword }] =
  await Promise.all([
    import('./boot/clean-environ.ts'),
    import('./boot/secret-files.ts'),
    import('./config.ts'),
    import('./db/lock.ts'),
    import('./db/connect.ts'),
    import('./logger.ts'),
    import('./auth/bootstrap.ts'),
  ])
const platformModules = Promise.all([import('./platform.ts'), import('./plugin-host/discover.ts'), import('./runners/registry.ts')])
// Reported where it is awaited, once the store is open and can be closed.
platformModules.catch(() => {})

// Bun cuts a connection idle for longer than this many seconds (255 is its maximum); NDJSON and MCP streams
// send keep-alives well within it.
const IDLE_TIMEOUT_SECONDS = 255

async function main(): Promise<void> {
  let config: Config
  try {
    readSecretFiles(process.env)
    config = loadConfig()
    // Read once into the config; a program started later with the inherited environment must not get them.
    for (const name of Object.keys(process.env)) if (isPlatformVariable(name)) delete process.env[name]
  } catch (error) {
    if (error instanceof ConfigError) return fail(error.message)
    throw error
  }
  const log = createLogger(config.logLevel)
  const storeOptions = { databaseUrl: config.databaseUrl, directUrl: config.databaseDirectUrl, dataDir: config.dataDir }
  // A first start: the superadmin's password is hashed on another thread while the store opens.
  const early = opensNewDatabase(storeOptions) ? firstPassword(config.initialAdmin) : undefined
  let store: Store
  try {
    store = await openStore(storeOptions)
  } catch (error) {
    if (error instanceof DataDirLockedError) return fail(error.message)
    return fail(`Could not open the database: ${(error as Error).message}`)
  }

  let platform: Platform
  try {
    const [{ createPlatform }] = await platformModules
    platform = await createPlatform(config, store, log, { firstPassword: early })
  } catch (error) {
    await store.close()
    const [, { PluginError }, { RunnerRefused }] = await platformModules
    if (error instanceof PluginError || error instanceof RunnerRefused) return fail(error.message)
    throw error
  }
  const { api, admin, adminWebSocket, bootstrap } = platform
  const servers = [
    Bun.serve({ hostname: config.host, port: config.apiPort, fetch: api.fetch, idleTimeout: IDLE_TIMEOUT_SECONDS }),
    Bun.serve({ hostname: config.host, port: config.adminPort, fetch: admin.fetch, websocket: adminWebSocket, idleTimeout: IDLE_TIMEOUT_SECONDS }),
  ]
  const [apiServer, adminServer] = servers
  platform.services.self.listening(apiServer!.port!)
  console.log(`Switchboard is running on ${store.kind === 'pglite' ? `the embedded database in ${config.dataDir}` : 'PostgreSQL'}.`)
  console.log(`  Admin console  http://${config.host}:${adminServer!.port}/`)
  console.log(`  API and docs   http://${config.host}:${apiServer!.port}/api/docs`)
  if (bootstrap.generatedPassword) {
    // Shown this once on the console, never logged or stored in plain.
    const { username, password } = bootstrap.generatedPassword
    console.log(`\nFirst start: sign in as "${username}" with the password ${password}`)
    console.log('Change it in the console, or set SWITCHBOARD_ADMIN_PASSWORD before the first start.')
  }

  let stopping = false
  const shutdown = async (signal: string) => {
    if (stopping) {
      console.log('Second signal: stopping now.')
      process.exit(1)
    }
    stopping = true
    log.info('shutting down', { signal })
    // Bun's graceful stop waits for open WebSockets: the chat's are told to go first, and their pages reconnect.
    platform.closeSockets()
    // stop() refuses new connections and resolves once the requests in flight have been answered. A long MCP tool
    // call may hold its stream open, so after a grace period the gateway's requests are stopped, which ends them.
    const stopped = Promise.all(servers.map((server) => server.stop()))
    await Promise.race([stopped, Bun.sleep(5_000)])
    await platform.services.gateway.closeAll()
    // Whatever still holds a connection after the grace period (a socket opened meanwhile) is cut.
    await Promise.race([stopped, Bun.sleep(2_000)])
    for (const server of servers) server.stop(true)
    await platform.close()
    await store.close()
    process.exit(0)
  }
  process.on('SIGINT', () => void shutdown('SIGINT'))
  process.on('SIGTERM', () => void shutdown('SIGTERM'))
}

function fail(message: string): never {
  console.error(message)
  process.exit(1)
}

await main()
