import { mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { loadConfig } from '../../src/config.ts'
import type { Store } from '../../src/db/connect.ts'
import { silentLogger } from '../../src/logger.ts'
import { createPlatform, type Platform } from '../../src/platform.ts'
import { freshStore } from './database.ts'

export interface Reply<T = any> {
  status: number
  headers: Headers
  body: T
}

export interface TestPlatform extends Platform {
  store: Store
  /** Calls the api app in process; a `json` body is sent as application/json. */
  call<T = any>(method: string, path: string, options?: { json?: unknown; body?: BodyInit; headers?: Record<string, string> }): Promise<Reply<T>>
  close(): Promise<void>
}

export async function startTestPlatform(env: Record<string, string> = {}): Promise<TestPlatform> {
  const dataDir = mkdtempSync(join(tmpdir(), 'switchboard-test-'))
  const store = await freshStore()
  const config = loadConfig({ SWITCHBOARD_DATA_DIR: dataDir, ...env })
  const platform = await createPlatform(config, store, silentLogger)
  return {
    ...platform,
    store,
    async call(method, path, options = {}) {
      const headers: Record<string, string> = { ...options.headers }
      let body = options.body
      if (options.json !== undefined) {
        body = JSON.stringify(options.json)
        headers['content-type'] ??= 'application/json'
      }
      const response = await platform.api.request(path, { method, headers, body })
      const text = await response.text()
      const type = response.headers.get('content-type') ?? ''
      return { status: response.status, headers: response.headers, body: /json/.test(type) && text ? JSON.parse(text) : text }
    },
    async close() {
      await store.close()
      rmSync(dataDir, { recursive: true, force: true })
    },
  }
}
