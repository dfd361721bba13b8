import { expect, test } from 'bun:test'
import { hasInvisibleCharacters, sanitizeFilename } from '../../src/documents/filename.ts'

test('a filename keeps its last path segment, without invisible characters, trimmed', () => {
  expect(sanitizeFilename('../../etc/passwd')).toBe('passwd')
  expect(sanitizeFilename('C:\\Users\\ada\\Quarterly report.pdf')).toBe('Quarterly report.pdf')
  expect(sanitizeFilename('  notes\u0000.txt \n')).toBe('notes.txt')
  // A right-to-left override would show "report\u202Efdp.exe" as "reportexe.pdf".
  expect(sanitizeFilename('report\u202efdp.exe')).toBe('reportfdp.exe')
  expect(hasInvisibleCharacters('report\u202efdp.exe')).toBe(true)
  expect(hasInvisibleCharacters('Zürich 東京.txt')).toBe(false)
})

test('at most 300 UTF-16 units, never half a character; nothing left is "document"', () => {
  expect(sanitizeFilename('a'.repeat(400))).toHaveLength(300)
  const emoji = `${'a'.repeat(299)}😀.txt`
  expect(sanitizeFilename(emoji)).toBe('a'.repeat(299))
  for (const empty of ['', '   ', '/', 'dir/', '..', '\u200b', undefined]) expect(sanitizeFilename(empty)).toBe('document')
})
