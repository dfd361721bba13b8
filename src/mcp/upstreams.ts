import { Client } from '@modelcontextprotocol/sdk/client/index.js'
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import type { Logger } from '../logger.ts'
import type { Vault } from '../vault/vault.ts'

/** An MCP server's stored definition (model McpServer). */
export interface ServerDefinition {
  id: string
  company_id: string
  name: string
  transport: 'stdio' | 'streamable-http'
  command: string | null
  args: string[]
  env: Record<string, { value: string } | { secret: string }>
  url: string | null
  headers: Record<string, { value: string } | { secret: string }>
}

/**
 * One upstream connection per (user, server): a subprocess of their own for a stdio server, an HTTP client for a
 * remote one. Connections are made on first use and reused; one that fails is dropped, so the next call starts a
 * fresh one.
 */
export class Upstreams {
  readonly #clients = new Map<string, Promise<Client>>()

  constructor(
    private readonly vault: Vault,
    private readonly log: Logger,
  ) {}

  client(userId: string, server: ServerDefinition): Promise<Client> {
    const key = `${userId}:${server.id}`
    let client = this.#clients.get(key)
    if (!client) {
      client = this.#connect(server).catch((error) => {
        this.#clients.delete(key)
        throw error
      })
      this.#clients.set(key, client)
    }
    return client
  }

  /** Forgets a connection that failed, closing it, so the next call reconnects. */
  async drop(userId: string, server: ServerDefinition): Promise<void> {
    const key = `${userId}:${server.id}`
    const client = this.#clients.get(key)
    this.#clients.delete(key)
    await client?.then((c) => c.close()).catch(() => {})
  }

  /** Ends every upstream: subprocesses are killed (at shutdown). */
  async closeAll(): Promise<void> {
    const clients = [...this.#clients.values()]
    this.#clients.clear()
    await Promise.all(clients.map((c) => c.then((client) => client.close()).catch(() => {})))
  }

  /** Values given in the definition, or read from the company's vault by name. */
  async #resolve(server: ServerDefinition, values: ServerDefinition['env']): Promise<Record<string, string>> {
    const resolved: Record<string, string> = {}
    for (const [key, source] of Object.entries(values)) {
      if ('value' in source) resolved[key] = source.value
      else {
        const secret = await this.vault.get({ scope: 'company', ownerId: server.company_id, name: source.secret })
        if (secret === undefined) throw new Error(`the vault has no company secret ${source.secret} for ${key}`)
        resolved[key] = secret
      }
    }
    return resolved
  }

  async #connect(server: ServerDefinition): Promise<Client> {
    const client = new Client({ name: 'switchboard-gateway', version: '0.1.0' })
    if (server.transport === 'stdio') {
      // Only the server's own environment (and PATH to find the program): never the platform's.
      const env = { PATH: process.env.PATH ?? '', ...(await this.#resolve(server, server.env)) }
      await client.connect(new StdioClientTransport({ command: server.command!, args: server.args, env, stderr: 'ignore' }))
    } else {
      const headers = await this.#resolve(server, server.headers)
      await client.connect(new StreamableHTTPClientTransport(new URL(server.url!), { requestInit: { headers } }))
    }
    this.log.info('mcp upstream connected', { server: server.name })
    return client
  }
}
