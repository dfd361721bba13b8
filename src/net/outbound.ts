import { lookup } from 'node:dns/promises'
import { context, propagation } from '@opentelemetry/api'
import { rootCertificates } from 'node:tls'
import ipaddr from 'ipaddr.js'
import { parseAllowList, refusalReason } from './address-ranges.ts'

/** Why a tenant-set URL may not be reached; the message is meant for the admin who set it. */
export class OutboundRefused extends Error {
  constructor(message: string) {
    super(message)
    this.name = 'OutboundRefused'
  }
}

/** Every answer DNS has for a host name; rejects when there is none. */
export type Resolver = (hostname: string) => Promise<string[]>

export interface OutboundPolicyOptions {
  /** Replaces DNS, e.g. for a test that plays a rebinding name server. */
  resolve?: Resolver
  /** PEM certificates trusted besides the public roots, e.g. an internal CA's. */
  ca?: string
}

export type OutboundFetch = (input: string | URL | Request, init?: RequestInit) => Promise<Response>

const HINT =
  'the platform does not connect to loopback, private or link-local addresses unless the operator allows them (SWITCHBOARD_OUTBOUND_ALLOW)'

const resolveWithDns: Resolver = async (hostname) => {
  const answers = await lookup(hostname, { all: true, verbatim: true })
  return answers.map((answer) => answer.address)
}

/** The URL as an error may show it: no user name, password, query or fragment, which can carry secrets. */
function shown(url: URL): string {
  return `${url.protocol}//${url.host}${url.pathname}`
}

/** A URL's host without IPv6 brackets; undefined when it is a name rather than an address. */
function literalAddress(hostname: string): string | undefined {
  if (hostname.startsWith('[')) return hostname.slice(1, -1)
  // The URL parser has already turned 127.1, 0x7f000001 and 2130706433 into four decimal parts.
  return ipaddr.IPv4.isValidFourPartDecimal(hostname) ? hostname : undefined
}

/** IPv4 first: a host with both but no IPv6 route would otherwise fail where a browser would not. */
function ipv4First(addresses: string[]): string[] {
  const unique = [...new Set(addresses)]
  return [...unique.filter((a) => !a.includes(':')), ...unique.filter((a) => a.includes(':'))]
}

/**
 * Which addresses tenant-set URLs (remote MCP servers, client metadata documents, webhooks) may reach: public
 * unicast only, plus the ranges the operator allowed. `check` judges a URL when it is saved; `fetch` judges it again
 * on every request, because a name that was public when saved can point inward later (DNS rebinding).
 */
export class OutboundPolicy {
  private readonly allowed
  private readonly resolve: Resolver
  private readonly ca: string[] | undefined

  /** `allow`: CIDRs reachable although not public, e.g. `10.1.0.0/16`; throws naming an entry that is not one. */
  constructor(allow: readonly string[] = [], options: OutboundPolicyOptions = {}) {
    this.allowed = parseAllowList(allow)
    this.resolve = options.resolve ?? resolveWithDns
    // Bun's `tls.ca` replaces the trusted roots rather than adding to them, so the public ones go along.
    this.ca = options.ca === undefined ? undefined : [...rootCertificates, options.ca]
  }

  /** The URL, normalized, and every address its host resolves to; rejects with OutboundRefused when any is refused. */
  async check(input: string | URL): Promise<{ url: URL; addresses: string[] }> {
    const url = URL.canParse(input) ? new URL(input) : undefined
    if (!url) throw new OutboundRefused(`${JSON.stringify(String(input))} is not a valid URL`)
    if (url.protocol !== 'http:' && url.protocol !== 'https:') {
      throw new OutboundRefused(`${shown(url)} uses ${url.protocol}; the platform connects only over http: and https:`)
    }
    const addresses = ipv4First(await this.addressesOf(url))
    for (const address of addresses) {
      const reason = refusalReason(address, this.allowed)
      if (reason) throw new OutboundRefused(`${shown(url)} resolves to ${address}, ${reason}; ${HINT}`)
    }
    return { url, addresses }
  }

  private async addressesOf(url: URL): Promise<string[]> {
    const literal = literalAddress(url.hostname)
    if (literal) return [literal]
    const name = url.hostname.replace(/\.$/, '')
    // localhost names are loopback by definition (RFC 6761), whatever a resolver says; judge them so everywhere.
    if (name === 'localhost' || name.endsWith('.localhost')) return ['127.0.0.1', '::1']
    const failure = (detail: string) => new OutboundRefused(`${shown(url)} does not resolve to any address (${detail}); check the host name`)
    const addresses = await this.resolve(name).catch((error: { code?: string }) => {
      throw failure(error.code ?? 'lookup failed')
    })
    if (addresses.length === 0) throw failure('no answer')
    return addresses
  }

  /**
   * A drop-in `fetch` (e.g. the MCP SDK transports' `fetch` option) that checks the URL on every request, connects
   * to the very address it checked, never follows a redirect (a public server must not bounce the platform inward;
   * the 3xx comes back as is) and drops the body of every non-2xx answer, keeping status and headers
   * (WWW-Authenticate), so an upstream's error text never reaches the caller.
   */
  readonly fetch: OutboundFetch = async (input, init) => {
    const request = input instanceof Request ? input : undefined
    const { url, addresses } = await this.check(request ? request.url : (input as string | URL))
    const byName = literalAddress(url.hostname) === undefined
    // Pinning: connect to the checked address so a second DNS answer cannot differ. The Host header keeps the
    // name for virtual hosting; for https, Bun's `tls.serverName` sends it as SNI and verifies the certificate
    // against it, not against the address.
    const target = new URL(url)
    const address = addresses[0]!
    target.hostname = address.includes(':') ? `[${address}]` : address
    const headers = new Headers(init?.headers ?? request?.headers)
    headers.set('host', url.host)
    // The running span's traceparent, when tracing is on (the propagator is registered only then).
    propagation.inject(context.active(), headers, { set: (h, key, value) => h.set(key, value) })
    const callerTls = (init as BunFetchRequestInit | undefined)?.tls
    const https = url.protocol === 'https:'
    const tls = https ? { ...callerTls, ...(byName ? { serverName: url.hostname.replace(/\.$/, '') } : {}), ...(this.ca ? { ca: this.ca } : {}) } : callerTls
    const response = await fetch(target, {
      method: request?.method,
      body: request?.body,
      signal: request?.signal,
      ...init,
      headers,
      redirect: 'manual',
      tls,
    } as BunFetchRequestInit)
    return response.ok ? response : await withoutBody(response)
  }
}

/**
 * The answer's status and headers without its body, which may hold anything the upstream chose to say. The new
 * answer has no `url`, so a caller resolves a relative Location against the URL it asked for, not the pinned address.
 */
async function withoutBody(response: Response): Promise<Response> {
  await response.body?.cancel().catch(() => undefined)
  const headers = new Headers(response.headers)
  for (const name of ['content-length', 'content-encoding', 'transfer-encoding']) headers.delete(name)
  return new Response(null, { status: response.status, statusText: response.statusText, headers })
}
