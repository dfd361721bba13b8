import { beforeAll, expect, test } from 'bun:test'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js'
import { CLUSTER_NEEDS_POSTGRES, useCluster } from '../helpers/cluster.ts'
import { NOTES_PLUGIN } from '../helpers/mcp.ts'
import { TEST_DATABASE_URL } from '../helpers/database.ts'
import { until } from '../helpers/until.ts'

// Tool approvals across two platform processes on one database: a turn waits on one process and hears an answer
// given on the other, and two answers given at once on both leave exactly one decision.

// The fixture plugin `notes` (built-in MCP tools) for an MCP host asked through the round-robin proxy.
const cluster = useCluster({ processes: 2, env: NOTES_PLUGIN })
let agent: string

if (TEST_DATABASE_URL) {
  beforeAll(async () => {
    const c = cluster()
    const made = await c.call(c.url, 'POST', '/api/v1/AgentConfigRecord', { json: { name: 'careful', runner: 'echo', model: 'echo-1', plugins: { enabled: ['mcp-planning'] } } })
    expect(made.status).toBe(201)
    agent = made.body.id
    for (const rule of [
      { server: 'mcp-planning', tool: '*', effect: 'allow' },
      { server: 'mcp-planning', tool: 'plan_create', effect: 'approve', approvers: 'admins' },
      { server: 'notes', tool: 'add-note', effect: 'approve' },
    ]) {
      expect((await c.call(c.url, 'POST', '/api/v1/McpPermission', { json: rule })).status).toBe(201)
    }
  })
}

/** A test on the cluster; without PostgreSQL it is skipped, saying why. */
const clusterTest = (name: string, body: () => Promise<void>) => (TEST_DATABASE_URL ? test(name, body, 60_000) : test.skip(`${name} (${CLUSTER_NEEDS_POSTGRES})`, () => {}))

/** A turn run on process A, asking for a plan: its events once it ends, and the request it waits on. */
async function turnOnA(title: string) {
  const c = cluster()
  const [a] = c.processes
  const response = await fetch(`${a!.api}/api/chat`, {
    method: 'POST',
    headers: { authorization: `Bearer ${c.admin.token}`, 'content-type': 'application/json' },
    body: JSON.stringify({ agent_id: agent, text: `/tool mcp-planning__plan_create ${JSON.stringify({ title, tasks: [{ title: 'one' }] })}` }),
  })
  expect(response.status).toBe(200)
  const ended = response.text().then((text) => text.trim().split('\n').map((line) => JSON.parse(line) as { type: string; result?: string }))
  const approval = await until(
    async () => (await c.call(a!.api, 'GET', '/api/approvals?status=pending')).body.data.find((x) => x.arguments.title === title),
    { what: 'the turn on process A to ask' },
  )
  return { ended, approval }
}

clusterTest('a turn waiting on one process goes on with the answer given on the other', async () => {
  const c = cluster()
  const { ended, approval } = await turnOnA('Answered elsewhere')
  const answered = await c.call(c.processes[1]!.api, 'POST', `/api/approvals/${approval.id}/decision`, { json: { approve: true } })
  expect(answered.status).toBe(200)
  const events = await ended
  expect(events.find((e) => e.type === 'tool_result')!.result).toContain('Created the plan')
})

clusterTest('two answers at once on two processes: exactly one decision stands, and the turn goes by it', async () => {
  const c = cluster()
  const { ended, approval } = await turnOnA('Raced across processes')
  const answers = await Promise.all(
    c.processes.flatMap((process, i) => [0, 1].map(() => c.call(process.api, 'POST', `/api/approvals/${approval.id}/decision`, { json: { approve: i === 0 } }))),
  )
  expect(answers.map((a) => a.status).sort()).toEqual([200, 409, 409, 409])
  const winner = answers.find((a) => a.status === 200)!.body as { status: string }
  const events = await ended
  const result = events.find((e) => e.type === 'tool_result')!.result!
  if (winner.status === 'approved') expect(result).toContain('Created the plan')
  else expect(result).toStartWith('The person declined')
  const decisions = (await c.call(c.url, 'GET', `/api/v1/AuditEvent?record_id=eq.${approval.id}&action=eq.approval_decision`)).body.data
  expect(decisions).toHaveLength(1)
})


clusterTest('an MCP host asked through the proxy answers on the other process, and its yes reaches the call', async () => {
  const c = cluster()
  const client = new Client({ name: 'asking-host', version: '1.0.0' }, { capabilities: { elicitation: {} } })
  client.setRequestHandler(ElicitRequestSchema, async () => ({ action: 'accept', content: { approve: true } }))
  await client.connect(new StreamableHTTPClientTransport(new URL(`${c.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${c.admin.token}` } } }))
  try {
    const before = c.forwarded.length
    const result = await client.callTool({ name: 'notes__add-note', arguments: { text: 'asked across processes' } })
    expect(result.isError).toBeFalsy()
    // The call and the host's answer went to different processes (the proxy takes turns).
    const posts = c.forwarded.slice(before).filter((f) => f.method === 'POST')
    expect(new Set(posts.map((f) => f.backend)).size).toBe(2)
  } finally {
    await client.close()
  }
})
