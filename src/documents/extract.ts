import { mkdtemp, rm } from 'node:fs/promises'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { DocumentError } from './errors.ts'
import { DOCUMENT_NAMES, type DocumentMediaType } from './media-types.ts'
import { watchMemory, watchScratch } from './watchdogs.ts'
import { Slots, type Holder } from './slots.ts'
import type { Sandbox } from '../mcp/sandbox.ts'
import { EXTRACTED_TEXT_CAP, KB } from './text-cap.ts'

export interface ExtractionLimits {
  /** Wall-clock time the reading may take, start-up of the reader included. */
  timeoutMs: number
  /** Resident memory the reader may use (see watchdogs.ts for why this is a watchdog). */
  memoryBytes: number
  /** What the reader may write to its scratch directory. */
  scratchBytes: number
  /** The extracted text is cut to this many UTF-8 bytes. */
  maxTextBytes: number
  /** The program that reads; tests put a misbehaving one here. */
  worker: string
  /**
   * The platform's sandbox, as for stdio MCP servers: the reader then sees no network, no data directory and no
   * key file, only the program and its scratch folder. Without one (the operator opted out) it runs as it is.
   */
  sandbox?: Pick<Sandbox, 'enabled' | 'wrap'>
}

/** Where a sandboxed reader finds its scratch folder. */
const SCRATCH_INSIDE = '/tmp/scratch'

export const DEFAULT_LIMITS: ExtractionLimits = {
  timeoutMs: 20_000,
  // Measured: Bun with the libraries ~60 MB; mammoth on a 600-page DOCX 250 MB; a streamed 6 MB workbook 165 MB.
  memoryBytes: 512 * 1024 * 1024,
  scratchBytes: 256 * 1024 * 1024,
  maxTextBytes: EXTRACTED_TEXT_CAP,
  worker: join(import.meta.dir, 'extract-worker.ts'),
}

export interface Extracted {
  text: string
  /** The text was cut at maxTextBytes. */
  truncated: boolean
}

// Each reader may take up to its memory cap: a burst of uploads queues rather than adding up, and past a short
// line the upload is refused as busy (503) rather than held. One person may have two documents in the line and
// one company four, and a free reader goes to the company reading least, so nobody's flood holds up the others.
const readers = new Slots(2, 16, { person: 2, company: 4 })
/** Readers running now: a child is its own process, and would outlive this one unless killed when it stops. */
const running = new Set<Bun.Subprocess>()

/** Kills every reader still running (the platform is stopping). */
export function stopExtractions(): void {
  for (const child of running) child.kill('SIGKILL')
  running.clear()
}

/**
 * The text of a document whose type has been judged by its bytes, read in a child process of its own: the bytes go
 * in on stdin, the result comes back as JSON on stdout. A hostile or huge file can only make that child slow or
 * big, and it is killed at the time limit or the memory cap; this process never parses the document. The child
 * gets no environment (no secrets) and a scratch directory that is removed afterwards.
 */
export function extractText(bytes: Uint8Array, type: DocumentMediaType, limits: Partial<ExtractionLimits> = {}, holder?: Holder): Promise<Extracted> {
  const settings = { ...DEFAULT_LIMITS, ...limits }
  return readers.run(() => runReader(bytes, type, settings), holder)
}

// Text of 200 KB is at most 1.2 MB of JSON (a control character escapes to six bytes); more is not a reader's answer.
const maxOutputBytes = (limits: ExtractionLimits) => limits.maxTextBytes * 6 + 64 * KB

type StopReason = 'timeout' | 'memory' | 'scratch' | 'output'

