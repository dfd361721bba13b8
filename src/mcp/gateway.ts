import type { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { Server } from '@modelcontextprotocol/sdk/server/index.js'
import { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js'
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js'
import type { Actor } from '../auth/actor.ts'
import { mayUseTool, type PermissionRule } from './permissions.ts'
import type { ServerDefinition, Upstreams } from './upstreams.ts'

interface Session {
  transport: WebStandardStreamableHTTPServerTransport
  userId: string
  serverId: string
}

/**
 * The MCP gateway's sessions: each MCP host session is a small MCP server of ours, speaking Streamable HTTP, that
 * answers tools/list with the upstream's tools the caller may use and forwards only those calls.
 */
export class Gateway {
  readonly #sessions = new Map<string, Session>()

  constructor(private readonly upstreams: Upstreams) {}

  /** The session a request names, if it is this user's on this server. */
  session(id: string, actor: Actor, server: ServerDefinition): Session | undefined {
    const session = this.#sessions.get(id)
    return session && session.userId === actor.userId && session.serverId === server.id ? session : undefined
  }

  /** A new session for an initialize request. */
  async open(actor: Actor, server: ServerDefinition, rules: () => Promise<PermissionRule[]>): Promise<WebStandardStreamableHTTPServerTransport> {
    const mcp = new Server({ name: `switchboard/${server.name}`, version: '0.1.0' }, { capabilities: { tools: {} } })
    const may = async (tool: string) => mayUseTool(await rules(), actor.userId, server.name, tool) === 'allow'

    /** Runs a request upstream; a failure drops the connection, since it may have died, so the next one reconnects. */
    const upstream = async <T>(run: (client: Client) => Promise<T>): Promise<T> => {
      try {
        return await run(await this.upstreams.client(actor.userId, server))
      } catch (error) {
        await this.upstreams.drop(actor.userId, server)
        throw error
      }
    }

    mcp.setRequestHandler(ListToolsRequestSchema, async (request) => {
      const listed = await upstream((client) => client.listTools(request.params))
      const allowed = []
      for (const tool of listed.tools) if (await may(tool.name)) allowed.push(tool)
      return { ...listed, tools: allowed }
    })

    mcp.setRequestHandler(CallToolRequestSchema, async (request) => {
      // A tool hidden from the list is refused by name too.
      if (!(await may(request.params.name))) {
        return { isError: true, content: [{ type: 'text' as const, text: `You may not use the tool ${request.params.name} on ${server.name}.` }] }
      }
      return upstream((client) => client.callTool(request.params))
    })

    const transport = new WebStandardStreamableHTTPServerTransport({
      sessionIdGenerator: () => crypto.randomUUID(),
      onsessioninitialized: (id) => {
        this.#sessions.set(id, { transport, userId: actor.userId, serverId: server.id })
      },
    })
    transport.onclose = () => {
      if (transport.sessionId) this.#sessions.delete(transport.sessionId)
    }
    await mcp.connect(transport)
    return transport
  }
}
