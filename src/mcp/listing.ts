import { ErrorCode, McpError, type Tool } from '@modelcontextprotocol/sdk/types.js'
import { OutboundRefused } from '../net/outbound.ts'
import { BreakerOpen, type BreakerState } from './breaker.ts'
import type { Provider, ToolUser } from './providers.ts'
import { UpstreamSetupError, type Upstreams } from './upstreams.ts'
import { loadedClientSdk } from './sdk.ts'

/** A server's tool list as the catalogue shows it, or why there is none. */
export type ToolListing = { ok: true; tools: Tool[] } | { ok: false; error: string }

/** How long one server's listing may take, every page and the connection included. */
export const LISTING_TIMEOUT_MS = 10_000
/** A cursor that never ends must not hold the listing: after this many pages, what was listed stands. */
const MAX_PAGES = 20

class ListingTimeout extends Error {}

/**
 * Every tool `provider` lists for `user`, within `timeoutMs` in all. A failure is answered, not thrown: a server
 * that cannot be reached has no tools and a short reason in the platform's words.
 *
 * The upstream connection is made on the first request and the MCP SDK does not bound that part by the request's
 * timeout, so the whole listing races a timer. What is under way then is not cancelled: it ends by its own timeouts,
 * and how it ends is the breaker's to learn, as for any call (a cancelled call would teach it nothing about an
 * upstream that never answers).
 */
export async function listTools(provider: Provider, user: ToolUser, timeoutMs = LISTING_TIMEOUT_MS): Promise<ToolListing> {
  let timer: ReturnType<typeof setTimeout> | undefined
  let gaveUp = false
  const deadline = new Promise<never>((_, reject) => {
    timer = setTimeout(() => {
      gaveUp = true
      reject(new ListingTimeout())
    }, timeoutMs)
  })
  const pages = async () => {
    const tools: Tool[] = []
    let cursor: string | undefined
    // No page is asked for once the listing has been given up on.
    for (let page = 0; page < MAX_PAGES && !gaveUp; page++) {
      const listed = await provider.listTools(user, cursor, { timeoutMs })
      tools.push(...listed.tools)
      cursor = listed.nextCursor
      if (!cursor) break
    }
    return tools
  }
  try {
    return { ok: true, tools: await Promise.race([pages(), deadline]) }
  } catch (error) {
    return { ok: false, error: error instanceof ListingTimeout ? `The server did not list its tools within ${seconds(timeoutMs)}.` : shortReason(error, timeoutMs) }
  } finally {
    clearTimeout(timer)
  }
}

/**
 * Why a listing failed, in a sentence of the platform's own: never the text of an upstream's answer (DESIGN §5),
 * which may say anything, only what the platform knows of it (a status, an error code).
 */
export function shortReason(error: unknown, timeoutMs = LISTING_TIMEOUT_MS): string {
  // Messages the platform wrote itself.
  if (error instanceof BreakerOpen) return error.message
  if (error instanceof OutboundRefused || error instanceof UpstreamSetupError) return sentence(error.message)
  const sdk = loadedClientSdk()
  if (sdk && error instanceof sdk.UnauthorizedError) return 'The server asks for authorization the platform does not have (HTTP 401); check its headers.'
  if (sdk && error instanceof sdk.StreamableHTTPError) {
    return error.code === undefined || error.code < 100 ? 'The server’s answer was not an MCP response.' : `The server answered HTTP ${error.code}.`
  }
  if (error instanceof McpError) {
    if (error.code === ErrorCode.RequestTimeout) return `The server did not answer within ${seconds(timeoutMs)}.`
    if (error.code === ErrorCode.ConnectionClosed) return 'The server closed the connection before answering.'
    return `The server answered with an MCP error (code ${error.code}).`
  }
  const code = (error as { code?: unknown } | null)?.code
  switch (code) {
    case 'ECONNREFUSED':
    case 'ConnectionRefused':
      return 'The connection was refused: nothing listens at the server’s address.'
    case 'ENOTFOUND':
    case 'EAI_AGAIN':
      return 'The server’s host name does not resolve.'
    case 'ECONNRESET':
    case 'EPIPE':
      return 'The connection was cut off.'
    case 'ETIMEDOUT':
    case 'UND_ERR_CONNECT_TIMEOUT':
      return 'The connection timed out.'
    case 'ENOENT':
    case 'EACCES':
      return 'The server’s program could not be started.'
    default:
      if (typeof code === 'string' && /^(?:CERT_|ERR_TLS|UNABLE_TO_VERIFY|SELF_SIGNED|DEPTH_ZERO)/.test(code)) return 'The server’s TLS certificate was not accepted.'
      return 'The server could not be reached.'
  }
}

/** The state of `user`'s own breaker for the server named `server` (closed until its first call). */
export function breakerState(upstreams: Upstreams, user: ToolUser, server: string): BreakerState {
  if (!user.companyId) return 'closed'
  const mine = upstreams.breakers(user.companyId, user.userId).find((b) => b.server === server && b.delegated === (user.delegated === true))
  return mine?.state ?? 'closed'
}

function sentence(text: string): string {
  const trimmed = text.length > 300 ? `${text.slice(0, 299)}…` : text
  return `${trimmed.charAt(0).toUpperCase()}${trimmed.slice(1)}${/[.!?…]$/.test(trimmed) ? '' : '.'}`
}

function seconds(ms: number): string {
  return `${Math.round(ms / 1000)} s`
}
