/**
 * The floor of an MCP gateway, for bench/mcp.ts: the least any gateway built on the MCP SDK's client adds over
 * direct stdio on this machine. Streamable HTTP with JSON answers in front of one server-everything, reached
 * through the SDK's stdio client as the gateway reaches its upstreams; nothing else: no sign-in, no session kept, no
 * permission, throttle or breaker, no check of what a host sends. Answers an initialize itself and passes each
 * tools/call on. Prints one JSON line (port), then serves until SIGTERM, which stops the upstream.
 */
import { join } from 'node:path'
import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'

const EVERYTHING = join(import.meta.dir, '..', 'node_modules', '.bin', 'mcp-server-everything')

const upstream = new Client({ name: 'bench-floor', version: '1.0.0' })
await upstream.connect(new StdioClientTransport({ command: EVERYTHING, stderr: 'ignore' }))

interface Message {
  id?: string | number
  method?: string
  params?: { protocolVersion?: string; name?: string; arguments?: Record<string, unknown> }
}

const answer = (id: Message['id'], result: unknown, headers?: Record<string, string>) => Response.json({ jsonrpc: '2.0', id, result }, { headers })

const server = Bun.serve({
  hostname: '127.0.0.1',
  port: 0,
  // As src/main.ts: Bun's longest idle timeout, so the clients' connections are not cut mid-run.
  idleTimeout: 255,
  async fetch(request) {
    // No standalone event stream (the client does without), as the gateway.
    if (request.method !== 'POST') return new Response(null, { status: 405, headers: { allow: 'POST' } })
    const message = (await request.json()) as Message
    // A notification (initialized) has nothing to answer.
    if (message.id === undefined) return new Response(null, { status: 202 })
    if (message.method === 'initialize') {
      const result = { protocolVersion: message.params?.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 'bench-floor', version: '1.0.0' } }
      return answer(message.id, result, { 'mcp-session-id': crypto.randomUUID() })
    }
    if (message.method === 'tools/call') return answer(message.id, await upstream.callTool({ name: message.params!.name!, arguments: message.params!.arguments }))
    return answer(message.id, {})
  },
})

process.once('SIGTERM', async () => {
  server.stop(true)
  await upstream.close()
  process.exit(0)
})
console.log(JSON.stringify({ port: server.port }))
