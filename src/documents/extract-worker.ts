/**
 * The child process that reads one document: `bun extract-worker.ts <media type> <cap in bytes>`, the document's
 * bytes on stdin, one JSON line on stdout: `{ "text", "truncated" }` or `{ "error" }`. It is run by extract.ts,
 * which kills it when it takes too long or too much memory, so nothing here guards against hostile input; the
 * libraries run as they are.
 */
import { isDocumentMediaType } from './media-types.ts'
import { READERS } from './readers.ts'
import { capUtf8 } from './text-cap.ts'

// NUL cannot be stored in a PostgreSQL text column; the other controls are noise to a model. Tabs, line feeds and
// carriage returns stay (the last become line feeds).
const UNWANTED = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/g

function firstLine(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error)
  return (message.split('\n')[0] || 'no reason given').slice(0, 300)
}

async function main(): Promise<object> {
  const [type, cap] = [process.argv[2] ?? '', Number(process.argv[3])]
  if (!isDocumentMediaType(type) || !(cap > 0)) return { error: `bad arguments: ${process.argv.slice(2).join(' ')}` }
  const bytes = await Bun.stdin.bytes()
  try {
    const text = (await READERS[type](bytes, cap)).replace(/\r\n?/g, '\n').replace(UNWANTED, '').trim()
    return capUtf8(text, cap)
  } catch (error) {
    return { error: firstLine(error) }
  }
}

const answer = `${JSON.stringify(await main())}\n`
// Through process.stdout, waiting for the write to finish: Bun.write(Bun.stdout) to a pipe the parent drains
// slowly was seen to emit the answer twice after exceljs's streams had run. Then exit: a reader stopped early may
// leave streams open, and the answer is out.
process.stdout.write(answer, () => process.exit(0))
