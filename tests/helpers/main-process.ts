import { until } from './until.ts'

/** A platform started as `npm start` starts it, once it has printed both addresses. */
export interface Started {
  api: string
  admin: string
  /** Everything it printed so far; it keeps reading. */
  output: () => string
}

/** Reads a child's output in the background (so the child never blocks on a full pipe): what it said so far, and its end. */
export function collect(stream: ReadableStream): { text: () => string; ended: Promise<void> } {
  let text = ''
  const ended = (async () => {
    try {
      for await (const chunk of stream.pipeThrough(new TextDecoderStream())) text += chunk
    } catch {
      // A pipe that breaks ends the output like a closed one: what was read is all there is.
    }
  })()
  return { text: () => text, ended }
}

const API_LINE = /API and docs\s+(\S+)/

/**
 * Reads a started platform's output until it prints its addresses, then goes on reading. A server that stops
 * first, or says nothing for `timeoutMs`, fails the start with what it printed.
 */
export async function untilReady(child: Bun.Subprocess<'ignore', 'pipe', 'pipe'>, { timeoutMs = 30_000 } = {}): Promise<Started> {
  const stdout = collect(child.stdout)
  // The log (a line per request) goes to stderr: read from the start, or a full pipe would stall the server.
  const stderr = collect(child.stderr)
  let stopped = false
  void stdout.ended.then(() => (stopped = true))
  try {
    await until(() => stopped || API_LINE.test(stdout.text()), { what: 'the server to print its addresses', timeoutMs })
  } catch (error) {
    // A server that hangs at start would otherwise outlive the test, holding its data directory.
    child.kill('SIGKILL')
    throw new Error(`${(error as Error).message} It printed:\n${stdout.text()}${stderr.text()}`)
  }
  if (!API_LINE.test(stdout.text())) {
    await stderr.ended
    throw new Error(`the server stopped before it was ready:\n${stdout.text()}${stderr.text()}`)
  }
  const output = stdout.text()
  return {
    admin: /Admin console\s+(\S+)/.exec(output)![1]!.replace(/\/$/, ''),
    api: API_LINE.exec(output)![1]!.replace(/\/api\/docs$/, ''),
    output: () => `${stdout.text()}${stderr.text()}`,
  }
}