async function runReader(bytes: Uint8Array, type: DocumentMediaType, limits: ExtractionLimits): Promise<Extracted> {
  const scratch = await mkdtemp(join(tmpdir(), 'switchboard-extract-'))
  let stopped: StopReason | undefined
  const sandboxed = limits.sandbox?.enabled === true
  const args = [limits.worker, type, String(limits.maxTextBytes)]
  const program = sandboxed ? limits.sandbox!.wrap(process.execPath, args, { network: false, binds: [{ host: scratch, inside: SCRATCH_INSIDE }] }) : { command: process.execPath, args }
  const child = Bun.spawn([program.command, ...program.args], {
    cwd: scratch,
    env: { TMPDIR: sandboxed ? SCRATCH_INSIDE : scratch },
    stdin: bytes,
    stdout: 'pipe',
    stderr: 'ignore',
  })
  const stop = (reason: StopReason) => {
    stopped ??= reason
    child.kill('SIGKILL')
  }
  running.add(child)
  const timer = setTimeout(() => stop('timeout'), limits.timeoutMs)
  // The sandbox's processes are the child's descendants: the cap is on all of them together.
  const unwatch = watchMemory(child.pid, limits.memoryBytes, () => stop('memory'))
  const unwatchScratch = watchScratch(scratch, limits.scratchBytes, () => stop('scratch'))
  try {
    const output = await readCapped(child.stdout, maxOutputBytes(limits), () => stop('output'))
    await child.exited
    if (stopped) throw stoppedError(stopped, type, limits)
    return parseAnswer(output, type)
  } finally {
    clearTimeout(timer)
    unwatch()
    unwatchScratch()
    child.kill('SIGKILL')
    running.delete(child)
    await rm(scratch, { recursive: true, force: true })
  }
}

/** The child's stdout up to `max` bytes; past that, `onOver` is called and the rest is not read. */
async function readCapped(stream: ReadableStream<Uint8Array>, max: number, onOver: () => void): Promise<string> {
  const chunks: Uint8Array[] = []
  let size = 0
  for await (const chunk of stream) {
    size += chunk.length
    if (size > max) {
      onOver()
      break
    }
    chunks.push(chunk)
  }
  return Buffer.concat(chunks).toString('utf8')
}

function stoppedError(reason: StopReason, type: DocumentMediaType, limits: ExtractionLimits): DocumentError {
  switch (reason) {
    case 'timeout':
      return new DocumentError('timeout', `Reading this document took longer than ${seconds(limits.timeoutMs)}, so it was stopped. Try a smaller file, or split it.`)
    case 'memory':
      return new DocumentError('memory', `Reading this document needed more than ${Math.round(limits.memoryBytes / 1024 / 1024)} MB of memory, so it was stopped. Try a smaller file, or split it.`)
    case 'scratch':
      return new DocumentError('memory', `Reading this document needed more than ${Math.round(limits.scratchBytes / 1024 / 1024)} MB of scratch space, so it was stopped. Try a smaller file, or split it.`)
    case 'output':
      return unreadable(type, 'the reader gave more output than any document’s text may take')
  }
}

function seconds(ms: number): string {
  return ms >= 1000 ? `${Math.round(ms / 100) / 10} s` : `${ms} ms`
}

function parseAnswer(output: string, type: DocumentMediaType): Extracted {
  let answer: { text?: unknown; truncated?: unknown; error?: unknown }
  // The answer is one line; whatever follows it is not part of it.
  const end = output.indexOf('\n')
  try {
    answer = JSON.parse(end < 0 ? output : output.slice(0, end))
  } catch {
    // No answer at all: the reader crashed (a library aborting on hostile input is one way).
    throw unreadable(type, 'the reader stopped without an answer')
  }
  if (typeof answer.error === 'string') throw unreadable(type, answer.error)
  if (typeof answer.text !== 'string') throw unreadable(type, 'the reader gave no text')
  return { text: answer.text, truncated: answer.truncated === true }
}

function unreadable(type: DocumentMediaType, reason: string): DocumentError {
  return new DocumentError('unreadable', `This file could not be read as ${DOCUMENT_NAMES[type]}: ${reason.replace(/\.+$/, '')}.`)
}
