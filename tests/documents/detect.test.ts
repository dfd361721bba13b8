import { describe, expect, test } from 'bun:test'
import { detectDocumentType } from '../../src/documents/detect.ts'
import { DocumentError } from '../../src/documents/errors.ts'
import { CSV, DOCX, PDF, TXT, XLSX } from '../../src/documents/media-types.ts'
import {
  docxWithText,
  elfExecutable,
  legacyOfficeFile,
  pdfWithText,
  peExecutable,
  plainZip,
  pngImage,
  xlsxWithSheets,
  zipOf,
} from '../helpers/documents.ts'

const text = (s: string) => new TextEncoder().encode(s)

async function refusal(bytes: Uint8Array, filename: string): Promise<DocumentError> {
  const error = await detectDocumentType(bytes, filename).then(
    (type) => new Error(`${filename} was taken as ${type}`),
    (e: unknown) => e,
  )
  expect(error).toBeInstanceOf(DocumentError)
  return error as DocumentError
}

describe('the five accepted types, by their bytes', () => {
  test('PDF, DOCX and XLSX by their content, whatever they are called', async () => {
    expect(await detectDocumentType(pdfWithText(['Hello']), 'scan.bin')).toBe(PDF)
    expect(await detectDocumentType(docxWithText(['Hello'], { deflate: true }), 'letter.txt')).toBe(DOCX)
    expect(await detectDocumentType(await xlsxWithSheets({ Sheet1: [['a', 'b']] }), 'figures')).toBe(XLSX)
  })

  test('a consistent table of two or more columns is CSV, with any common delimiter', async () => {
    expect(await detectDocumentType(text('name,city\nAda,London\n"Hopper, Grace",New York\n'), 'people.txt')).toBe(CSV)
    expect(await detectDocumentType(text('name;city\nAda;London\n'), 'export')).toBe(CSV)
    expect(await detectDocumentType(text('name\tcity\nAda\tLondon\n'), 'export.dat')).toBe(CSV)
  })

  test('prose is TXT even with commas in it, and even when named .csv if it is no table', async () => {
    const prose = 'Dear team,\nthe report, which is late, arrives Monday.\nThanks, and see you.\n'
    expect(await detectDocumentType(text(prose), 'letter.txt')).toBe(TXT)
    expect(await detectDocumentType(text('Just one line without any delimiter at all\n'), 'data.csv')).toBe(TXT)
  })

  test('the name breaks a tie: one delimited line, or ragged rows, are CSV only when named .csv', async () => {
    expect(await detectDocumentType(text('a,b,c'), 'row.csv')).toBe(CSV)
    expect(await detectDocumentType(text('a,b,c'), 'row.txt')).toBe(TXT)
    expect(await detectDocumentType(text('a,b,c\n1,2\n3,4,5\n'), 'ragged.csv')).toBe(CSV)
    expect(await detectDocumentType(text('a,b,c\n1,2\n3,4,5\n'), 'ragged.txt')).toBe(TXT)
  })

  test('UTF-8 text in any script, with a byte-order mark or a stray control character, is text', async () => {
    expect(await detectDocumentType(text('\ufeffZürich, 東京 and Кыïв — notes.\n'), 'notes.txt')).toBe(TXT)
    expect(await detectDocumentType(text(`${'A line of an old DOS file.\n'.repeat(100)}\u001a`), 'old.txt')).toBe(TXT)
    expect(await detectDocumentType(text('<?xml version="1.0"?><note>Hi</note>'), 'note.xml')).toBe(TXT)
  })
})

describe('everything else is refused, whatever its name', () => {
  test('a Linux program named report.pdf', async () => {
    const error = await refusal(elfExecutable(), 'report.pdf')
    expect(error.kind).toBe('unsupported')
    expect(error.message).toContain('program')
    expect(error.message).toContain('PDF, DOCX, XLSX, TXT or CSV')
  })

  test('a Windows program named notes.txt', async () => {
    expect((await refusal(peExecutable(), 'notes.txt')).kind).toBe('unsupported')
  })

  test('an image, a legacy .doc, a plain zip named .docx', async () => {
    expect((await refusal(pngImage(), 'photo.txt')).message).toContain('PNG image')
    expect((await refusal(legacyOfficeFile(), 'old.doc')).message).toContain('before 2007')
    expect((await refusal(plainZip(), 'report.docx')).message).toContain('ZIP archive')
  })

  test('a zip that claims to be a DOCX in its content types but lacks the document part', async () => {
    const hollow = zipOf([
      {
        name: '[Content_Types].xml',
        data: '<Types><Override PartName="/word/document.xml" ContentType="application/vnd.openxmlformats-officedocument.wordprocessingml.document.main+xml"/></Types>',
      },
      { name: 'word/evil.sh', data: '#!/bin/sh\nrm -rf /\n' },
    ])
    const error = await refusal(hollow, 'report.docx')
    expect(error.kind).toBe('unsupported')
    expect(error.message).toContain('not a complete Office document')
  })

  test('binary junk, UTF-16 text and invalid UTF-8', async () => {
    const junk = new Uint8Array(2048).map((_, i) => (i * 7919) % 251)
    expect((await refusal(junk, 'data.txt')).message).toContain('UTF-8')
    expect((await refusal(new Uint8Array(Buffer.from('\ufeffHello', 'utf16le')), 'utf16.txt')).kind).toBe('unsupported')
    expect((await refusal(new Uint8Array([0x48, 0x69, 0xc3, 0x28]), 'bad.txt')).kind).toBe('unsupported')
  })

  test('text full of control characters is not text', async () => {
    const garbage = text('abc\u0001\u0002\u0003def\u0004\u0005\u0006'.repeat(50))
    expect((await refusal(garbage, 'log.txt')).kind).toBe('unsupported')
  })

  test('an empty file is unreadable, not a type', async () => {
    const error = await refusal(new Uint8Array(0), 'empty.txt')
    expect(error.kind).toBe('unreadable')
    expect(error.message).toContain('empty')
  })
})
