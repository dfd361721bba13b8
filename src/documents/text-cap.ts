/**
 * The caps of DESIGN §4, in UTF-8 bytes: "KB" is bytes, and bytes are what a model's context and the store pay
 * for. 1 KB = 1024 bytes.
 */
export const KB = 1024
export const EXTRACTED_TEXT_CAP = 200 * KB
export const CONTEXT_TEXT_CAP = 100 * KB

const encoder = new TextEncoder()

/**
 * The longest start of `text` that fits in `maxBytes` of UTF-8, cut between characters. encodeInto writes only
 * whole characters (a surrogate pair counts as one), so what it read is a safe place to cut.
 */
export function capUtf8(text: string, maxBytes: number): { text: string; truncated: boolean } {
  // Every UTF-16 unit is at most 3 bytes: short texts never need encoding.
  if (text.length * 3 <= maxBytes) return { text, truncated: false }
  const { read } = encoder.encodeInto(text, new Uint8Array(maxBytes))
  return read >= text.length ? { text, truncated: false } : { text: text.slice(0, read), truncated: true }
}

export function utf8Length(text: string): number {
  return Buffer.byteLength(text, 'utf8')
}
