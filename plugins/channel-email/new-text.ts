/**
 * A mail's new text without the history mail programs quote below it and without the sender's signature: the
 * conversation already holds that history, and the agent would otherwise read every earlier message again with
 * each reply (and a "link CODE" mail would not read as one).
 */

/** "On Mon, 1 Jan 2024 at 10:00, Ann <ann@example.com> wrote:", which some programs wrap onto a second line. */
const ATTRIBUTION_START = /^\s*On\s/
const ATTRIBUTION_END = /\bwrote:\s*$/
/** Outlook's separator above the quoted message. */
const ORIGINAL_MESSAGE = /^\s*-{2,}\s*Original Message\s*-{2,}\s*$/i
const QUOTED = /^\s*>/
/** "-- " on a line of its own starts a signature (RFC 3676); some programs drop the trailing space. */
const SIGNATURE = /^-- ?$/

/** Where the quoted history or the signature starts; undefined when there is neither. */
function historyStart(lines: readonly string[]): number | undefined {
  for (let i = 0; i < lines.length; i++) {
    const line = lines[i]!
    if (ORIGINAL_MESSAGE.test(line) || SIGNATURE.test(line)) return i
    if (!ATTRIBUTION_START.test(line)) continue
    if (ATTRIBUTION_END.test(line)) return i
    const next = lines[i + 1]
    if (next !== undefined && next.trim() !== '' && ATTRIBUTION_END.test(next)) return i
  }
  return undefined
}

/** The text without the quoted history (the attribution and what follows it, and quoted lines at the end) or signature. */
export function newText(text: string): string {
  const lines = text.replace(/\r\n?/g, '\n').split('\n')
  const start = historyStart(lines)
  const kept = start === undefined ? lines : lines.slice(0, start)
  // Quoted lines at the end are history too; quotes between new lines are answered inline and stay.
  while (kept.length > 0 && (kept.at(-1)!.trim() === '' || QUOTED.test(kept.at(-1)!))) kept.pop()
  const trimmed = kept.join('\n').trim()
  // A message that is nothing but a quote says what it quotes.
  return trimmed === '' ? text.trim() : trimmed
}
