import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { systemClock } from '../../src/clock.ts'
import { startChatTurn, type ChatEvent } from '../helpers/chat.ts'
import { CLUSTER_NEEDS_POSTGRES } from '../helpers/cluster.ts'
import { createPostgresDatabase, openTestStore, TEST_DATABASE_URL } from '../helpers/database.ts'
import { FLAKY, startMcpPlatform, type McpTestPlatform } from '../helpers/mcp.ts'
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts'
import { until } from '../helpers/until.ts'

// Stop is a guarantee: a turn stopped while one of its tools runs upstream tells the upstream to stop too (the MCP
// notifications/cancelled), whichever process the stop was asked of.
const dir = mkdtempSync(join(tmpdir(), 'switchboard-stop-tools-'))
const lines = (file: string) => (existsSync(join(dir, file)) ? readFileSync(join(dir, file), 'utf8').split('\n').filter(Boolean).length : 0)
const FLAKY_SERVER = {
  name: 'flaky',
  transport: 'stdio',
  program: { name: 'flaky', command: process.execPath, args: [FLAKY], variables: ['FLAKY_DIR'] },
  env: { FLAKY_DIR: { value: dir } },
}
// The fixture writes into this test's folder, which a sandbox would hide from it (tests/mcp/sandbox.test.ts proves the sandbox).
const ENV = { SWITCHBOARD_MCP_SANDBOX: 'none', SWITCHBOARD_MASTER_KEY: 'b'.repeat(64) }
afterAll(() => rmSync(dir, { recursive: true, force: true }))

async function slowAgent(p: TestPlatform): Promise<string> {
  const made = await p.call('POST', '/api/v1/AgentConfigRecord', { json: { name: `slow-${crypto.randomUUID().slice(0, 8)}`, runner: 'echo', mcp_permissions: { servers: { flaky: { allow: ['slow'] } } } } })
  expect(made.status).toBe(201)
  return made.body.id
}

/** Starts a turn whose tool call takes half a minute upstream, and answers once that call is running there. */
async function turnInTool(p: TestPlatform, agentId: string) {
  const [calls, cancelled] = [lines('slow-calls'), lines('slow-cancelled')]
  const turn = await startChatTurn(p, { agent_id: agentId, text: '/tool flaky__slow {"ms":30000}' })
  expect(turn.response.status).toBe(200)
  const events: ChatEvent[] = []
  const reading = (async () => {
    for await (const event of turn.events()) events.push(event)
  })()
  await until(() => lines('slow-calls') > calls, { what: 'the tool call to be running upstream' })
  return { events, reading, cancelledBefore: cancelled, conversation: () => events[0]!.conversation_id as string }
}

describe('on the process that runs the turn', () => {
  let p: McpTestPlatform
  beforeAll(async () => {
    p = await startMcpPlatform({ env: ENV, servers: [FLAKY_SERVER], rules: [{ server: 'flaky', tool: '*', effect: 'allow' }] })
  })
  afterAll(() => p.close())

  test('stopping the turn cancels its tool call upstream, and the turn ends aborted at once', async () => {
    const turn = await turnInTool(p, await slowAgent(p))
    expect((await p.call('POST', '/api/chat/abort', { json: { conversation_id: turn.conversation() } })).body).toEqual({ aborted: true })
    await turn.reading
    expect(turn.events.at(-1)).toMatchObject({ type: 'aborted' })
    await until(() => lines('slow-cancelled') > turn.cancelledBefore, { what: 'the upstream to hear the call cancelled' })
  })
})

describe('across processes', () => {
  if (!TEST_DATABASE_URL) {
    test.skip(`a stop asked of another process cancels the tool call upstream (${CLUSTER_NEEDS_POSTGRES})`, () => {})
    return
  }
  let database: Awaited<ReturnType<typeof createPostgresDatabase>>
  let runs: McpTestPlatform
  let other: TestPlatform
  beforeAll(async () => {
    database = await createPostgresDatabase()
    runs = await startMcpPlatform({ env: ENV, servers: [FLAKY_SERVER], rules: [{ server: 'flaky', tool: '*', effect: 'allow' }], store: openTestStore(database) })
    other = await startTestPlatform(ENV, systemClock, openTestStore(database))
  })
  afterAll(async () => {
    await runs?.close()
    await other?.close()
    await database?.drop()
  })

  test('a stop asked of another process cancels the tool call upstream', async () => {
    const turn = await turnInTool(runs, await slowAgent(runs))
    expect((await other.call('POST', '/api/chat/abort', { json: { conversation_id: turn.conversation() } })).body).toEqual({ aborted: true })
    await turn.reading
    expect(turn.events.at(-1)).toMatchObject({ type: 'aborted' })
    await until(() => lines('slow-cancelled') > turn.cancelledBefore, { what: 'the upstream to hear the call cancelled' })
  }, 30_000)
})
