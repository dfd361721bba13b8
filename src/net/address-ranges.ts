import ipaddr from 'ipaddr.js'

type Address = ipaddr.IPv4 | ipaddr.IPv6
type Cidr = [Address, number]

// IANA hands out public IPv6 unicast only from 2000::/3. ipaddr.js calls every address it has no name for
// `unicast`, so IPv4-compatible (::a.b.c.d) and unassigned space would otherwise pass as public.
const GLOBAL_IPV6 = ipaddr.parseCIDR('2000::/3')
// NAT64's well-known prefix carries the IPv4 in the last 32 bits; its local-use sibling (64:ff9b:1::/48) does not
// say where, and is local by definition.
const NAT64_WELL_KNOWN = ipaddr.parseCIDR('64:ff9b::/96')

// What an admin reads after "resolves to <address>, ...": the range in words, not the library's name for it.
const RANGE_WORDS: Record<string, string> = {
  unspecified: 'the unspecified address',
  broadcast: 'the broadcast address',
  multicast: 'a multicast address',
  linkLocal: 'a link-local address (where cloud metadata services live)',
  loopback: 'a loopback address',
  carrierGradeNat: 'a carrier-grade NAT (shared) address',
  private: 'a private (RFC 1918) address',
  uniqueLocal: 'a unique-local (private IPv6) address',
  deprecatedSiteLocal: 'a site-local (private IPv6) address',
  reserved: 'a reserved or documentation address',
  benchmarking: 'a benchmarking address',
  rfc6052: 'a local NAT64 address',
  '6to4': 'a 6to4 tunnel address',
  teredo: 'a Teredo tunnel address',
}

/** An address's range in words (`a loopback address`), for the ranges that are not public unicast. */
function describe(range: string): string {
  return RANGE_WORDS[range] ?? `a special-purpose address (${range})`
}

/**
 * The operator's allowed ranges, parsed once. A bare address counts as a range of one. Throws an Error naming the
 * first entry that is not a CIDR, so configuration checks can report it. IPv4 must be written in four decimal parts:
 * `127.1/8` or `0x7f.0.0.1/8` are refused rather than guessed at.
 */
export function parseAllowList(allow: readonly string[]): Cidr[] {
  return allow.map((entry) => {
    const text = entry.trim()
    const cidr = text.includes('/') ? text : `${text}/${text.includes(':') ? 128 : 32}`
    const valid = ipaddr.IPv4.isValidCIDRFourPartDecimal(cidr) || (cidr.includes(':') && ipaddr.IPv6.isValidCIDR(cidr))
    if (!valid) throw new Error(`"${entry}" is not an address range in CIDR notation (e.g. 10.1.0.0/16 or fd00::/8)`)
    return ipaddr.parseCIDR(cidr)
  })
}

function isAllowed(address: Address, allowed: readonly Cidr[]): boolean {
  return allowed.some(([network, bits]) => network.kind() === address.kind() && address.match(network, bits))
}

/** The IPv4 address an IPv6 address stands for when the network translates it, if it is one of those. */
function embeddedIPv4(address: ipaddr.IPv6): ipaddr.IPv4 | undefined {
  const range: string = address.range()
  const translated = range === 'ipv4Mapped' || range === 'rfc6145' || address.match(NAT64_WELL_KNOWN)
  if (!translated) return undefined
  return ipaddr.fromByteArray(address.toByteArray().slice(12)) as ipaddr.IPv4
}

/**
 * Why the platform must not connect to `text`, in words, or undefined when it may: the address is public unicast
 * or inside a range the operator allowed. An IPv6 address that the network turns into an IPv4 one (IPv4-mapped,
 * NAT64) is judged by the IPv4 it carries, so `::ffff:127.0.0.1` is loopback.
 */
export function refusalReason(text: string, allowed: readonly Cidr[]): string | undefined {
  if (!ipaddr.isValid(text)) return 'not an IP address'
  const address = ipaddr.parse(text)
  if (isAllowed(address, allowed)) return undefined
  if (address.kind() === 'ipv6') {
    const inner = embeddedIPv4(address as ipaddr.IPv6)
    if (inner) {
      const reason = refusalReason(inner.toString(), allowed)
      return reason && `an IPv6 form of ${inner.toString()}, ${reason}`
    }
  }
  const range: string = address.range()
  if (range !== 'unicast') return describe(range)
  if (address.kind() === 'ipv6' && !address.match(GLOBAL_IPV6)) return 'an address outside the public IPv6 range'
  return undefined
}
