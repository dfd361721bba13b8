import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { DocumentError } from '../../src/documents/errors.ts'
import { DEFAULT_LIMITS, stopExtractions, extractText, type ExtractionLimits } from '../../src/documents/extract.ts'
import { CSV, DOCX, PDF, TXT, XLSX, type DocumentMediaType } from '../../src/documents/media-types.ts'
import { EXTRACTED_TEXT_CAP } from '../../src/documents/text-cap.ts'
import { docxWithText, pdfWithText, xlsxWithSheets, zipBombDocx, zipOf } from '../helpers/documents.ts'
import { until } from '../helpers/until.ts'
import { Sandbox } from '../../src/mcp/sandbox.ts'
import { HAS_BWRAP } from '../helpers/platform.ts'

const text = (s: string) => new TextEncoder().encode(s)
const MiB = 1024 * 1024

async function failure(bytes: Uint8Array, type: DocumentMediaType, limits: Partial<ExtractionLimits> = {}): Promise<DocumentError> {
  const error = await extractText(bytes, type, limits).then(
    () => new Error('the extraction succeeded'),
    (e: unknown) => e,
  )
  expect(error).toBeInstanceOf(DocumentError)
  return error as DocumentError
}

describe('the text of each accepted type', () => {
  test('PDF: the text objects of a hand-written PDF', async () => {
    const result = await extractText(pdfWithText(['Quarterly revenue grew by 12 percent.', 'Costs (in EUR) fell.']), PDF)
    expect(result.text).toContain('Quarterly revenue grew by 12 percent.')
    expect(result.text).toContain('Costs (in EUR) fell.')
    expect(result.truncated).toBe(false)
  })

  test('DOCX: its paragraphs, stored or deflated', async () => {
    for (const deflate of [false, true]) {
      const result = await extractText(docxWithText(['The migration plan is ready.', 'Tom & Jerry <3'], { deflate }), DOCX)
      expect(result.text).toContain('The migration plan is ready.')
      expect(result.text).toContain('Tom & Jerry <3')
    }
  })

  test('XLSX: every sheet under its name, each row a tab-separated line', async () => {
    const workbook = await xlsxWithSheets({ Budget: [['Item', 'Cost'], ['Coffee beans', 42]], Staff: [['Name', 'Role'], ['Ada Lovelace', 'Analyst']] })
    const { text: extracted } = await extractText(workbook, XLSX)
    expect(extracted).toContain('# Budget\nItem\tCost\nCoffee beans\t42')
    expect(extracted).toContain('# Staff\nName\tRole\nAda Lovelace\tAnalyst')
  })

  test('CSV: rows as tab-separated lines, quoting resolved', async () => {
    const { text: extracted } = await extractText(text('name,city\nAda,London\n"Hopper, Grace",New York\n'), CSV)
    expect(extracted).toBe('name\tcity\nAda\tLondon\nHopper, Grace\tNew York')
  })

  test('TXT: as it is, line endings made plain and NUL-free', async () => {
    const { text: extracted } = await extractText(text('\ufeffFirst line\r\nSecond line, with ü and 東京\r\n'), TXT)
    expect(extracted).toBe('First line\nSecond line, with ü and 東京')
  })
})

describe('the 200 KB cap', () => {
  test('a 300 KB text file keeps its first 200 KB (UTF-8 bytes), cut between characters, and says so', async () => {
    const long = '東京 Ωμέγα '.repeat(17_100)
    expect(Buffer.byteLength(long)).toBeGreaterThan(300 * 1024)
    // Cut at exactly 200 KB, this text would end in half a character.
    expect(Buffer.from(long).subarray(0, EXTRACTED_TEXT_CAP).toString()).toEndWith('\ufffd')
    const result = await extractText(text(long), TXT)
    expect(result.truncated).toBe(true)
    expect(Buffer.byteLength(result.text)).toBeLessThanOrEqual(EXTRACTED_TEXT_CAP)
    expect(Buffer.byteLength(result.text)).toBeGreaterThan(EXTRACTED_TEXT_CAP - 4)
    expect(long.startsWith(result.text)).toBe(true)
    expect(result.text).not.toContain('\ufffd')
  })

  test('a workbook far larger than the cap is read only as far as the cap', async () => {
    const rows = Array.from({ length: 20_000 }, (_, i) => [`row ${i}`, 'a cell with some words in it', i])
    const result = await extractText(await xlsxWithSheets({ Data: rows }), XLSX)
    expect(result.truncated).toBe(true)
    expect(result.text).toStartWith('# Data\nrow 0\ta cell with some words in it\t0')
    expect(Buffer.byteLength(result.text)).toBeLessThanOrEqual(EXTRACTED_TEXT_CAP)
  })
})

