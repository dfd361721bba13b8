import { describeBytes } from '../documents/sizes.ts'
import { sniffFileType } from '../documents/sniff.ts'

/** What a voice note may be, by the container its bytes are in, and the media type it is kept and served as. */
const CONTAINERS: Record<string, string> = {
  opus: 'audio/ogg',
  ogg: 'audio/ogg',
  oga: 'audio/ogg',
  webm: 'audio/webm',
  wav: 'audio/wav',
  mp3: 'audio/mpeg',
  m4a: 'audio/mp4',
  flac: 'audio/flac',
  aac: 'audio/aac',
}
/** The file extension a provider is told, per media type (OpenAI's transcription judges the upload by its name too). */
const EXTENSIONS: Record<string, string> = { 'audio/ogg': 'ogg', 'audio/webm': 'webm', 'audio/wav': 'wav', 'audio/mpeg': 'mp3', 'audio/mp4': 'm4a', 'audio/flac': 'flac', 'audio/aac': 'aac' }

export const SPOKEN_FORMS = 'OGG/Opus, WebM, WAV, MP3, M4A, FLAC or AAC'

/**
 * Why a voice note was not heard, in words for the person who sent it. `unsupported`: its bytes are not audio.
 * `too_large` and `too_long`: past the caps. `unreadable`: audio that cannot be measured (damaged or truncated).
 * `off`: the agent does not listen. `failed`: the provider could not transcribe it. `silent`: no words in it.
 * `budget`: the monthly budget is spent.
 */
export type VoiceErrorKind = 'unsupported' | 'too_large' | 'too_long' | 'unreadable' | 'off' | 'failed' | 'silent' | 'budget'

export class VoiceError extends Error {
  constructor(
    readonly kind: VoiceErrorKind,
    message: string,
  ) {
    super(message)
    this.name = 'VoiceError'
  }
}

export interface VoiceLimits {
  maxBytes: number
  maxMs: number
}

/** A recording judged by its bytes: what it is, and how long. */
export interface Recording {
  bytes: Uint8Array
  mediaType: string
  filename: string
  /** Undefined where the container does not say and cannot be measured without decoding (a live WebM recording). */
  durationMs: number | undefined
}

/** The media type a voice note's bytes are, or undefined when they are not audio in a container we take. */
export async function audioType(bytes: Uint8Array): Promise<string | undefined> {
  const type = await sniffFileType(bytes)
  return type ? CONTAINERS[type.ext] : undefined
}

/** How long the audio is, from its headers or, where they do not say (MP3), by reading its frames. */
export async function audioDuration(bytes: Uint8Array, mediaType: string): Promise<number | undefined> {
  // Loaded with the first recording heard rather than at start-up.
  const { parseBuffer } = await import('music-metadata')
  const { format } = await parseBuffer(bytes, { mimeType: mediaType, size: bytes.length }, { duration: true, skipCovers: true, skipPostHeaders: true })
  if (format.numberOfChannels === 0) throw new VoiceError('unreadable', 'The recording holds no sound.')
  return format.duration === undefined || !Number.isFinite(format.duration) ? undefined : Math.round(format.duration * 1000)
}

function minutes(ms: number): string {
  const seconds = Math.round(ms / 1000)
  return seconds < 120 ? `${seconds} seconds` : `${Math.round(seconds / 60)} minutes`
}

/**
 * A voice note taken only if its bytes are audio (whatever its name or the platform say), no larger and no longer
 * than the caps. Throws VoiceError saying why not.
 */
export async function judgeRecording(bytes: Uint8Array, limits: VoiceLimits): Promise<Recording> {
  if (bytes.length > limits.maxBytes) throw new VoiceError('too_large', `The recording is ${describeBytes(bytes.length)}; a voice note may be at most ${describeBytes(limits.maxBytes)}.`)
  const mediaType = await audioType(bytes)
  if (!mediaType) throw new VoiceError('unsupported', `That is not a recording: send audio as ${SPOKEN_FORMS}.`)
  let durationMs: number | undefined
  try {
    durationMs = await audioDuration(bytes, mediaType)
  } catch (error) {
    if (error instanceof VoiceError) throw error
    throw new VoiceError('unreadable', 'The recording is damaged or cut short, so it cannot be heard.')
  }
  if (durationMs !== undefined && durationMs > limits.maxMs) {
    throw new VoiceError('too_long', `The recording lasts ${minutes(durationMs)}; a voice note may last at most ${minutes(limits.maxMs)}.`)
  }
  return { bytes, mediaType, filename: `voice.${EXTENSIONS[mediaType]}`, durationMs }
}
