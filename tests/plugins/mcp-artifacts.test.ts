import { afterAll, beforeAll, expect, test } from 'bun:test'
import { chatTurn } from '../helpers/chat.ts'
import { connectMcp, startMcpPlatform, type McpTestPlatform } from '../helpers/mcp.ts'
import type { Principal } from '../helpers/platform.ts'

// The mcp-artifacts plugin as agents and MCP hosts use it: create_artifact from a chat turn on the echo runner, and
// the same tools through the MCP gateway, each answering a share link that opens the artifact.

let p: McpTestPlatform
let agentId: string

beforeAll(async () => {
  p = await startMcpPlatform({ rules: [{ server: 'mcp-artifacts', tool: '*', effect: 'allow' }] })
  const agent = await p.call('POST', '/api/v1/AgentConfigRecord', { json: { name: 'artist', runner: 'echo', plugins: { enabled: ['mcp-artifacts'] } } })
  expect(agent.status).toBe(201)
  agentId = agent.body.id
})
afterAll(() => p.close())

async function useTool(agent: string, command: string, as?: Principal) {
  const events = await chatTurn(p, { agent_id: agent, text: `/tool ${command}` }, { as })
  return { result: events.find((e) => e.type === 'tool_result')?.result as string | undefined, conversation: events[0]!.conversation_id as string, events }
}

/** The share page and the artifact's own document a link opens, for someone not signed in. */
async function openLink(url: string) {
  const path = url.slice(p.services.config.adminBaseUrl.length)
  const page = await p.admin.request(path)
  const content = await p.admin.request(path.replace('?token=', '/content?token='))
  return { page: page.status, content: content.status, text: await content.text() }
}

const linkIn = (text: string) => /(https?:\/\/\S+\/share\/artifacts\/\S+)/.exec(text)?.[1]

test('an agent’s turn makes an artifact with create_artifact and answers a link that opens it', async () => {
  const args = { title: 'Shopping list', kind: 'markdown', content: '# Groceries\n\n- apples\n- bread' }
  const { result, conversation, events } = await useTool(agentId, `mcp-artifacts__create_artifact ${JSON.stringify(args)}`)
  expect(events.find((e) => e.type === 'tool_call')).toEqual({ type: 'tool_call', tool: 'mcp-artifacts__create_artifact' })
  expect(result).toStartWith('Created the artifact "Shopping list" (text/markdown). Share link, working until ')
  const url = linkIn(result!)!
  expect(url).toStartWith(`${p.services.config.adminBaseUrl}/share/artifacts/`)
  const opened = await openLink(url)
  expect([opened.page, opened.content]).toEqual([200, 200])
  expect(opened.text).toContain('<h1>Groceries</h1>')
  expect(opened.text).toContain('<li>apples</li>')

  // It is the caller's, and remembers where it was made.
  const listed = (await p.call('GET', '/api/v1/Artifact?title=eq.Shopping list')).body.data
  expect(listed).toHaveLength(1)
  expect(listed[0]).toMatchObject({ user_id: p.root.userId, conversation_id: conversation, agent_id: agentId, media_type: 'text/markdown', pinned: false })
  expect(events.at(-1)).toMatchObject({ type: 'message' })
  expect(events.at(-1)!.text).toContain(url)
})

test('bad arguments come back to the model as the tool’s error, and nothing is made', async () => {
  const before = (await p.call('GET', '/api/v1/Artifact?count=exact&limit=1')).body.count
  expect((await useTool(agentId, 'mcp-artifacts__create_artifact {"title":"x","kind":"pdf","content":"x"}')).result).toBe('Error: The input is not valid: kind: must be one of: "text", "markdown", "html", "json", "csv", "image".')
  expect((await useTool(agentId, 'mcp-artifacts__create_artifact {"kind":"text","content":"x"}')).result).toStartWith('Error: The input is not valid: title: ')
  expect((await useTool(agentId, 'mcp-artifacts__create_artifact {"title":"x","kind":"text","content":"x","ttl_days":0}')).result).toStartWith('Error: The input is not valid: ttl_days: ')
  expect((await useTool(agentId, 'mcp-artifacts__create_artifact {"title":"x","kind":"text","content":"x","public":true}')).result).toStartWith('Error: The input is not valid: ')
  expect((await useTool(agentId, 'mcp-artifacts__create_artifact {"title":"x","kind":"json","content":"{"}')).result).toStartWith('Error: The content is not valid: it is not JSON')
  const svg = Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"/>').toString('base64')
  expect((await useTool(agentId, `mcp-artifacts__create_artifact {"title":"x","kind":"image","content":"${svg}"}`)).result).toContain('For SVG, make an html artifact')
  expect((await p.call('GET', '/api/v1/Artifact?count=exact&limit=1')).body.count).toBe(before)
})