describe('damaged files are refused with a message a person can act on', () => {
  test('a corrupt PDF', async () => {
    const error = await failure(text('%PDF-1.7\n1 0 obj << /Type /Catalog >> garbage without xref'), PDF)
    expect(error.kind).toBe('unreadable')
    expect(error.message).toStartWith('This file could not be read as a PDF: ')
  })

  test('a DOCX package without a document part, and a truncated one', async () => {
    const hollow = zipOf([{ name: '[Content_Types].xml', data: '<Types/>' }])
    expect((await failure(hollow, DOCX)).message).toStartWith('This file could not be read as a Word document (DOCX): ')
    const whole = docxWithText(['Some text'], { deflate: true })
    expect((await failure(whole.subarray(0, whole.length / 2), DOCX)).kind).toBe('unreadable')
  })
})

describe('isolation: limits on time and memory, enforced on a child process', () => {
  let dir: string
  const script = (name: string, source: string) => {
    const path = join(dir, `${name}-${Bun.randomUUIDv7()}.ts`)
    writeFileSync(path, source)
    return path
  }
  /** Whether any process is still running `path`. */
  const running = (path: string) =>
    readdirSync('/proc')
      .filter((entry) => /^\d+$/.test(entry))
      .some((pid) => {
        try {
          return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(path)
        } catch {
          return false
        }
      })

  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'switchboard-workers-'))
  })
  afterAll(() => rmSync(dir, { recursive: true, force: true }))

  test('a reader that hangs is killed at the time limit (20 s unless told otherwise)', async () => {
    expect(DEFAULT_LIMITS.timeoutMs).toBe(20_000)
    const hanging = script('hanging', 'await Bun.stdin.bytes()\nwhile (true) {}\n')
    const started = performance.now()
    const error = await failure(text('hello'), TXT, { worker: hanging, timeoutMs: 1_000 })
    expect(error.kind).toBe('timeout')
    expect(error.message).toBe('Reading this document took longer than 1 s, so it was stopped. Try a smaller file, or split it.')
    expect(performance.now() - started).toBeLessThan(5_000)
    expect(running(hanging)).toBe(false)
  })

  test('a reader that fills its scratch directory (a zip bomb spooled to disk) is killed at the scratch cap', async () => {
    const spooling = script('spooling', "await Bun.stdin.bytes()\nconst chunk = new Uint8Array(1024 * 1024)\nconst file = Bun.file(process.env.TMPDIR + '/spool').writer()\nfor (;;) { file.write(chunk); await file.flush(); await Bun.sleep(1) }\n")
    const error = await failure(text('hello'), TXT, { worker: spooling, scratchBytes: 8 * 1024 * 1024, timeoutMs: 15_000 })
    expect(error.kind).toBe('memory')
    expect(error.message).toBe('Reading this document needed more than 8 MB of scratch space, so it was stopped. Try a smaller file, or split it.')
    expect(running(spooling)).toBe(false)
  })

  test('stopping the platform kills the readers still running', async () => {
    const sleeping = script('left-running', 'await new Promise(() => setInterval(() => {}, 1000))\n')
    const pending = failure(text('hello'), TXT, { worker: sleeping, timeoutMs: 15_000 })
    await until(() => running(sleeping), { what: 'the reader to start' })
    stopExtractions()
    await pending
    expect(running(sleeping)).toBe(false)
  })

  test('a reader that waits forever without using the processor is killed as well', async () => {
    const sleeping = script('sleeping', 'await new Promise(() => setInterval(() => {}, 1000))\n')
    expect((await failure(text('hello'), TXT, { worker: sleeping, timeoutMs: 300 })).message).toContain('longer than 300 ms')
    expect(running(sleeping)).toBe(false)
  })

  test('a DOCX that inflates to 1 GiB is stopped at the memory cap, and this process carries on', async () => {
    const bomb = zipBombDocx(1024 * MiB)
    expect(bomb.length).toBeLessThan(10 * MiB)
    const before = process.memoryUsage().rss
    const started = performance.now()
    const error = await failure(bomb, DOCX, { memoryBytes: 256 * MiB })
    expect(error.kind).toBe('memory')
    expect(error.message).toBe('Reading this document needed more than 256 MB of memory, so it was stopped. Try a smaller file, or split it.')
    // Unlimited, mammoth takes over 5 GB and 16 s for a sixteenth of this bomb (measured).
    expect(performance.now() - started).toBeLessThan(15_000)
    expect(process.memoryUsage().rss - before).toBeLessThan(200 * MiB)
    // The next document is read as usual.
    expect((await extractText(docxWithText(['Still here.']), DOCX)).text).toBe('Still here.')
  })

  test('a reader that crashes without an answer is an unreadable file, not a failure of the platform', async () => {
    const crashing = script('crashing', 'process.abort()\n')
    const error = await failure(text('hello'), TXT, { worker: crashing })
    expect(error.kind).toBe('unreadable')
    expect(error.message).toBe('This file could not be read as a text file: the reader stopped without an answer.')
  })

  test('a reader that floods its output is cut off', async () => {
    const flooding = script('flooding', 'const line = "x".repeat(65536)\nwhile (true) await Bun.write(Bun.stdout, line)\n')
    const error = await failure(text('hello'), TXT, { worker: flooding, maxTextBytes: 1024 })
    expect(error.kind).toBe('unreadable')
    expect(running(flooding)).toBe(false)
  })

  test('the reader gets no environment, and a scratch directory that is removed afterwards', async () => {
    const telling = script(
      'telling',
      'await Bun.stdin.bytes()\nconsole.log(JSON.stringify({ text: JSON.stringify({ env: process.env, cwd: process.cwd() }), truncated: false }))\n',
    )
    const { text: told } = await extractText(text('hello'), TXT, { worker: telling })
    const { env, cwd } = JSON.parse(told) as { env: Record<string, string>; cwd: string }
    expect(env.TMPDIR).toBe(cwd)
    expect(Object.keys(env)).toEqual(['TMPDIR'])
    expect(existsSync(cwd)).toBe(false)
  })
})

