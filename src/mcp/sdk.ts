import type { Client } from '@modelcontextprotocol/sdk/client/index.js'
import type { auth, UnauthorizedError } from '@modelcontextprotocol/sdk/client/auth.js'
import type { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js'
import type { StreamableHTTPClientTransport, StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js'
import type { Server } from '@modelcontextprotocol/sdk/server/index.js'
import type { WebStandardStreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js'
import type { AjvJsonSchemaValidator } from '@modelcontextprotocol/sdk/validation/ajv'

// Both sides of the MCP SDK load on first use, once per process: together 65-78 ms of every start otherwise (their
// JSON Schema compiler among them), for a deployment that may reach no upstream, and whose hosts' tool calls the
// gateway mostly answers without the SDK's server.

/** The MCP SDK's client side: what the gateway reaches its upstreams with, and signs people in to them with. */
export interface ClientSdk {
  Client: typeof Client
  StdioClientTransport: typeof StdioClientTransport
  StreamableHTTPClientTransport: typeof StreamableHTTPClientTransport
  StreamableHTTPError: typeof StreamableHTTPError
  UnauthorizedError: typeof UnauthorizedError
  auth: typeof auth
}

/** The MCP SDK's server side, which the gateway answers what it does not answer itself with. */
export interface ServerSdk {
  Server: typeof Server
  WebStandardStreamableHTTPServerTransport: typeof WebStandardStreamableHTTPServerTransport
  AjvJsonSchemaValidator: typeof AjvJsonSchemaValidator
}

let client: Promise<ClientSdk> | undefined
let clientLoaded: ClientSdk | undefined
let server: Promise<ServerSdk> | undefined

/** Loaded when an upstream is first reached or signed in to. */
export const clientSdk = () =>
  (client ??= Promise.all([
    import('@modelcontextprotocol/sdk/client/index.js'),
    import('@modelcontextprotocol/sdk/client/stdio.js'),
    import('@modelcontextprotocol/sdk/client/streamableHttp.js'),
    import('@modelcontextprotocol/sdk/client/auth.js'),
  ]).then(
    ([index, stdio, http, signIn]) =>
      (clientLoaded = {
        Client: index.Client,
        StdioClientTransport: stdio.StdioClientTransport,
        StreamableHTTPClientTransport: http.StreamableHTTPClientTransport,
        StreamableHTTPError: http.StreamableHTTPError,
        UnauthorizedError: signIn.UnauthorizedError,
        auth: signIn.auth,
      }),
  ))

/** The client side once loaded, for telling its errors apart: none of them can exist before. */
export const loadedClientSdk = (): ClientSdk | undefined => clientLoaded

/** Loaded when the gateway first needs the SDK's server (a session's initialize, a listing). */
export const serverSdk = () =>
  (server ??= Promise.all([
    import('@modelcontextprotocol/sdk/server/index.js'),
    import('@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js'),
    import('@modelcontextprotocol/sdk/validation/ajv'),
  ]).then(([index, http, ajv]) => ({ Server: index.Server, WebStandardStreamableHTTPServerTransport: http.WebStandardStreamableHTTPServerTransport, AjvJsonSchemaValidator: ajv.AjvJsonSchemaValidator })))
