/**
 * Real speech made on this machine, for the voice tests: espeak-ng says the words into WAV, ffmpeg converts it to
 * what a platform sends (a Telegram voice note is OGG/Opus, a browser records WebM/Opus). Each utterance is made once.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'

export const HAS_SPEECH_TOOLS = Bun.which('espeak-ng') !== null && Bun.which('ffmpeg') !== null
if (!HAS_SPEECH_TOOLS) console.warn('espeak-ng or ffmpeg is not installed: the voice tests that need real speech skip')

export type SpeechFormat = 'wav' | 'ogg' | 'webm' | 'mp3'

const made = new Map<string, Uint8Array<ArrayBuffer>>()

function run(command: string[]): void {
  const done = Bun.spawnSync(command, { stdout: 'ignore', stderr: 'pipe' })
  if (done.exitCode !== 0) throw new Error(`${command[0]} failed: ${done.stderr.toString()}`)
}

/** `text` said aloud, in `format`; `repeat` says it that many times over (a long recording). */
export function speech(text: string, format: SpeechFormat = 'ogg', repeat = 1): Uint8Array<ArrayBuffer> {
  const key = `${format}:${repeat}:${text}`
  const known = made.get(key)
  if (known) return known
  const dir = mkdtempSync(join(tmpdir(), 'speech-'))
  try {
    const wav = join(dir, 'said.wav')
    run(['espeak-ng', '-w', wav, Array.from({ length: repeat }, () => text).join('. ')])
    const out = join(dir, `said.${format}`)
    if (format !== 'wav') {
      const codec = format === 'mp3' ? ['-c:a', 'libmp3lame'] : ['-c:a', 'libopus', '-b:a', '24k']
      run(['ffmpeg', '-loglevel', 'error', '-y', '-i', wav, ...codec, out])
    }
    const bytes = new Uint8Array(readFileSync(format === 'wav' ? wav : out))
    made.set(key, bytes)
    return bytes
  } finally {
    rmSync(dir, { recursive: true, force: true })
  }
}

/** Whether the bytes are an OGG container whose first stream is Opus: what Telegram and WhatsApp play as a voice note. */
export function isOggOpus(bytes: Uint8Array): boolean {
  const head = Buffer.from(bytes.subarray(0, 64))
  return head.subarray(0, 4).toString('latin1') === 'OggS' && head.includes(Buffer.from('OpusHead'))
}