// The reader runs under the same bubblewrap policy as stdio MCP servers, without network: a hostile document that
// takes over the reader finds no data directory, no key file and no network, only its scratch folder.
describe.skipIf(!HAS_BWRAP)('the reader in the platform’s sandbox', () => {
  const REPO = join(import.meta.dir, '..', '..')
  // In the install folder, as the default ./data is: the sandbox shows that folder, so it must hide this one.
  const dataDir = mkdtempSync(join(REPO, '.reader-test-data-'))
  const probe = join(REPO, `.reader-probe-${Bun.randomUUIDv7()}.ts`)
  const host = Bun.serve({ hostname: '127.0.0.1', port: 0, fetch: () => new Response('host reached') })
  const sandbox = new Sandbox({ mode: 'bwrap', dataDir })

  beforeAll(() => {
    writeFileSync(join(dataDir, 'master.key'), 'the-master-key')
    // What a reader taken over by its document could try; it answers with what it got, as its text.
    writeFileSync(
      probe,
      `const ask = JSON.parse(await Bun.stdin.text())
const attempt = async (action) => { try { return 'ok: ' + String(await action()).slice(0, 100) } catch (error) { return 'refused: ' + (error.code ?? error.name) } }
const fs = await import('node:fs')
const report = {
  key: await attempt(() => fs.readFileSync(ask.key, 'utf8')),
  data: await attempt(() => fs.readdirSync(ask.data).join(',')),
  network: await attempt(async () => (await fetch(ask.url, { signal: AbortSignal.timeout(2000) })).text()),
  scratch: await attempt(() => { fs.writeFileSync(process.env.TMPDIR + '/spool', 'x'); return 'written' }),
}
console.log(JSON.stringify({ text: JSON.stringify(report), truncated: false }))
`,
    )
  })
  afterAll(() => {
    host.stop(true)
    rmSync(dataDir, { recursive: true, force: true })
    rmSync(probe, { force: true })
  })

  const ask = () => text(JSON.stringify({ key: join(dataDir, 'master.key'), data: dataDir, url: `http://127.0.0.1:${host.port}/` }))

  test('it reads neither the key file nor the data directory, reaches no network, and writes only its scratch folder', async () => {
    const report = JSON.parse((await extractText(ask(), TXT, { worker: probe, sandbox })).text)
    expect(report.key).toStartWith('refused')
    expect(report.data).toBe('ok: ')
    expect(report.network).toStartWith('refused')
    expect(report.scratch).toBe('ok: written')
    // The same reader unsandboxed reaches all of it: the refusals above are the sandbox's.
    const bare = JSON.parse((await extractText(ask(), TXT, { worker: probe })).text)
    expect(bare.key).toBe('ok: the-master-key')
    expect(bare.network).toBe('ok: host reached')
  })

  test('its memory is capped though it runs as a grandchild, and real documents read as before', async () => {
    const error = await failure(zipBombDocx(1024 * MiB), DOCX, { memoryBytes: 256 * MiB, sandbox })
    expect(error.kind).toBe('memory')
    expect((await extractText(docxWithText(['Read in the sandbox.']), DOCX, { sandbox })).text).toBe('Read in the sandbox.')
  })
})
