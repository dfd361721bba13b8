import { afterAll, beforeAll, expect, test } from 'bun:test'
import { clockReading } from '../../src/chat/tools.ts'
import { chatTurn, type ChatEvent } from '../helpers/chat.ts'
import { connectMcp, EVERYTHING_STDIO, NOTES_PLUGIN, startMcpPlatform, type McpTestPlatform } from '../helpers/mcp.ts'
import type { Principal } from '../helpers/platform.ts'

// Agents' tools end to end: a turn through /api/chat on the echo runner asks for a tool, and the call goes through
// the same catalogue and permission rules as the gateway, to server-everything over stdio or to a plugin's tools.
let p: McpTestPlatform

beforeAll(async () => {
  p = await startMcpPlatform({
    env: NOTES_PLUGIN,
    servers: [EVERYTHING_STDIO],
    rules: [
      { server: '*', tool: '*', effect: 'allow' },
      { server: 'everything', tool: 'get-sum', effect: 'deny' },
    ],
  })
})
afterAll(() => p.close())

async function agent(settings: Record<string, unknown>): Promise<string> {
  const created = await p.call('POST', '/api/v1/AgentConfigRecord', { json: { name: `agent-${crypto.randomUUID().slice(0, 8)}`, runner: 'echo', ...settings } })
  expect(created.status).toBe(201)
  return created.body.id
}

/** What the turn's tool call answered, and the turn's last event. */
async function useTool(agentId: string, command: string, as?: Principal): Promise<{ result: string | undefined; events: ChatEvent[] }> {
  const events = await chatTurn(p, { agent_id: agentId, text: `/tool ${command}` }, { as })
  return { result: events.find((e) => e.type === 'tool_result')?.result, events }
}

test('an agent turn calls server-everything’s echo through the gateway and streams the tool call and its result', async () => {
  const id = await agent({})
  const { events } = await useTool(id, 'everything__echo {"message":"from the agent"}')
  const types = events.map((e) => e.type)
  expect(types.indexOf('tool_call')).toBeLessThan(types.indexOf('tool_result'))
  expect(events.find((e) => e.type === 'tool_call')).toEqual({ type: 'tool_call', tool: 'everything__echo' })
  expect(events.find((e) => e.type === 'tool_result')).toEqual({ type: 'tool_result', tool: 'everything__echo', result: 'Echo: from the agent' })
  expect(events.at(-1)).toMatchObject({ type: 'message', text: 'The tool answered: Echo: from the agent' })
  // The user's rules hold for agents too.
  expect((await useTool(id, 'everything__get-sum {"a":1,"b":2}')).result).toBe('Error: There is no tool named everything__get-sum for this agent.')
})

test('a plugin’s built-in tools need the plugin in plugins.enabled, and pass the agent’s own allow and deny lists', async () => {
  const without = await agent({})
  expect((await useTool(without, 'notes__whoami')).result).toBe('Error: There is no tool named notes__whoami for this agent.')

  const withNotes = await agent({ plugins: { enabled: ['notes'] }, mcp_permissions: { servers: { notes: { deny: ['add-note'] } } } })
  expect((await useTool(withNotes, 'notes__whoami')).result).toBe(`user ${p.root.userId} of ${p.root.companyId}`)
  expect((await useTool(withNotes, 'notes__add-note {"text":"x"}')).result).toBe('Error: There is no tool named notes__add-note for this agent.')
  // Naming servers in mcp_permissions limits the agent to them.
  expect((await useTool(withNotes, 'everything__echo {"message":"x"}')).result).toBe('Error: There is no tool named everything__echo for this agent.')

  const allowList = await agent({ plugins: { enabled: ['notes'] }, mcp_permissions: { servers: { notes: { allow: ['add-note'] } } } })
  expect((await useTool(allowList, 'notes__add-note {"text":"kept"}')).result).toStartWith('noted (')
  expect((await useTool(allowList, 'notes__whoami')).result).toBe('Error: There is no tool named notes__whoami for this agent.')
})

