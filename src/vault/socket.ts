import { chmodSync, mkdtempSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

/** Where a sandboxed MCP subprocess finds the vault socket (bound there by the sandbox). */
export const VAULT_SOCKET_INSIDE = '/run/switchboard/vault.sock'
/** The only requests the socket takes: the vault's two routes, as the api app declares them. */
const VAULT_ROUTES = new Set(['/api/vault/get', '/api/vault/list'])

/** What the api app's handlers see of a request that came over the vault socket. */
export interface VaultSocketEnv {
  vaultSocket: true
}

export function cameOverVaultSocket(env: unknown): boolean {
  return (env as Partial<VaultSocketEnv> | undefined)?.vaultSocket === true
}

export interface VaultSocket {
  /** The socket's path on the host; sandboxes see it at VAULT_SOCKET_INSIDE. */
  readonly path: string
  close(): void
}

/**
 * The channel MCP subprocesses read their secrets on: a unix socket in a folder only the platform's user may open,
 * bound into each stdio server's sandbox. A vault token works only here, so a token a tool leaks (server-everything
 * prints its environment) is worth nothing on the public port. The socket answers the two vault routes and nothing
 * else of the API.
 */
export function serveVaultSocket(api: () => { fetch(request: Request, env: VaultSocketEnv): Response | Promise<Response> }): VaultSocket {
  const folder = mkdtempSync(join(tmpdir(), 'switchboard-vault-'))
  const path = join(folder, 'vault.sock')
  const server = Bun.serve({
    unix: path,
    fetch(request) {
      if (request.method === 'POST' && VAULT_ROUTES.has(new URL(request.url).pathname)) return api().fetch(request, { vaultSocket: true })
      return new Response(JSON.stringify({ type: 'urn:switchboard:problem:not_found', title: 'Not Found', status: 404, code: 'not_found', detail: 'The vault socket serves POST /api/vault/get and /api/vault/list only.' }), {
        status: 404,
        headers: { 'content-type': 'application/problem+json' },
      })
    },
  })
  chmodSync(path, 0o600)
  return {
    path,
    close() {
      server.stop(true)
      rmSync(folder, { recursive: true, force: true })
    },
  }
}
