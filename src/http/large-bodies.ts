import type { Context, MiddlewareHandler } from 'hono'

/**
 * Bodies from this size on leave as a one-piece stream. Bun 1.4 writes an answer given after an await through a
 * 16 KiB cork buffer; one that does not fit (headers and body) goes out a header at a time, and waits between
 * writes: a 16 KB JSON answer with a dozen headers served 3,900 requests a second where one of 14 KB served 69,000.
 * A streamed body is written after the headers in one piece, whatever its size (45,000 a second at 36 KB). Below
 * this size the answer fits whatever headers it has, and is left as it is.
 */
export const STREAM_FROM_BYTES = 8 * 1024

/** Pages and files made whole before they are sent, which may be read again here (never a stream of events). */
const WHOLE = /^text\/(?:html|csv|markdown)(?:;|$)/

const encoder = new TextEncoder()

/**
 * Sends large answers as streams (chunked) instead of fixed-length bodies, for the reason above. JSON is judged as
 * it is written (the context's json() measures the text it makes, so a small answer costs nothing more); pages,
 * CSV and Markdown once made, by reading them again. Outermost, so every answer passes it.
 */
export function streamLargeBodies(): MiddlewareHandler {
  return async (c, next) => {
    measureJson(c)
    await next()
    const answer = c.res
    // The type first: reading `body` makes a stream of it, which cost a bare Bun server 5 % of its JSON answers a second.
    if (!WHOLE.test(answer.headers.get('content-type') ?? '') || !answer.body) return
    const bytes = await answer.bytes()
    // Unset first: Hono would otherwise copy the old answer's headers onto the new one, which has them already.
    c.res = undefined
    c.res = new Response(bytes.byteLength >= STREAM_FROM_BYTES ? onePiece(bytes) : bytes, answer)
  }
}

/** The context's json(), as Hono writes it, with a large text handed over as a stream. */
function measureJson(c: Context): void {
  const body = c.body as (data: string | ReadableStream | undefined, arg?: number | ResponseInit, headers?: Record<string, string>) => Response
  c.json = ((object: unknown, arg?: number | ResponseInit, headers?: Record<string, string>) => {
    // Undefined makes no text, and an empty body, as Hono's own json() gives.
    const text = JSON.stringify(object) as string | undefined
    // A character is at most three bytes: below a third of the size no text can reach it.
    const bytes = text && text.length * 3 >= STREAM_FROM_BYTES ? encoder.encode(text) : undefined
    return body(bytes && bytes.byteLength >= STREAM_FROM_BYTES ? onePiece(bytes) : text, arg, { 'Content-Type': 'application/json', ...headers })
  }) as unknown as Context['json']
}

function onePiece(bytes: Uint8Array): ReadableStream<Uint8Array> {
  return new ReadableStream({
    start(controller) {
      controller.enqueue(bytes)
      controller.close()
    },
  })
}
