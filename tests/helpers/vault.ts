import type { Reply, TestPlatform } from './platform.ts'

/** A call to the vault socket, as an MCP subprocess makes it: POST `path` with its vault token, over the unix socket. */
export async function overVaultSocket(p: Pick<TestPlatform, 'services'>, path: string, token: string | null, json: unknown): Promise<Reply> {
  const response = await fetch(`http://vault${path}`, {
    unix: p.services.vaultSocket.path,
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
    body: JSON.stringify(json),
  } as RequestInit)
  const text = await response.text()
  return { status: response.status, headers: response.headers, body: text ? JSON.parse(text) : undefined }
}
