import type { DatabaseConnection, Dialect, Driver, TransactionSettings } from 'kysely'

/** How a store's connections are used now, for the metrics: read at a scrape, counted as work comes and goes. */
export class PoolUse {
  /** Connections Kysely holds (a query or a transaction on its own connection). */
  reserved = 0
  /** Work waiting for a connection to be free. */
  waiting = 0
  /** Single statements sent on the pool outside Kysely (the direct path), still unanswered. */
  direct = 0

  constructor(
    /** The most connections the pool opens. */
    readonly size: number,
  ) {}

  /** Counts a direct statement while it runs. */
  async counted<T>(statement: Promise<T>): Promise<T> {
    this.direct++
    try {
      return await statement
    } finally {
      this.direct--
    }
  }
}

/** `dialect`, with its connections counted in `use` as they are taken and given back. */
export function countedDialect(dialect: Dialect, use: PoolUse): Dialect {
  return {
    createAdapter: () => dialect.createAdapter(),
    createIntrospector: (db) => dialect.createIntrospector(db),
    createQueryCompiler: () => dialect.createQueryCompiler(),
    createDriver: () => countedDriver(dialect.createDriver(), use),
  }
}

function countedDriver(driver: Driver, use: PoolUse): Driver {
  return {
    init: () => driver.init(),
    async acquireConnection(): Promise<DatabaseConnection> {
      use.waiting++
      try {
        const connection = await driver.acquireConnection()
        use.reserved++
        return connection
      } finally {
        use.waiting--
      }
    },
    beginTransaction: (connection: DatabaseConnection, settings: TransactionSettings) => driver.beginTransaction(connection, settings),
    commitTransaction: (connection: DatabaseConnection) => driver.commitTransaction(connection),
    rollbackTransaction: (connection: DatabaseConnection) => driver.rollbackTransaction(connection),
    ...(driver.savepoint ? { savepoint: driver.savepoint.bind(driver) } : {}),
    ...(driver.rollbackToSavepoint ? { rollbackToSavepoint: driver.rollbackToSavepoint.bind(driver) } : {}),
    ...(driver.releaseSavepoint ? { releaseSavepoint: driver.releaseSavepoint.bind(driver) } : {}),
    async releaseConnection(connection: DatabaseConnection): Promise<void> {
      use.reserved--
      await driver.releaseConnection(connection)
    },
    destroy: () => driver.destroy(),
  }
}
