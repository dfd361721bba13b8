/**
 * Resource indicators (RFC 8707): the protected resources the platform issues tokens for, named by their URLs. Each
 * MCP gateway path is a resource of its own (`{base}/mcp`, `{base}/mcp/{server}`), so a token a host got for one
 * server is refused by every other; the base URL itself names the whole API (scope `api`, and `mcp` for every
 * gateway path).
 */

export const SCOPES = ['mcp', 'api'] as const
export type Scope = (typeof SCOPES)[number]

/** What a resource indicator or a request path names: the REST API, or a gateway path (`''` is the aggregate /mcp). */
export type Target = { kind: 'api' } | { kind: 'mcp'; server: string }

const SERVER_SEGMENT = /^[^/?#]{1,200}$/

/** The gateway path a request is for, or the API. */
export function targetOfPath(path: string): Target {
  if (path === '/mcp' || path === '/mcp/') return { kind: 'mcp', server: '' }
  const match = /^\/mcp\/([^/]+)\/?$/.exec(path)
  return match ? { kind: 'mcp', server: decodeURIComponent(match[1]!) } : { kind: 'api' }
}

/** The URL naming a target as a resource. */
export function resourceUrl(base: string, target: Target): string {
  if (target.kind === 'api') return base
  return target.server === '' ? `${base}/mcp` : `${base}/mcp/${encodeURIComponent(target.server)}`
}

/** The target a resource indicator names, or undefined when it is none of this platform's. A trailing slash is allowed. */
export function parseResource(base: string, resource: string): Target | undefined {
  const given = resource.replace(/\/$/, '')
  if (given === base) return { kind: 'api' }
  if (!given.startsWith(`${base}/`)) return undefined
  const target = targetOfPath(given.slice(base.length))
  if (target.kind === 'api') return undefined
  return target.server === '' || SERVER_SEGMENT.test(target.server) ? target : undefined
}

/** The scopes a resource may be granted: a gateway path `mcp`; the whole API `api` and `mcp`. */
export function scopesOf(target: Target): Scope[] {
  return target.kind === 'api' ? ['api', 'mcp'] : ['mcp']
}

/** Where a resource's protected resource metadata is (RFC 9728 §3.1: the well-known name before the path). */
export function metadataUrl(base: string, target: Target): string {
  const url = new URL(resourceUrl(base, target))
  return `${url.origin}/.well-known/oauth-protected-resource${url.pathname === '/' ? '' : url.pathname}`
}

/**
 * Whether a token granted for `resource` with `scopes` may serve a request to `path`: `invalid_token` when it was
 * issued for another resource (RFC 6750 §3.1), `insufficient_scope` when its scopes do not cover the path.
 */
export function judgeAudience(base: string, grant: { resource: string; scopes: readonly string[] }, path: string): 'ok' | 'invalid_token' | 'insufficient_scope' {
  const asked = targetOfPath(path)
  const granted = parseResource(base, grant.resource)
  if (!granted) return 'invalid_token'
  if (granted.kind === 'mcp' && (asked.kind !== 'mcp' || asked.server !== granted.server)) return 'invalid_token'
  return grant.scopes.includes(asked.kind) ? 'ok' : 'insufficient_scope'
}
