import { Readable } from 'node:stream'
import { CSV, DOCX, PDF, TXT, XLSX, type DocumentMediaType } from './media-types.ts'

/**
 * The text of one document, per type. Each reader may stop once it has more than `enough` characters: whatever
 * follows would be cut by the cap anyway, and a huge workbook or table then costs a fraction of its full read.
 * Libraries are imported on use, so reading a text file does not pay for loading the PDF reader.
 */
type Reader = (bytes: Uint8Array, enough: number) => Promise<string>

const readPdf: Reader = async (bytes) => {
  const { extractText, getDocumentProxy } = await import('unpdf')
  const pdf = await getDocumentProxy(bytes)
  return (await extractText(pdf, { mergePages: true })).text
}

const readDocx: Reader = async (bytes) => {
  const { default: mammoth } = await import('mammoth')
  return (await mammoth.extractRawText({ buffer: Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength) })).value
}

/** A cell as one line of text shows it: tabs and line breaks inside it would break the row apart. */
function cellText(cell: { value: unknown; text: string }): string {
  const value = cell.value
  // Date cells: the calendar date alone when there is no time of day, else the full ISO instant.
  const text = value instanceof Date ? value.toISOString().replace(/T00:00:00\.000Z$/, '') : cell.text
  return text.replace(/[\t\r\n]+/g, ' ')
}

/**
 * Every sheet under a `# name` heading, each row a tab-separated line. The streaming reader is used so that a large
 * workbook is read only as far as the cap (exceljs's in-memory load of a 6 MB workbook of a million cells takes
 * about 1 GB and 10 s; streamed, the first 200 KB take 165 MB and 1 s). It may park worksheets in TMPDIR until the
 * shared strings arrive; the caller gives it a directory of its own.
 */
const readXlsx: Reader = async (bytes, enough) => {
  const { default: ExcelJS } = await import('exceljs')
  const input = Readable.from([Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)])
  const workbook = new ExcelJS.stream.xlsx.WorkbookReader(input, { sharedStrings: 'cache', styles: 'cache', hyperlinks: 'ignore', worksheets: 'emit', entries: 'ignore' })
  const lines: string[] = []
  let length = 0
  for await (const sheet of workbook) {
    lines.push(`# ${(sheet as unknown as { name?: string }).name ?? 'Sheet'}`)
    for await (const row of sheet) {
      const cells: string[] = []
      row.eachCell({ includeEmpty: true }, (cell) => void cells.push(cellText(cell)))
      const line = cells.join('\t').trimEnd()
      lines.push(line)
      length += line.length + 1
      if (length > enough) return lines.join('\n')
    }
    lines.push('')
  }
  return lines.join('\n').trimEnd()
}

const decodeUtf8 = (bytes: Uint8Array) => new TextDecoder().decode(bytes)

/** Rows as tab-separated lines, like a workbook's, whatever the file's delimiter and quoting. */
const readCsv: Reader = async (bytes, enough) => {
  const { default: Papa } = await import('papaparse')
  const lines: string[] = []
  let length = 0
  Papa.parse<string[]>(decodeUtf8(bytes), {
    skipEmptyLines: true,
    delimitersToGuess: [',', '\t', ';', '|'],
    step: (row, parser) => {
      const line = row.data.map((cell) => cell.replace(/[\t\r\n]+/g, ' ')).join('\t')
      lines.push(line)
      length += line.length + 1
      if (length > enough) parser.abort()
    },
  })
  return lines.join('\n')
}

const readTxt: Reader = async (bytes) => decodeUtf8(bytes)

export const READERS: Record<DocumentMediaType, Reader> = { [PDF]: readPdf, [DOCX]: readDocx, [XLSX]: readXlsx, [CSV]: readCsv, [TXT]: readTxt }
