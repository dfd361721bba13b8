/**
 * Whether a mail's sender is who its From address says, as the mailbox's own server judged it in an
 * Authentication-Results header (RFC 8601). Anyone can write any From; only a server the agent's admin named (by
 * its authserv-id) is believed, and only its topmost header: the receiving server adds its own on top and removes
 * forged ones that claim its name, while headers below the top may come from anyone.
 */

/** One method's verdict, e.g. `dkim=pass header.d=example.com`. */
interface Verdict {
  method: string
  result: string
  /** `ptype.property` (lower case) → value, e.g. `header.d` → `example.com`. */
  properties: Map<string, string>
}

interface AuthenticationResults {
  authservId: string
  verdicts: Verdict[]
}

type Token = { word: string } | { symbol: '=' | ';' }

/** Words, quoted strings (unquoted) and the `=` and `;` that structure the header; comments are dropped. */
function tokens(value: string): Token[] {
  const found: Token[] = []
  let at = 0
  while (at < value.length) {
    const char = value[at]!
    if (/\s/.test(char)) {
      at++
    } else if (char === '=' || char === ';') {
      found.push({ symbol: char })
      at++
    } else if (char === '(') {
      at = afterComment(value, at)
    } else if (char === '"') {
      let word = ''
      at++
      while (at < value.length && value[at] !== '"') {
        if (value[at] === '\\') at++
        word += value[at] ?? ''
        at++
      }
      found.push({ word })
      at++
    } else {
      const start = at
      while (at < value.length && !/[\s=;("]/.test(value[at]!)) at++
      found.push({ word: value.slice(start, at) })
    }
  }
  return found
}

/** Where a comment that opens at `start` ends; comments nest and may hold quoted pairs. */
function afterComment(value: string, start: number): number {
  let depth = 0
  let at = start
  while (at < value.length) {
    const char = value[at]!
    if (char === '\\') at++
    else if (char === '(') depth++
    else if (char === ')' && --depth === 0) return at + 1
    at++
  }
  return at
}

const wordOf = (token: Token | undefined) => (token && 'word' in token ? token.word : undefined)

/** The header's value parsed; undefined when it does not even name its server. */
export function parseAuthenticationResults(value: string): AuthenticationResults | undefined {
  const all = tokens(value)
  const authservId = wordOf(all[0])
  if (authservId === undefined) return undefined
  const verdicts: Verdict[] = []
  let segment: Token[] = []
  // The first segment is the server (and a version); each one after a ";" is a method's verdict.
  const segments: Token[][] = []
  for (const token of all.slice(1)) {
    if ('symbol' in token && token.symbol === ';') {
      segments.push(segment)
      segment = []
    } else {
      segment.push(token)
    }
  }
  segments.push(segment)
  for (const part of segments.slice(1)) {
    // key=value pairs; a stray word (a reason's unquoted text, say) is passed over.
    const pairs: Array<[string, string]> = []
    let i = 0
    while (i + 2 < part.length) {
      const [key, equals, value] = [wordOf(part[i]), part[i + 1], wordOf(part[i + 2])]
      if (key !== undefined && equals && 'symbol' in equals && equals.symbol === '=' && value !== undefined) {
        pairs.push([key.toLowerCase(), value])
        i += 3
      } else {
        i++
      }
    }
    const [methodSpec, ...rest] = pairs
    if (!methodSpec) continue
    // A method may carry a version (dkim/1): the name is what counts.
    const method = methodSpec[0].split('/')[0]!
    verdicts.push({ method, result: methodSpec[1].toLowerCase(), properties: new Map(rest) })
  }
  return { authservId, verdicts }
}

/**
 * True when the topmost Authentication-Results of the server named `authservId` reports dmarc=pass for the From
 * domain (header.from must say which: a verdict on another From header of the same mail proves nothing about this
 * one), or dkim=pass with a signing domain equal to the From domain. `headers` are the
 * values of every Authentication-Results header, topmost first. Without a configured server nobody is verified.
 */
export function senderVerified(headers: readonly string[], authservId: string | undefined, fromDomain: string | undefined): boolean {
  if (!authservId || !fromDomain) return false
  const domain = fromDomain.toLowerCase()
  const ours = headers.map(parseAuthenticationResults).find((parsed) => parsed?.authservId.toLowerCase() === authservId.toLowerCase())
  if (!ours) return false
  return ours.verdicts.some((verdict) => {
    if (verdict.result !== 'pass') return false
    if (verdict.method === 'dmarc') {
      const judged = verdict.properties.get('header.from')
      return judged?.toLowerCase() === domain
    }
    return verdict.method === 'dkim' && verdict.properties.get('header.d')?.toLowerCase() === domain
  })
}
