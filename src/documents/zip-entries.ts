const END_OF_DIRECTORY = 0x06054b50
const DIRECTORY_ENTRY = 0x02014b50
// The end record is 22 bytes plus a comment of at most 65 535.
const END_SEARCH = 22 + 0xffff

export interface ZipEntry {
  name: string
  /** The sizes the directory declares; 0xffffffff means a zip64 size stored elsewhere. */
  compressedSize: number
  size: number
}

/**
 * The entries of a zip's central directory, or undefined when the bytes hold no readable directory. Only the
 * directory is read, never an entry's data, so a compressed bomb costs nothing here. The sizes are what the
 * archive claims: a liar is caught by the reader's memory cap, an honest bomb already here.
 */
export function zipEntries(bytes: Uint8Array): ZipEntry[] | undefined {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  let end = -1
  for (let at = bytes.length - 22; at >= Math.max(0, bytes.length - END_SEARCH); at--) {
    if (view.getUint32(at, true) === END_OF_DIRECTORY) {
      end = at
      break
    }
  }
  if (end < 0) return undefined
  const count = view.getUint16(end + 10, true)
  let at = view.getUint32(end + 16, true)
  const entries: ZipEntry[] = []
  const decoder = new TextDecoder()
  for (let i = 0; i < count; i++) {
    if (at + 46 > end || view.getUint32(at, true) !== DIRECTORY_ENTRY) return undefined
    const nameLength = view.getUint16(at + 28, true)
    const extraLength = view.getUint16(at + 30, true)
    const commentLength = view.getUint16(at + 32, true)
    if (at + 46 + nameLength > end) return undefined
    entries.push({
      name: decoder.decode(bytes.subarray(at + 46, at + 46 + nameLength)),
      compressedSize: view.getUint32(at + 20, true),
      size: view.getUint32(at + 24, true),
    })
    at += 46 + nameLength + extraLength + commentLength
  }
  return entries
}

export function zipEntryNames(bytes: Uint8Array): string[] | undefined {
  return zipEntries(bytes)?.map((entry) => entry.name)
}