test('the tool is offered only to agents with the plugin enabled, and only where a rule allows it', async () => {
  const plain = await p.call('POST', '/api/v1/AgentConfigRecord', { json: { name: 'plain', runner: 'echo' } })
  expect((await useTool(plain.body.id, 'mcp-artifacts__create_artifact {"title":"x","kind":"text","content":"x"}')).result).toBe(
    'Error: There is no tool named mcp-artifacts__create_artifact for this agent.',
  )
  const barred = await p.createUser()
  expect((await p.call('POST', '/api/v1/McpPermission', { json: { user_id: barred.userId, server: 'mcp-artifacts', tool: 'create_artifact', effect: 'deny' } })).status).toBe(201)
  expect((await useTool(agentId, 'mcp-artifacts__create_artifact {"title":"x","kind":"text","content":"x"}', barred)).result).toBe(
    'Error: There is no tool named mcp-artifacts__create_artifact for this agent.',
  )
  // In a company with no rule at all, nothing is allowed.
  const elsewhere = await p.createUser({ companyId: await p.createCompany(), role: 'owner' })
  const theirAgent = await p.call('POST', '/api/v1/AgentConfigRecord', { as: elsewhere, json: { name: 'artist', runner: 'echo', plugins: { enabled: ['mcp-artifacts'] } } })
  expect((await useTool(theirAgent.body.id, 'mcp-artifacts__create_artifact {"title":"x","kind":"text","content":"x"}', elsewhere)).result).toBe(
    'Error: There is no tool named mcp-artifacts__create_artifact for this agent.',
  )
})

test('through the MCP gateway: create, list and share, each for the signed-in person only', async () => {
  const client = await connectMcp(p.base, p.root, 'mcp-artifacts')
  try {
    const names = (await client.listTools()).tools.map((t) => t.name).sort()
    expect(names).toEqual(['create_artifact', 'list_artifacts', 'share_artifact'])
    const created = await client.callTool({ name: 'create_artifact', arguments: { title: 'Data', kind: 'json', content: '{"a":[1,2]}', ttl_days: 3 } })
    expect(created.isError).toBeFalsy()
    const made = created.structuredContent as { id: string; url: string; expires_at: string; media_type: string }
    expect(made.media_type).toBe('application/json')
    expect(Math.abs(Date.parse(made.expires_at) - (Date.now() + 3 * 24 * 3600 * 1000))).toBeLessThan(10_000)
    const opened = await openLink(made.url)
    expect(opened.text).toContain('&quot;a&quot;: [\n    1,\n    2\n  ]')
    const record = (await p.call('GET', `/api/v1/Artifact/${made.id}`)).body
    expect(record).toMatchObject({ conversation_id: null, agent_id: null, ttl_days: 3 })

    const listed = await client.callTool({ name: 'list_artifacts', arguments: {} })
    expect((listed.content as Array<{ text: string }>)[0]!.text).toContain(`${made.id} "Data" (application/json, expires `)
    const shared = await client.callTool({ name: 'share_artifact', arguments: { id: made.id, expires_in_days: 1 } })
    expect((await openLink((shared.structuredContent as { url: string }).url)).content).toBe(200)

    // Someone else's artifact is not theirs to share.
    const other = await p.createUser()
    const theirs = await connectMcp(p.base, other, 'mcp-artifacts')
    try {
      const refused = await theirs.callTool({ name: 'share_artifact', arguments: { id: made.id } })
      expect(refused.isError).toBe(true)
      expect((refused.content as Array<{ text: string }>)[0]!.text).toBe(`No Artifact with id ${made.id}.`)
      expect(((await theirs.callTool({ name: 'list_artifacts', arguments: {} })).content as Array<{ text: string }>)[0]!.text).toBe('The user has no artifacts.')
    } finally {
      await theirs.close()
    }
  } finally {
    await client.close()
  }
})
