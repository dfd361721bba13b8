import { expect, test } from 'bun:test'
import { MemoryBucketStore } from '../../src/throttle/buckets.ts'
import { LeasedBucketStore } from '../../src/throttle/leased.ts'
import { PostgresBucketStore } from '../../src/throttle/postgres.ts'
import { TEST_DATABASE_URL } from '../helpers/database.ts'
import { startTestPlatform } from '../helpers/platform.ts'

test('unset, the buckets are shared on PostgreSQL and in memory on the embedded store; the setting overrides', async () => {
  const byDefault = await startTestPlatform()
  const chosen = await startTestPlatform({ SWITCHBOARD_THROTTLE_STORE: TEST_DATABASE_URL ? 'memory' : 'shared' })
  try {
    // Shared, the API and MCP limits are served from leases of the database's buckets; sign-in's stays exact.
    const kinds = (shared: boolean) => (shared ? { api: LeasedBucketStore, mcp: LeasedBucketStore, login: PostgresBucketStore } : { api: MemoryBucketStore, mcp: MemoryBucketStore, login: MemoryBucketStore })
    for (const [platform, shared] of [[byDefault, Boolean(TEST_DATABASE_URL)], [chosen, !TEST_DATABASE_URL]] as const) {
      const { api, mcp, login } = platform.services.throttles
      expect({ api, mcp, login }).toMatchObject({ api: expect.any(kinds(shared).api), mcp: expect.any(kinds(shared).mcp), login: expect.any(kinds(shared).login) })
    }
  } finally {
    await Promise.all([byDefault.close(), chosen.close()])
  }
})
