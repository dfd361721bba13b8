import { constants, deflateRawSync } from 'node:zlib'
import ExcelJS from 'exceljs'

/**
 * Document fixtures made in the tests themselves, so no binary file is committed and every byte of a fixture is
 * readable here: a hand-written PDF, OOXML packages from a small zip writer, an XLSX from exceljs.
 */

const encoder = new TextEncoder()
/** Bytes backed by a plain ArrayBuffer, as a File or Blob takes them. */
type Bytes = Uint8Array<ArrayBuffer>
const bytesOf = (data: Uint8Array | string) => (typeof data === 'string' ? encoder.encode(data) : data)

/** Escapes the three characters a PDF literal string gives meaning to. */
function pdfString(text: string): string {
  return `(${text.replace(/[\\()]/g, (c) => `\\${c}`)})`
}

/**
 * A minimal valid PDF 1.4: one page, the standard Helvetica font, one line of text per entry of `lines`, and an
 * xref table whose offsets are counted byte by byte (text is ASCII, so characters are bytes).
 */
export function pdfWithText(lines: readonly string[]): Bytes {
  const content = ['BT', '/F1 12 Tf', '14 TL', '72 720 Td', ...lines.map((line) => `${pdfString(line)} Tj T*`), 'ET'].join('\n')
  const objects = [
    '<< /Type /Catalog /Pages 2 0 R >>',
    '<< /Type /Pages /Kids [3 0 R] /Count 1 >>',
    '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 4 0 R >> >> /Contents 5 0 R >>',
    '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>',
    `<< /Length ${content.length} >>\nstream\n${content}\nendstream`,
  ]
  let pdf = '%PDF-1.4\n'
  const offsets: number[] = []
  objects.forEach((body, index) => {
    offsets.push(pdf.length)
    pdf += `${index + 1} 0 obj\n${body}\nendobj\n`
  })
  const xref = pdf.length
  // Each xref entry is exactly 20 bytes: 10-digit offset, space, 5-digit generation, space, type, CR LF.
  pdf += `xref\n0 ${objects.length + 1}\n0000000000 65535 f\r\n`
  for (const offset of offsets) pdf += `${String(offset).padStart(10, '0')} 00000 n\r\n`
  pdf += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`
  return encoder.encode(pdf)
}

export interface ZipEntry {
  name: string
  data?: Uint8Array | string
  /** Deflate the entry (method 8); stored (method 0) otherwise. */
  deflate?: boolean
  /** Already-compressed data with its true size and CRC, for entries too big to hold uncompressed. */
  raw?: { compressed: Uint8Array; size: number; crc: number }
}

/** A zip archive (no data descriptors, no zip64): local headers, then the central directory, then its end record. */
export function zipOf(entries: readonly ZipEntry[]): Bytes {
  const parts: Uint8Array[] = []
  const central: Uint8Array[] = []
  let offset = 0
  for (const entry of entries) {
    const name = encoder.encode(entry.name)
    const data = bytesOf(entry.data ?? '')
    const method = entry.raw || entry.deflate ? 8 : 0
    const compressed = entry.raw?.compressed ?? (entry.deflate ? deflateRawSync(data) : data)
    const size = entry.raw?.size ?? data.length
    const crc = entry.raw?.crc ?? Bun.hash.crc32(data)

    const local = new DataView(new ArrayBuffer(30))
    local.setUint32(0, 0x04034b50, true)
    local.setUint16(4, 20, true) // version needed
    local.setUint16(8, method, true)
    local.setUint32(14, crc, true)
    local.setUint32(18, compressed.length, true)
    local.setUint32(22, size, true)
    local.setUint16(26, name.length, true)
    parts.push(new Uint8Array(local.buffer), name, compressed)

    const header = new DataView(new ArrayBuffer(46))
    header.setUint32(0, 0x02014b50, true)
    header.setUint16(4, 20, true) // version made by
    header.setUint16(6, 20, true) // version needed
    header.setUint16(10, method, true)
    header.setUint32(16, crc, true)
    header.setUint32(20, compressed.length, true)
    header.setUint32(24, size, true)
    header.setUint16(28, name.length, true)
    header.setUint32(42, offset, true)
    central.push(new Uint8Array(header.buffer), name)
    offset += 30 + name.length + compressed.length
  }
  const directorySize = central.reduce((sum, part) => sum + part.length, 0)
  const end = new DataView(new ArrayBuffer(22))
  end.setUint32(0, 0x06054b50, true)
  end.setUint16(8, entries.length, true)
  end.setUint16(10, entries.length, true)
  end.setUint32(12, directorySize, true)
  end.setUint32(16, offset, true)
  return Buffer.concat([...parts, ...central, new Uint8Array(end.buffer)])
}

const CONTENT_TYPES = (main: string) =>
  '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n' +
  '<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">' +
  '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/>' +
  '<Default Extension="xml" ContentType="application/xml"/>' +
  `<Override PartName="/word/document.xml" ContentType="${main}"/>` +
  '</Types>'

const PACKAGE_RELS =
  '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n' +
  '<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">' +
  '<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/>' +
  '</Relationships>'

const DOCUMENT_OPEN =
  '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n' +
  '<w:document xmlns:w="http://schemas.openxmlformats.org/wordprocessingml/2006/main"><w:body>'
const DOCUMENT_CLOSE = '</w:body></w:document>'
const WORD_MAIN = 'application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml'

function paragraph(text: string): string {
  return `<w:p><w:r><w:t xml:space="preserve">${text.replace(/&/g, '&amp;').replace(/</g, '&lt;')}</w:t></w:r></w:p>`
}

/** The three parts a word processor needs: content types, the package relationship, the document. */
export function docxWithText(paragraphs: readonly string[], options: { deflate?: boolean } = {}): Bytes {
  return zipOf([
    { name: '[Content_Types].xml', data: CONTENT_TYPES(WORD_MAIN), deflate: options.deflate },
    { name: '_rels/.rels', data: PACKAGE_RELS, deflate: options.deflate },
    { name: 'word/document.xml', data: DOCUMENT_OPEN + paragraphs.map(paragraph).join('') + DOCUMENT_CLOSE, deflate: options.deflate },
  ])
}

/**
 * A DOCX whose document.xml inflates to about `uncompressedBytes` (well-formed, the same paragraph over and over)
 * from roughly a thousandth of that. One chunk is deflated once and ended with a full flush, which leaves a
 * byte-aligned block that does not refer back to earlier data, so repeating its bytes repeats the text; an empty
 * final block ends the stream. Nothing of the inflated size is ever held in memory here. `declaredSize` is what the
 * zip claims the part unpacks to (the truth unless given): a liar's bomb gets past a look at the directory.
 */
export function zipBombDocx(uncompressedBytes: number, options: { declaredSize?: number } = {}): Bytes {
  const chunk = encoder.encode(paragraph('All work and no play makes Jack a dull boy. ').repeat(16_384))
  const repeats = Math.max(1, Math.ceil(uncompressedBytes / chunk.length))
  const open = encoder.encode(DOCUMENT_OPEN)
  const close = encoder.encode(DOCUMENT_CLOSE)
  const flushed = (data: Uint8Array) => deflateRawSync(data, { finishFlush: constants.Z_FULL_FLUSH })
  const deflatedChunk = flushed(chunk)
  const parts = [flushed(open), ...Array.from({ length: repeats }, () => deflatedChunk), flushed(close), new Uint8Array([0x03, 0x00])]
  let crc = Bun.hash.crc32(open)
  for (let i = 0; i < repeats; i++) crc = Bun.hash.crc32(chunk, crc)
  crc = Bun.hash.crc32(close, crc)
  const size = options.declaredSize ?? open.length + repeats * chunk.length + close.length
  return zipOf([
    { name: '[Content_Types].xml', data: CONTENT_TYPES(WORD_MAIN) },
    { name: '_rels/.rels', data: PACKAGE_RELS },
    { name: 'word/document.xml', raw: { compressed: Buffer.concat(parts), size, crc } },
  ])
}

/** A DOCX whose document part is `xml` exactly as given (a DOCTYPE, entities, nesting: whatever a test needs). */
export function docxWithDocumentXml(xml: string, extra: readonly ZipEntry[] = []): Bytes {
  return zipOf([
    { name: '[Content_Types].xml', data: CONTENT_TYPES(WORD_MAIN) },
    { name: '_rels/.rels', data: PACKAGE_RELS },
    { name: 'word/document.xml', data: xml, deflate: true },
    ...extra,
  ])
}

/** The opening of a DOCX document part, to which a test adds its own DOCTYPE or body. */
export const WORD_DOCUMENT = { xmlDeclaration: '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n', open: DOCUMENT_OPEN.replace(/^<\?xml[^>]*>\n/, ''), close: DOCUMENT_CLOSE }

/**
 * A hand-written XLSX of one sheet whose shared strings part is `sharedStrings` exactly as given, the sheet's cell
 * A1 pointing at its first string: where a workbook's hostile XML would sit.
 */
export function xlsxWithSharedStrings(sharedStrings: string): Bytes {
  const types =
    '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types">' +
    '<Default Extension="rels" ContentType="application/vnd.openxmlformats-package.relationships+xml"/><Default Extension="xml" ContentType="application/xml"/>' +
    '<Override PartName="/xl/workbook.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sheet.main+xml"/>' +
    '<Override PartName="/xl/worksheets/sheet1.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.worksheet+xml"/>' +
    '<Override PartName="/xl/sharedStrings.xml" ContentType="application/vnd.openxmlformats-officedocument.spreadsheetml.sharedStrings+xml"/></Types>'
  const rels =
    '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">' +
    '<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="xl/workbook.xml"/></Relationships>'
  const workbook =
    '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<workbook xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" ' +
    'xmlns:r="http://schemas.openxmlformats.org/officeDocument/2006/relationships"><sheets><sheet name="Data" sheetId="1" r:id="rId1"/></sheets></workbook>'
  const workbookRels =
    '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships">' +
    '<Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/worksheet" Target="worksheets/sheet1.xml"/>' +
    '<Relationship Id="rId2" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/sharedStrings" Target="sharedStrings.xml"/></Relationships>'
  const sheet =
    '<?xml version="1.0" encoding="UTF-8" standalone="yes"?>\n<worksheet xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main">' +
    '<sheetData><row r="1"><c r="A1" t="s"><v>0</v></c></row></sheetData></worksheet>'
  return zipOf([
    { name: '[Content_Types].xml', data: types },
    { name: '_rels/.rels', data: rels },
    { name: 'xl/workbook.xml', data: workbook },
    { name: 'xl/_rels/workbook.xml.rels', data: workbookRels },
    { name: 'xl/sharedStrings.xml', data: sharedStrings },
    { name: 'xl/worksheets/sheet1.xml', data: sheet },
  ])
}

/**
 * A PDF of one page whose content stream is `streamBytes` deflated (FlateDecode) and whose objects are otherwise
 * as pdfWithText writes them, or as `objects` replaces them: for cyclic page trees and huge streams.
 */
export function pdfWithObjects(objects: readonly string[], streams: Record<number, Uint8Array> = {}): Bytes {
  const chunks: Uint8Array[] = [encoder.encode('%PDF-1.5\n')]
  let length = chunks[0]!.length
  const offsets: number[] = []
  const push = (data: Uint8Array | string) => {
    const bytes = bytesOf(data)
    chunks.push(bytes)
    length += bytes.length
  }
  objects.forEach((body, index) => {
    offsets.push(length)
    const stream = streams[index + 1]
    if (stream) {
      push(`${index + 1} 0 obj\n${body.replace('%LENGTH%', String(stream.length))}\nstream\n`)
      push(stream)
      push('\nendstream\nendobj\n')
    } else push(`${index + 1} 0 obj\n${body}\nendobj\n`)
  })
  const xref = length
  let tail = `xref\n0 ${objects.length + 1}\n0000000000 65535 f\r\n`
  for (const offset of offsets) tail += `${String(offset).padStart(10, '0')} 00000 n\r\n`
  tail += `trailer\n<< /Size ${objects.length + 1} /Root 1 0 R >>\nstartxref\n${xref}\n%%EOF\n`
  push(tail)
  return Buffer.concat(chunks)
}

/**
 * `size` bytes of deflate stream (zlib-wrapped, as FlateDecode wants) that inflate to repeated spaces, made without
 * ever holding the inflated bytes: a PDF stream bomb.
 */
export function deflatedSpaces(size: number): Uint8Array {
  const chunk = new Uint8Array(1024 * 1024).fill(0x20)
  const flushed = deflateRawSync(chunk, { finishFlush: constants.Z_FULL_FLUSH })
  const repeats = Math.ceil(size / chunk.length)
  // A zlib header (deflate, 32K window, no dictionary), the raw blocks, an empty final block; no Adler-32 trailer,
  // which pdf.js does not need to inflate the data.
  return Buffer.concat([new Uint8Array([0x78, 0x9c]), ...Array.from({ length: repeats }, () => flushed), new Uint8Array([0x03, 0x00])])
}

/** A workbook of named sheets, each a list of rows, written by exceljs. */
export async function xlsxWithSheets(sheets: Record<string, ReadonlyArray<ReadonlyArray<string | number>>>): Promise<Bytes> {
  const workbook = new ExcelJS.Workbook()
  for (const [name, rows] of Object.entries(sheets)) workbook.addWorksheet(name).addRows(rows.map((row) => [...row]))
  return new Uint8Array(await workbook.xlsx.writeBuffer())
}

/** The first bytes of a 64-bit Linux executable followed by junk: what a renamed program looks like. */
export function elfExecutable(): Bytes {
  const bytes = new Uint8Array(4096)
  bytes.set([0x7f, 0x45, 0x4c, 0x46, 0x02, 0x01, 0x01, 0x00])
  bytes.set([0x02, 0x00, 0x3e, 0x00, 0x01, 0x00, 0x00, 0x00], 16) // ET_EXEC, x86-64, version 1
  for (let i = 64; i < bytes.length; i++) bytes[i] = (i * 31) & 0xff
  return bytes
}

/** A Windows executable's DOS header with the PE signature it points at. */
export function peExecutable(): Bytes {
  const bytes = new Uint8Array(1024)
  bytes.set([0x4d, 0x5a]) // MZ
  new DataView(bytes.buffer).setUint32(0x3c, 0x80, true)
  bytes.set([0x50, 0x45, 0x00, 0x00, 0x4c, 0x01], 0x80) // PE\0\0, i386
  return bytes
}

/** The eight-byte PNG signature and an IHDR chunk: an image, whatever it is called. */
export function pngImage(): Bytes {
  return new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52, 0, 0, 0, 1, 0, 0, 0, 1, 8, 2, 0, 0, 0, 0x90, 0x77, 0x53, 0xde])
}

/** The compound-file header of a legacy (pre-2007) Word or Excel file. */
export function legacyOfficeFile(): Bytes {
  const bytes = new Uint8Array(1536)
  bytes.set([0xd0, 0xcf, 0x11, 0xe0, 0xa1, 0xb1, 0x1a, 0xe1])
  return bytes
}

/** A zip holding ordinary files: an archive, not an office document. */
export function plainZip(): Bytes {
  return zipOf([
    { name: 'readme.txt', data: 'Just an archive.' },
    { name: 'word/notes.txt', data: 'A folder that happens to be called word.' },
  ])
}
