import { fileTypeFromBuffer } from 'file-type'
import { DocumentError, unsupportedDocument } from './errors.ts'
import { CSV, DOCX, PDF, TXT, XLSX, type DocumentMediaType } from './media-types.ts'
import { decodeText, tableShape } from './plain-text.ts'
import { zipEntryNames } from './zip-entries.ts'

/** The part each OOXML kind cannot do without, besides the package's content types and relationships. */
const OOXML_MAIN_PART: Partial<Record<DocumentMediaType, string>> = {
  [DOCX]: 'word/document.xml',
  [XLSX]: 'xl/workbook.xml',
}

/**
 * A zip that file-type calls DOCX or XLSX (it reads the main content type in [Content_Types].xml) is taken only if
 * its directory really holds an OOXML package of that kind: content types, package relationships, main part.
 */
function isOoxmlPackage(bytes: Uint8Array, type: DocumentMediaType): boolean {
  const names = new Set(zipEntryNames(bytes) ?? [])
  return names.has('[Content_Types].xml') && names.has('_rels/.rels') && names.has(OOXML_MAIN_PART[type]!)
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
  const sniffed = await fileTypeFromBuffer(bytes)
  if (sniffed && !TEXT_FORMATS.has(sniffed.ext)) {
    const type = BINARY_TYPES[sniffed.mime]
    if (type === PDF) return type
    if (type && isOoxmlPackage(bytes, type)) return type
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
