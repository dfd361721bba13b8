import { sniffFileType } from '../../documents/sniff.ts'

/** The pictures an avatar may be, by media type, with the extension its address gets. */
export const AVATAR_EXTENSIONS = { 'image/png': 'png', 'image/jpeg': 'jpg', 'image/gif': 'gif', 'image/webp': 'webp' } as const
export type AvatarMediaType = keyof typeof AVATAR_EXTENSIONS
export const AVATAR_MEDIA_TYPES = Object.keys(AVATAR_EXTENSIONS) as AvatarMediaType[]

/** The largest picture accepted, in pixels each way: an avatar is shown small, and a huge one only costs decoding. */
export const MAX_AVATAR_SIDE = 4096

export interface Dimensions {
  width: number
  height: number
}

/**
 * The picture's type judged by its bytes alone (a script named .png is not a PNG), or undefined when it is not one
 * of the four. An animated PNG is a PNG to every browser and is kept as one.
 */
export async function sniffAvatarType(bytes: Uint8Array): Promise<AvatarMediaType | undefined> {
  const sniffed = await sniffFileType(bytes)
  if (!sniffed) return undefined
  if (sniffed.mime === 'image/apng') return 'image/png'
  return sniffed.mime in AVATAR_EXTENSIONS ? (sniffed.mime as AvatarMediaType) : undefined
}

const u16be = (b: Uint8Array, at: number) => (b[at]! << 8) | b[at + 1]!
const u16le = (b: Uint8Array, at: number) => b[at]! | (b[at + 1]! << 8)
const u24le = (b: Uint8Array, at: number) => b[at]! | (b[at + 1]! << 8) | (b[at + 2]! << 16)
const u32be = (b: Uint8Array, at: number) => ((b[at]! << 24) >>> 0) + (b[at + 1]! << 16) + (b[at + 2]! << 8) + b[at + 3]!
const u32le = (b: Uint8Array, at: number) => (u16le(b, at) + u16le(b, at + 2) * 0x10000) >>> 0
const ascii = (b: Uint8Array, at: number, length: number) => String.fromCharCode(...b.subarray(at, at + length))

function pngSize(b: Uint8Array): Dimensions | undefined {
  if (b.length < 24 || ascii(b, 12, 4) !== 'IHDR') return undefined
  return { width: u32be(b, 16), height: u32be(b, 20) }
}

function gifSize(b: Uint8Array): Dimensions | undefined {
  return b.length < 10 ? undefined : { width: u16le(b, 6), height: u16le(b, 8) }
}

// Start-of-frame markers, the ones that carry the size: C0–CF but for DHT (C4), JPG (C8) and DAC (CC).
const isStartOfFrame = (marker: number) => marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc

/** Walks the segments up to the first frame header; the image data comes after it and is never read. */
function jpegSize(b: Uint8Array): Dimensions | undefined {
  let at = 2
  while (at + 4 <= b.length) {
    if (b[at] !== 0xff) return undefined
    const marker = b[at + 1]!
    if (marker === 0xff) {
      at += 1 // fill byte
      continue
    }
    // Markers without a length: TEM and RST0–7. SOS or EOI before a frame header: no size to be had.
    if (marker === 0x01 || (marker >= 0xd0 && marker <= 0xd7)) {
      at += 2
      continue
    }
    if (marker === 0xda || marker === 0xd9) return undefined
    if (isStartOfFrame(marker)) return at + 9 <= b.length ? { height: u16be(b, at + 5), width: u16be(b, at + 7) } : undefined
    at += 2 + u16be(b, at + 2)
  }
  return undefined
}

/** The first chunk says which kind of WebP it is, and each kind keeps its size in its own place. */
function webpSize(b: Uint8Array): Dimensions | undefined {
  if (b.length < 30 || ascii(b, 0, 4) !== 'RIFF' || ascii(b, 8, 4) !== 'WEBP') return undefined
  switch (ascii(b, 12, 4)) {
    case 'VP8 ': // lossy: a key frame's start code, then 14-bit sizes
      if (b[23] !== 0x9d || b[24] !== 0x01 || b[25] !== 0x2a) return undefined
      return { width: u16le(b, 26) & 0x3fff, height: u16le(b, 28) & 0x3fff }
    case 'VP8L': {
      // lossless: a signature byte, then width − 1 and height − 1 in 14 bits each
      if (b[20] !== 0x2f) return undefined
      const bits = u32le(b, 21)
      return { width: (bits & 0x3fff) + 1, height: ((bits >>> 14) & 0x3fff) + 1 }
    }
    case 'VP8X': // extended (animation, alpha): the canvas, as width − 1 and height − 1 in 24 bits each
      return { width: u24le(b, 24) + 1, height: u24le(b, 27) + 1 }
    default:
      return undefined
  }
}

const READERS: Record<AvatarMediaType, (bytes: Uint8Array) => Dimensions | undefined> = {
  'image/png': pngSize,
  'image/gif': gifSize,
  'image/jpeg': jpegSize,
  'image/webp': webpSize,
}

/** The size the picture's header claims, read without decoding it; undefined when the header cannot be read. */
export function imageDimensions(bytes: Uint8Array, type: AvatarMediaType): Dimensions | undefined {
  return READERS[type](bytes)
}
