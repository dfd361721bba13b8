import { expect, test } from 'bun:test'
import { MemoryBucketStore } from '../../src/throttle/buckets.ts'
import { PostgresBucketStore } from '../../src/throttle/postgres.ts'
import { TEST_DATABASE_URL } from '../helpers/database.ts'
import { startTestPlatform } from '../helpers/platform.ts'

test('unset, the buckets are shared on PostgreSQL and in memory on the embedded store; the setting overrides', async () => {
  const byDefault = await startTestPlatform()
  const chosen = await startTestPlatform({ SWITCHBOARD_THROTTLE_STORE: TEST_DATABASE_URL ? 'memory' : 'shared' })
  try {
    const [sharedKind, memoryKind] = [PostgresBucketStore, MemoryBucketStore]
    for (const store of Object.values(byDefault.services.throttles)) expect(store).toBeInstanceOf(TEST_DATABASE_URL ? sharedKind : memoryKind)
    for (const store of Object.values(chosen.services.throttles)) expect(store).toBeInstanceOf(TEST_DATABASE_URL ? memoryKind : sharedKind)
  } finally {
    await Promise.all([byDefault.close(), chosen.close()])
  }
})
