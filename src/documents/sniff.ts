import type { FileTypeResult } from 'file-type'

/**
 * What a file's bytes say it is (its magic numbers, read by file-type), whatever its name claims. file-type loads
 * with the first file judged rather than at start-up, where it took 22-25 ms.
 */
export async function sniffFileType(bytes: Uint8Array): Promise<FileTypeResult | undefined> {
  const { fileTypeFromBuffer } = await import('file-type')
  return fileTypeFromBuffer(bytes)
}
