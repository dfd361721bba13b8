// A stand-in origin to resolve relative targets against: what matters is only whether the result stays on it.
const BASE = 'http://switchboard.invalid'
// Longer than any link the console makes; past it, the input is a probe, not a deep link.
const MAX_LENGTH = 2048
// Percent-encoding nested deeper than this is an attack, not a link.
const MAX_DECODINGS = 5
// Controls and backslashes: the URL parser drops tabs and newlines silently (`/\t/x` becomes `//x`) and reads a
// backslash as a slash (`/\x` becomes `//x`); none of them belong in a link this site makes.
const UNSAFE_CHARACTER = /[\u0000-\u001f\u007f-\u009f\\]/

/**
 * The target a sign-in may send the browser to, or `/`. A relative target must be a path on this site after the
 * WHATWG URL parser has resolved it (dot segments included), in every percent-decoding of it: never `//host` or
 * `/\host`, which browsers read as another site. An absolute target passes only when it is exactly on one of
 * `origins` (the platform's own), with no user name or password, and comes back normalized.
 */
export function localRedirect(raw: unknown, origins: readonly string[] = []): string {
  if (typeof raw !== 'string' || raw === '' || raw.length > MAX_LENGTH || UNSAFE_CHARACTER.test(raw)) return '/'
  // The parser trims what surrounds a URL; a target that needs trimming was not written by this site.
  if (raw !== raw.trim()) return '/'
  if (raw.startsWith('/')) return localPath(raw) ?? '/'
  return ownAbsolute(raw, origins) ?? '/'
}

function localPath(raw: string): string | undefined {
  // A layer that leaves the site when decoded is refused too: a proxy or a later redirect may decode it.
  if (!percentDecodings(raw)?.every((form) => resolvesHome(form) !== undefined)) return undefined
  return resolvesHome(raw)
}

/** The path, query and fragment `target` resolves to when it stays on this site, or undefined. */
function resolvesHome(target: string): string | undefined {
  if (UNSAFE_CHARACTER.test(target) || !target.startsWith('/') || target.startsWith('//')) return undefined
  let url: URL
  try {
    url = new URL(target, BASE)
  } catch {
    return undefined
  }
  if (url.origin !== BASE) return undefined
  const path = `${url.pathname}${url.search}${url.hash}`
  // Dot segments can leave `//host` behind once resolved (`/.//host`, `/a/..//host`).
  return isPlainPath(path) ? path : undefined
}

function isPlainPath(path: string): boolean {
  return path.startsWith('/') && !path.startsWith('//') && !UNSAFE_CHARACTER.test(path)
}

/** Each layer of percent-decoding of `raw`, undefined when one is malformed or they nest too deep. */
function percentDecodings(raw: string): string[] | undefined {
  const layers: string[] = []
  let current = raw
  for (let depth = 0; depth <= MAX_DECODINGS; depth++) {
    let next: string
    try {
      next = decodeURIComponent(current)
    } catch {
      return undefined
    }
    if (next === current) return layers
    layers.push(next)
    current = next
  }
  return undefined
}

function ownAbsolute(raw: string, origins: readonly string[]): string | undefined {
  let url: URL
  try {
    url = new URL(raw)
  } catch {
    return undefined
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return undefined
  if (url.username !== '' || url.password !== '') return undefined
  if (!origins.some((origin) => originOf(origin) === url.origin)) return undefined
  // Its path meets the rules of a relative target: nothing that reads as `//host` once taken on its own.
  if (localPath(`${url.pathname}${url.search}${url.hash}`) === undefined) return undefined
  return UNSAFE_CHARACTER.test(url.href) ? undefined : url.href
}

function originOf(candidate: string): string | undefined {
  try {
    const origin = new URL(candidate).origin
    return origin === 'null' ? undefined : origin
  } catch {
    return undefined
  }
}