test('a plugin’s tools are filtered by the user’s MCP permissions like any server', async () => {
  const id = await agent({ plugins: { enabled: ['notes'] } })
  const barred = await p.createUser()
  expect((await p.call('POST', '/api/v1/McpPermission', { json: { user_id: barred.userId, server: 'notes', tool: '*', effect: 'deny' } })).status).toBe(201)
  expect((await useTool(id, 'notes__whoami', barred)).result).toBe('Error: There is no tool named notes__whoami for this agent.')
  expect((await useTool(id, 'notes__whoami')).result).toBe(`user ${p.root.userId} of ${p.root.companyId}`)
})

test('with context_options.service_account the agent calls tools as that account, with its permissions', async () => {
  const service = await p.createUser()
  const id = await agent({ plugins: { enabled: ['notes'] }, context_options: { service_account: service.userId } })
  // Someone with no tools of their own still gets the agent's, as the service account.
  const nobody = await p.createUser()
  await p.call('POST', '/api/v1/McpPermission', { json: { user_id: nobody.userId, server: '*', tool: '*', effect: 'deny' } })
  expect((await useTool(id, 'notes__whoami', nobody)).result).toBe(`user ${service.userId} of ${p.root.companyId}`)
  expect((await useTool(id, 'everything__echo {"message":"as the service"}', nobody)).result).toBe('Echo: as the service')

  // And the service account's own limits apply.
  await p.call('POST', '/api/v1/McpPermission', { json: { user_id: service.userId, server: 'everything', tool: 'echo', effect: 'deny' } })
  expect((await useTool(id, 'everything__echo {"message":"x"}')).result).toBe('Error: There is no tool named everything__echo for this agent.')
})

test('a service account outside the agent’s company stops the turn with a clear error', async () => {
  const elsewhere = await p.createUser({ companyId: await p.createCompany() })
  const id = await agent({ context_options: { service_account: elsewhere.userId } })
  const { events } = await useTool(id, 'notes__whoami')
  expect(events.at(-1)).toMatchObject({
    type: 'error',
    error_type: 'tool_setup',
    text: `The agent’s service account ${elsewhere.userId} is not a member of its company, so the agent cannot use tools.`,
  })
})

test('a plugin’s tools are served at /mcp/<plugin> to MCP hosts, behind the same rules', async () => {
  const client = await connectMcp(p.base, p.root, 'notes')
  try {
    expect((await client.listTools()).tools.map((t) => t.name).sort()).toEqual(['add-note', 'whoami'])
    expect(await client.callTool({ name: 'whoami', arguments: {} })).toMatchObject({ content: [{ type: 'text', text: `user ${p.root.userId} of ${p.root.companyId}` }] })
    expect(await client.callTool({ name: 'add-note', arguments: {} })).toMatchObject({ isError: true, content: [{ text: 'text must be a string' }] })
  } finally {
    await client.close()
  }
  const limited = await p.createUser()
  await p.call('POST', '/api/v1/McpPermission', { json: { user_id: limited.userId, server: 'notes', tool: 'whoami', effect: 'allow' } })
  const theirs = await connectMcp(p.base, limited, 'notes')
  try {
    expect((await theirs.listTools()).tools.map((t) => t.name)).toEqual(['whoami'])
    expect(await theirs.callTool({ name: 'add-note', arguments: { text: 'x' } })).toMatchObject({ isError: true, content: [{ text: 'You may not use the tool add-note on notes.' }] })
  } finally {
    await theirs.close()
  }
})

test('current_time reads YYYY-MM-DD HH:MM:SS with the zone, around midnight too; an unknown zone is an error', () => {
  expect(clockReading(new Date('2026-11-22T00:00:25Z'), 'UTC')).toBe('2026-11-22 00:00:25 UTC')
  expect(clockReading(new Date('2026-11-21T23:30:00Z'), 'Europe/Paris')).toBe('2026-11-22 00:30:00 GMT+1')
  expect(() => clockReading(new Date(), 'Mars/Base')).toThrow()
})
