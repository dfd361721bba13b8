import type { ArtifactMediaType } from '../db/schema.ts'
import { ApiError } from '../errors.ts'
import { sniffFileType } from '../documents/sniff.ts'

/** What an artifact may be, as a tool or a script names it, and the media type each is stored and served as. */
export const TEXT_KINDS = {
  text: 'text/plain',
  markdown: 'text/markdown',
  html: 'text/html',
  json: 'application/json',
  csv: 'text/csv',
} as const satisfies Record<string, ArtifactMediaType>

export const ARTIFACT_KINDS = [...(Object.keys(TEXT_KINDS) as Array<keyof typeof TEXT_KINDS>), 'image'] as const
export type ArtifactKind = (typeof ARTIFACT_KINDS)[number]

/**
 * Pictures are kept only as the four formats browsers show as plain images. SVG is refused: it is a document that
 * can carry script, and an HTML artifact (rendered sandboxed) can hold an inline <svg> instead.
 */
const IMAGE_TYPES = new Set<ArtifactMediaType>(['image/png', 'image/jpeg', 'image/gif', 'image/webp'])

export const ARTIFACT_MEDIA_TYPES: readonly ArtifactMediaType[] = [...Object.values(TEXT_KINDS), ...IMAGE_TYPES]

/** Text of any kind, in UTF-8 bytes: a page or a table that big is already more than anyone reads in a browser. */
export const MAX_TEXT_BYTES = 1024 * 1024
/** A picture, decoded. */
export const MAX_IMAGE_BYTES = 5 * 1024 * 1024

const BASE64 = /^[A-Za-z0-9+/]*={0,2}$/

function invalid(message: string, detail = `The content is not valid: ${message}.`): ApiError {
  return new ApiError('validation_error', detail, { errors: [{ path: 'content', message }] })
}

function tooLarge(limit: number, what: string): ApiError {
  return new ApiError('payload_too_large', `The ${what} is larger than ${limit / (1024 * 1024)} MiB, the most an artifact of this kind may be.`)
}

/** The picture base64 carries, judged by its bytes alone: whatever the caller calls it. */
async function judgeImage(content: string): Promise<{ mediaType: ArtifactMediaType; bytes: Uint8Array }> {
  const packed = content.replace(/\s+/g, '').replace(/^data:[^,]*;base64,/, '')
  if (!BASE64.test(packed) || packed.length % 4 === 1) throw invalid('an image is sent as base64')
  // Checked before decoding: a huge string is refused without making its bytes.
  if (Math.floor((packed.length * 3) / 4) > MAX_IMAGE_BYTES + 2) throw tooLarge(MAX_IMAGE_BYTES, 'image')
  const bytes = new Uint8Array(Buffer.from(packed, 'base64'))
  if (bytes.length === 0) throw invalid('the image is empty')
  if (bytes.length > MAX_IMAGE_BYTES) throw tooLarge(MAX_IMAGE_BYTES, 'image')
  const sniffed = await sniffFileType(bytes)
  const mime = sniffed?.mime === 'image/apng' ? 'image/png' : sniffed?.mime
  if (mime && IMAGE_TYPES.has(mime as ArtifactMediaType)) return { mediaType: mime as ArtifactMediaType, bytes }
  const what = sniffed ? `${sniffed.ext.toUpperCase()} (${sniffed.mime})` : 'not a picture format that could be recognised'
  const hint = /svg|xml/.test(sniffed?.mime ?? '') || /^\s*</.test(Buffer.from(bytes.subarray(0, 64)).toString('utf8')) ? ' For SVG, make an html artifact with the <svg> inline.' : ''
  throw new ApiError('unsupported_media_type', `An image artifact must be PNG, JPEG, GIF or WebP; this is ${what}.${hint}`)
}

/**
 * The stored form of what a caller sends: text kinds as UTF-8 (JSON must parse), images from base64 and judged by
 * their bytes. Refuses empty content, content over the caps (413) and pictures of other formats (415).
 */
export async function judgeContent(kind: ArtifactKind, content: string): Promise<{ mediaType: ArtifactMediaType; bytes: Uint8Array }> {
  if (kind === 'image') return judgeImage(content)
  if (content.length > MAX_TEXT_BYTES) throw tooLarge(MAX_TEXT_BYTES, 'text')
  const bytes = new TextEncoder().encode(content)
  if (bytes.length > MAX_TEXT_BYTES) throw tooLarge(MAX_TEXT_BYTES, 'text')
  if (content.trim() === '') throw invalid('it is empty')
  if (kind === 'json') {
    try {
      JSON.parse(content)
    } catch (error) {
      throw invalid(`it is not JSON (${(error as Error).message.slice(0, 120)})`)
    }
  }
  return { mediaType: TEXT_KINDS[kind], bytes }
}
