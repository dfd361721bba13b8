import Papa from 'papaparse'

const strictUtf8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: false })

// C0 and C1 controls other than tab, line feed, vertical tab, form feed and carriage return: what binary data
// decoded as text is full of, and what written text almost never holds.
const CONTROL = /[\u0001-\u0008\u000e-\u001f\u007f-\u009f]/g
// A stray control or two (a DOS end-of-file mark, a pasted escape) does not make a text file binary.
const MAX_CONTROL_RATIO = 0.001

/** The text of `bytes` if they are UTF-8 text a person wrote (no NUL, next to no control characters), else undefined. */
export function decodeText(bytes: Uint8Array): string | undefined {
  if (bytes.includes(0)) return undefined
  let text: string
  try {
    text = strictUtf8.decode(bytes)
  } catch {
    return undefined
  }
  const controls = text.match(CONTROL)?.length ?? 0
  return controls > Math.max(1, text.length * MAX_CONTROL_RATIO) ? undefined : text
}

/** How much of a text file is looked at to tell a table from prose. */
const SAMPLE_ROWS = 200

export interface TableShape {
  /** Rows read (up to the sample), blank lines aside. */
  rows: number
  /** Columns of the first row. */
  columns: number
  /** Every row has the first row's number of columns. */
  consistent: boolean
  /** No quoting errors: the delimited reading makes sense at all. */
  parseable: boolean
}

/**
 * What of a text is looked at to tell a table from prose: papaparse runs here, in the platform's own process, so
 * on a bounded start (cut at a line break) — a 20 MB field of quotes would otherwise hold the event loop for seconds.
 */
const SAMPLE_CHARS = 64 * 1024

/** How the start of `text` reads as a delimited table, the delimiter guessed by papaparse (, ; tab |). */
export function tableShape(text: string): TableShape {
  const start = text.length > SAMPLE_CHARS ? text.slice(0, Math.max(text.lastIndexOf('\n', SAMPLE_CHARS), 1)) : text
  const result = Papa.parse<string[]>(start, { preview: SAMPLE_ROWS, skipEmptyLines: true, delimitersToGuess: [',', '\t', ';', '|'] })
  const rows = result.data
  const columns = rows[0]?.length ?? 0
  const parseable = !result.errors.some((e) => e.type === 'Quotes' || e.code === 'UndetectableDelimiter')
  const consistent = rows.every((row) => row.length === columns)
  return { rows: rows.length, columns, consistent, parseable }
}
