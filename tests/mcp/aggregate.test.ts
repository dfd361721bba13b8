import { afterAll, beforeAll, expect, test } from 'bun:test'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import { ElicitRequestSchema } from '@modelcontextprotocol/sdk/types.js'
import { EVERYTHING_STDIO, NOTES_PLUGIN, startMcpPlatform, type McpTestPlatform } from '../helpers/mcp.ts'
import type { Principal } from '../helpers/platform.ts'
import { expectProblem } from '../helpers/problem.ts'

// /mcp: every server a user may use as one MCP server, each item judged by its own server's rules.
let p: McpTestPlatform

beforeAll(async () => {
  p = await startMcpPlatform({
    env: NOTES_PLUGIN,
    servers: [EVERYTHING_STDIO],
    rules: [
      { server: 'everything', tool: '*', effect: 'allow' },
      { server: 'everything', tool: 'get-sum', effect: 'deny' },
      { server: 'everything', tool: 'prompt:simple-prompt', effect: 'deny' },
      { server: 'notes', tool: 'whoami', effect: 'allow' },
      { server: 'notes', tool: 'add-note', effect: 'approve' },
    ],
  })
})
afterAll(() => p.close())

async function connect(as: Principal) {
  const client = new Client({ name: 'test-host', version: '1.0.0' })
  await client.connect(new StreamableHTTPClientTransport(new URL(`${p.base}/mcp`), { requestInit: { headers: { authorization: `Bearer ${as.token}` } } }))
  return client
}

test('a tool that needs a person’s yes is listed saying so, and a call of it is refused naming the rule', async () => {
  const client = await connect(p.root)
  try {
    const listed = (await client.listTools()).tools.find((t) => t.name === 'notes__add-note')
    expect(listed?.description).toStartWith('[Each call needs a person’s approval: a host that can be asked (elicitation) is asked, any other is refused.]')
    const refused = await client.callTool({ name: 'notes__add-note', arguments: { text: 'x' } })
    expect(refused.isError).toBe(true)
    expect((refused.content as Array<{ text: string }>)[0]!.text).toMatch(/^The tool notes__add-note needs a person’s approval before each call \(the permission rule [0-9a-f-]{36}\), and this MCP connection cannot ask for it\./)
  } finally {
    await client.close()
  }
})

test('a host that can be asked (elicitation) is asked; its yes runs the tool, its no declines it, both recorded once', async () => {
  const answers: Array<{ action: 'accept' | 'decline'; content?: { approve: boolean } }> = [{ action: 'accept', content: { approve: true } }, { action: 'decline' }, { action: 'accept', content: { approve: false } }]
  const questions: string[] = []
  const client = new Client({ name: 'asking-host', version: '1.0.0' }, { capabilities: { elicitation: {} } })
  client.setRequestHandler(ElicitRequestSchema, async (request) => {
    questions.push(request.params.message)
    return answers.shift()!
  })
  const transport = new StreamableHTTPClientTransport(new URL(`${p.base}/mcp`), { requestInit: { headers: { authorization: `Bearer ${p.root.token}` } } })
  await client.connect(transport)
  try {
    // Answers nobody asked for, too large for any question: refused, not carried to the other processes.
    const published: unknown[] = []
    const stop = p.services.events.subscribe('mcp.answer', (event) => void published.push(event))
    const flood = await fetch(`${p.base}/mcp`, {
      method: 'POST',
      headers: { authorization: `Bearer ${p.root.token}`, 'mcp-session-id': transport.sessionId!, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify([{ jsonrpc: '2.0', id: 7, result: { action: 'accept', content: { approve: true }, padding: 'x'.repeat(20_000) } }]),
    })
    expect(flood.status).toBe(413)
    stop()
    expect(published).toEqual([])
    const yes = await client.callTool({ name: 'notes__add-note', arguments: { text: 'asked first', password: 'hunter2' } })
    expect(yes.isError).toBeFalsy()
    expect(questions[0]).toStartWith('Allow add-note on notes to run with these arguments?')
    expect(questions[0]).toContain('"password": "•••• (hidden)"')
    for (const expected of ['it was declined', 'it was declined']) {
      const no = await client.callTool({ name: 'notes__add-note', arguments: { text: 'not this one' } })
      expect(no.isError).toBe(true)
      expect((no.content as Array<{ text: string }>)[0]!.text).toBe(`The call of add-note on notes was not made: ${expected}.`)
    }
    const rows = await p.store.db.selectFrom('tool_approvals').select(['status', 'decided_by', 'conversation_id']).where('tool', '=', 'add-note').orderBy('created_at').execute()
    expect(rows).toEqual([
      { status: 'approved', decided_by: p.root.userId, conversation_id: null },
      { status: 'denied', decided_by: p.root.userId, conversation_id: null },
      { status: 'denied', decided_by: p.root.userId, conversation_id: null },
    ])
  } finally {
    await client.close()
  }
})

test('tools and prompts of every server the user may use, namespaced; each refused like on its own server', async () => {
  const client = await connect(p.root)
  try {
    const tools = (await client.listTools()).tools.map((t) => t.name)
    expect(tools).toContain('everything__echo')
    expect(tools).toContain('notes__whoami')
    expect(tools).not.toContain('everything__get-sum')
    expect(await client.callTool({ name: 'everything__echo', arguments: { message: 'all at once' } })).toMatchObject({ content: [{ text: 'Echo: all at once' }] })
    expect(await client.callTool({ name: 'notes__whoami', arguments: {} })).toMatchObject({ content: [{ text: `user ${p.root.userId} of ${p.root.companyId}` }] })
    for (const name of ['everything__get-sum', 'nowhere__echo', 'echo']) {
      expect(await client.callTool({ name, arguments: { a: 1, b: 2, text: 'x' } })).toMatchObject({ isError: true, content: [{ text: `You may not use the tool ${name}.` }] })
    }

    const prompts = (await client.listPrompts()).prompts.map((x) => x.name)
    expect(prompts).toContain('everything__args-prompt')
    expect(prompts).not.toContain('everything__simple-prompt')
    await expect(client.getPrompt({ name: 'everything__simple-prompt' })).rejects.toThrow('You may not use the prompt everything__simple-prompt.')

    const [resource] = (await client.listResources()).resources
    expect((await client.readResource({ uri: resource!.uri })).contents[0]!.uri).toBe(resource!.uri)
  } finally {
    await client.close()
  }
})

test('a user whose rules allow nothing sees nothing; no credentials is a 401', async () => {
  const nobody = await p.createUser()
  await p.call('POST', '/api/v1/McpPermission', { json: { user_id: nobody.userId, server: '*', tool: '*', effect: 'deny' } })
  const client = await connect(nobody)
  try {
    expect((await client.listTools()).tools).toEqual([])
    expect((await client.listPrompts()).prompts).toEqual([])
  } finally {
    await client.close()
  }
  expectProblem(await p.call('POST', '/mcp', { as: null, json: {} }), 401, 'unauthorized')
})
