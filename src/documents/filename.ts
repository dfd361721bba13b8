/** The longest filename a document keeps (the model's limit). */
export const MAX_FILENAME_LENGTH = 300

// Controls, zero-width marks and bidirectional overrides: invisible, and the last can make a name that ends in
// ".exe" display as one ending in ".txt".
const INVISIBLE = /[\u0000-\u001f\u007f-\u009f\u200b-\u200f\u202a-\u202e\u2066-\u2069]/g

/** Whether a name holds what sanitizeFilename removes: a rename must not bring it back. */
export function hasInvisibleCharacters(name: string): boolean {
  return name.search(INVISIBLE) >= 0
}

/**
 * A filename as sent by a browser or a script, made safe to store and show: the last path segment (either slash),
 * without invisible characters, trimmed, at most 300 UTF-16 units (the model's measure) and never half a surrogate
 * pair. Nothing left becomes "document". No name at all is "document" too: Bun's form parser gives a file whose
 * name begins with NUL no name (undefined, though typed a string).
 */
export function sanitizeFilename(name: string | undefined): string {
  const base = (name ?? '').split(/[/\\]/).pop() ?? ''
  let cut = base.replace(INVISIBLE, '').trim().slice(0, MAX_FILENAME_LENGTH)
  if (/[\ud800-\udbff]$/.test(cut)) cut = cut.slice(0, -1)
  cut = cut.trim()
  return cut === '' || cut === '.' || cut === '..' ? 'document' : cut
}
