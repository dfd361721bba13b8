import { describe, expect, test } from 'bun:test'
import { audioType, judgeRecording, VoiceError } from '../../src/voice/audio.ts'
import { HAS_SPEECH_TOOLS, speech } from '../helpers/speech.ts'

const LIMITS = { maxBytes: 1024 * 1024, maxMs: 10_000 }

async function refusal(bytes: Uint8Array, limits = LIMITS): Promise<VoiceError> {
  const error = await judgeRecording(bytes, limits).then(
    () => undefined,
    (e: unknown) => e,
  )
  if (!(error instanceof VoiceError)) throw new Error(`expected a VoiceError, got ${String(error)}`)
  return error
}

describe.skipIf(!HAS_SPEECH_TOOLS)('a recording judged by its bytes', () => {
  test.each([
    ['ogg', 'audio/ogg', 'voice.ogg'],
    ['webm', 'audio/webm', 'voice.webm'],
    ['wav', 'audio/wav', 'voice.wav'],
    ['mp3', 'audio/mpeg', 'voice.mp3'],
  ] as const)('%s is %s, measured, and named for the provider as %s', async (format, mediaType, filename) => {
    const bytes = speech('one two three four', format)
    const recording = await judgeRecording(bytes, LIMITS)
    expect(recording).toMatchObject({ mediaType, filename })
    expect(recording.durationMs).toBeGreaterThan(1000)
    expect(recording.durationMs).toBeLessThan(4000)
  })

  test('longer than the cap is too_long, saying both lengths', async () => {
    const error = await refusal(speech('this goes on for a while', 'ogg', 3), { ...LIMITS, maxMs: 2_000 })
    expect(error.kind).toBe('too_long')
    expect(error.message).toMatch(/^The recording lasts \d+ seconds; a voice note may last at most 2 seconds\.$/)
  })

  test('larger than the cap is too_large before anything is parsed', async () => {
    const error = await refusal(speech('this goes on for a while', 'wav'), { ...LIMITS, maxBytes: 10_000 })
    expect(error.kind).toBe('too_large')
  })

  test('a recording cut short after its header is unreadable or measured short, never taken as longer than it is', async () => {
    const whole = speech('one two three four', 'wav')
    const cut = whole.subarray(0, 64)
    const judged = await judgeRecording(cut, LIMITS).catch((e: VoiceError) => e)
    if (judged instanceof VoiceError) expect(judged.kind).toBe('unreadable')
    else expect(judged.durationMs ?? 0).toBeLessThan(4000)
  })
})

describe('what is not a recording', () => {
  test.each([
    ['a PDF', new TextEncoder().encode('%PDF-1.7\n1 0 obj\n<<>>\nendobj\n')],
    ['a PNG', new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52])],
    ['text', new TextEncoder().encode('hello, I am a voice note, honestly')],
    ['nothing', new Uint8Array()],
  ])('%s is unsupported, whatever it is called', async (_, bytes) => {
    expect(await audioType(bytes)).toBeUndefined()
    const error = await refusal(bytes)
    expect(error.kind).toBe('unsupported')
    expect(error.message).toContain('That is not a recording')
  })

  test('a video is not a voice note', async () => {
    // An MP4 with a video track: ISO BMFF "ftyp isom", which file-type calls video/mp4.
    const mp4 = new Uint8Array([0, 0, 0, 0x18, 0x66, 0x74, 0x79, 0x70, 0x69, 0x73, 0x6f, 0x6d, 0, 0, 2, 0, 0x69, 0x73, 0x6f, 0x6d, 0x69, 0x73, 0x6f, 0x32])
    expect(await audioType(mp4)).toBeUndefined()
  })
})
