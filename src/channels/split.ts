/**
 * Cuts an answer into messages of at most `limit` characters, at the last paragraph break, else line break, else
 * space in each piece (a word longer than the limit is cut where it must be). Nothing is lost but the whitespace
 * at a cut.
 */
export function splitMessage(text: string, limit: number): string[] {
  const parts: string[] = []
  let rest = text.trim()
  while (rest.length > limit) {
    const window = rest.slice(0, limit + 1)
    // A break in the first half would leave tiny pieces; cutting mid-word is better then.
    const floor = Math.floor(limit / 2)
    let at = [window.lastIndexOf('\n\n'), window.lastIndexOf('\n'), window.lastIndexOf(' ')].find((i) => i >= floor) ?? limit
    // Never between the two halves of a surrogate pair (an emoji): platforms count UTF-16 units, as slice() does.
    if (at === limit && /[\uD800-\uDBFF]/.test(rest[at - 1] ?? '')) at -= 1
    parts.push(rest.slice(0, at).trimEnd())
    rest = rest.slice(at).trimStart()
  }
  if (rest.length > 0 || parts.length === 0) parts.push(rest)
  return parts
}
