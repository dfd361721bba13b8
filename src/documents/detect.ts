import { DocumentError, unsupportedDocument } from './errors.ts'
import { CSV, DOCX, PDF, TXT, XLSX, type DocumentMediaType } from './media-types.ts'
import { decodeText, tableShape } from './plain-text.ts'
import { sniffFileType } from './sniff.ts'
import { describeBytes } from './sizes.ts'
import { zipEntries, type ZipEntry } from './zip-entries.ts'

/** The part each OOXML kind cannot do without, besides the package's content types and relationships. */
const OOXML_MAIN_PART: Partial<Record<DocumentMediaType, string>> = {
  [DOCX]: 'word/document.xml',
  [XLSX]: 'xl/workbook.xml',
}

/**
 * What an Office package may unpack to, as its directory declares it. A real document stays far below: a 20 MB
 * workbook of a million cells unpacks to about 200 MB, in a few dozen parts; XML compresses about tenfold, rarely a
 * hundredfold, while a zip bomb's parts inflate a thousandfold and more. (A DOCX part of 100 MB already takes the
 * reader past its 512 MB, measured: refused here, it is refused at once and says why.)
 */
export const PACKAGE_LIMITS = { entries: 10_000, bytes: 1024 * 1024 * 1024, ratio: 100, ratioFrom: 50 * 1024 * 1024 }
const ZIP64 = 0xffffffff

/**
 * A zip that file-type calls DOCX or XLSX (it reads the main content type in [Content_Types].xml) is taken only if
 * its directory really holds an OOXML package of that kind: content types, package relationships, main part.
 */
function isOoxmlPackage(entries: readonly ZipEntry[], type: DocumentMediaType): boolean {
  const names = new Set(entries.map((entry) => entry.name))
  return names.has('[Content_Types].xml') && names.has('_rels/.rels') && names.has(OOXML_MAIN_PART[type]!)
}

/**
 * Refuses, unread, a package whose directory owns up to being a bomb: too many parts, too much in all, or a large
 * part inflating far past what XML does. One that lies about its sizes is stopped by the reader's memory cap.
 */
function checkPackageSize(entries: readonly ZipEntry[], ext: string): void {
  const what = `This ${ext.toUpperCase()} file`
  if (entries.length > PACKAGE_LIMITS.entries) {
    throw new DocumentError('too_large', `${what} holds ${entries.length} parts; a document may hold at most ${PACKAGE_LIMITS.entries}.`)
  }
  const total = entries.reduce((sum, entry) => sum + (entry.size === ZIP64 ? Infinity : entry.size), 0)
  const bomb = entries.find((entry) => entry.size === ZIP64 || (entry.size > PACKAGE_LIMITS.ratioFrom && entry.size > entry.compressedSize * PACKAGE_LIMITS.ratio))
  if (total > PACKAGE_LIMITS.bytes || bomb) {
    const size = Number.isFinite(total) ? ` to ${describeBytes(total)}` : ''
    throw new DocumentError('too_large', `${what} unpacks${size}, far more than its size explains (a compressed bomb, or a damaged file), so it was not read.`)
  }
}

const extensionOf = (filename: string) => /\.([^./\\]+)$/.exec(filename)?.[1]?.toLowerCase() ?? ''

/**
 * Text is CSV when it reads as a table: at least two rows of the same two or more columns. A file named .csv or
 * .tsv whose first row has columns is CSV too (one row, or ragged rows): the name breaks ties between two
 * readings of the same text, never more.
 */
function textType(text: string, filename: string): DocumentMediaType {
  const shape = tableShape(text)
  if (!shape.parseable || shape.columns < 2) return TXT
  if (shape.consistent && shape.rows >= 2) return CSV
  return ['csv', 'tsv'].includes(extensionOf(filename)) ? CSV : TXT
}

const BINARY_TYPES: Record<string, DocumentMediaType> = { 'application/pdf': PDF, [DOCX]: DOCX, [XLSX]: XLSX }
// Formats file-type recognises that are plain text all the same: as text files they are read as they are.
const TEXT_FORMATS = new Set(['xml', 'ics', 'vcf', 'vtt'])

/**
 * The document's type, judged by its bytes: PDF, DOCX and XLSX by their signatures (and for the OOXML kinds their
 * package), TXT and CSV by being UTF-8 text. The filename only tells CSV from TXT when the text could be either.
 * Throws a DocumentError (unsupported) for anything else, whatever it is called.
 */
export async function detectDocumentType(bytes: Uint8Array, filename = ''): Promise<DocumentMediaType> {
  if (bytes.length === 0) throw new DocumentError('unreadable', 'The file is empty.')
  const sniffed = await sniffFileType(bytes)
  if (sniffed && !TEXT_FORMATS.has(sniffed.ext)) {
    const type = BINARY_TYPES[sniffed.mime]
    if (type === PDF) return type
    const entries = type ? zipEntries(bytes) ?? [] : []
    if (type && isOoxmlPackage(entries, type)) {
      checkPackageSize(entries, sniffed.ext)
      return type
    }
    if (type) throw unsupportedDocument(`This file looks like a ${sniffed.ext.toUpperCase()} file but is not a complete Office document.`)
    throw unsupportedDocument(`This file is ${describe(sniffed.ext, sniffed.mime)}, which is not a document that can be read.`)
  }
  const text = decodeText(bytes)
  if (text === undefined) {
    throw unsupportedDocument('This file is neither a known document format nor UTF-8 text (it may be binary data, or text in another encoding).')
  }
  return textType(text, filename)
}

/** What the file is, for the person who sent it: "a program", "a PNG image". */
function describe(ext: string, mime: string): string {
  if (['elf', 'exe', 'macho', 'class', 'wasm'].includes(ext)) return 'a program'
  if (mime.startsWith('image/')) return `a ${ext.toUpperCase()} image`
  if (ext === 'cfb') return 'an old-style Office file (.doc or .xls, from before 2007; save it as DOCX or XLSX)'
  if (ext === 'zip') return 'a ZIP archive'
  return `a ${ext.toUpperCase()} file`
}
