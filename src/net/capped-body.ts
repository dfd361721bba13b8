/**
 * A response's body, read only up to `maxBytes`: a declared length past it is refused before reading, and what
 * actually arrives is counted too, as the header may be absent or lie. Throws saying which file and how large.
 */
export async function cappedBody(response: Response, maxBytes: number, what: string): Promise<Uint8Array> {
  const tooLarge = () => new Error(`${what} is larger than ${maxBytes} bytes.`)
  if (Number(response.headers.get('content-length') ?? 0) > maxBytes) {
    await response.body?.cancel()
    throw tooLarge()
  }
  const chunks: Uint8Array[] = []
  let size = 0
  for await (const chunk of response.body ?? []) {
    size += chunk.length
    if (size > maxBytes) throw tooLarge()
    chunks.push(chunk)
  }
  return Buffer.concat(chunks)
}
