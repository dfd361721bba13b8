/**
 * Redirect URIs a client may register and how a request's is matched: exactly (OAuth 2.1), except that a loopback
 * redirect of a native app may use any port (RFC 8252 §7.3), since it listens on whichever port was free.
 */

const LOOPBACK_HOSTS = new Set(['127.0.0.1', '[::1]', 'localhost'])
/** Schemes a browser must never be sent to as a redirect, and ones a native app has no business claiming. */
const REFUSED_SCHEMES = new Set(['javascript:', 'data:', 'file:', 'vbscript:', 'blob:', 'about:', 'ws:', 'wss:', 'ftp:', 'filesystem:'])
const MAX_LENGTH = 2000

/** Why `uri` cannot be registered as a redirect URI, or undefined when it can. */
export function redirectUriProblem(uri: string): string | undefined {
  if (uri.length > MAX_LENGTH) return `is longer than ${MAX_LENGTH} characters`
  const url = URL.canParse(uri) ? new URL(uri) : undefined
  if (!url) return 'is not an absolute URI'
  if (url.hash || uri.includes('#')) return 'has a fragment, which a redirect URI may not have (RFC 6749 §3.1.2)'
  if (url.protocol === 'https:') return undefined
  if (url.protocol === 'http:') return isLoopback(url) ? undefined : 'uses http: on a host other than loopback; use https:'
  if (REFUSED_SCHEMES.has(url.protocol)) return `uses the ${url.protocol} scheme, which is not allowed`
  // A native app's private-use scheme (RFC 8252 §7.1), e.g. cursor:// or vscode://.
  return /^[a-z][a-z0-9+.-]*:$/.test(url.protocol) ? undefined : 'has a scheme that is not allowed'
}

/** Whether the requested redirect URI is one of the registered ones. */
export function redirectUriMatches(registered: readonly string[], requested: string): boolean {
  if (registered.includes(requested)) return true
  const asked = URL.canParse(requested) ? new URL(requested) : undefined
  if (!asked || asked.protocol !== 'http:' || !isLoopback(asked)) return false
  // Only the port may differ: a fragment (never allowed in a redirect URI) or a user part would ride along.
  if (requested.includes('#') || asked.username || asked.password) return false
  return registered.some((uri) => {
    const known = new URL(uri)
    return known.protocol === 'http:' && known.hostname === asked.hostname && isLoopback(known) && known.pathname === asked.pathname && known.search === asked.search
  })
}

function isLoopback(url: URL): boolean {
  return LOOPBACK_HOSTS.has(url.hostname)
}
