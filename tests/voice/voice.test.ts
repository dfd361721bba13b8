import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { jsonb } from '../../src/db/jsonb.ts'
import { silentLogger } from '../../src/logger.ts'
import type { Runner, SpeakRequest, TranscribeRequest } from '../../src/runners/contract.ts'
import { VoiceError } from '../../src/voice/audio.ts'
import { Voice, type VoiceAgent } from '../../src/voice/voice.ts'
import { startTestPlatform, type TestPlatform } from '../helpers/platform.ts'
import { HAS_SPEECH_TOOLS, isOggOpus, speech } from '../helpers/speech.ts'

// The kernel's voice with runners of the test's making: what it asks them, what it keeps, when it refuses.

let p: TestPlatform
let conversation: string
let message: string
const spoken: SpeakRequest[] = []
const heard: TranscribeRequest[] = []
let speakAs: (request: SpeakRequest) => Uint8Array = () => speech('part', 'ogg')

const speaker: Runner = {
  name: 'speaker',
  models: () => [],
  stream: async function* () {},
  transcribe: async (request) => {
    heard.push(request)
    if (request.model === 'broken') throw new Error('provider said 500')
    return { text: 'Heard it.', cost_usd: 0.001 }
  },
  speak: async (request) => {
    spoken.push(request)
    return { audio: speakAs(request), cost_usd: 0.002 }
  },
}
const mute: Runner = { name: 'mute', models: () => [], stream: async function* () {} }
const runners = new Map<string, Runner>([
  ['speaker', speaker],
  ['mute', mute],
])

let agentId: string
const agentWith = (voice: Partial<VoiceAgent['voice']>): VoiceAgent => ({
  id: agentId,
  company_id: p.root.companyId!,
  name: 'Echo',
  runner: 'mute',
  voice: { enabled: true, answer_aloud: 'when_spoken_to', ...voice },
})

let voice: Voice
beforeAll(async () => {
  p = await startTestPlatform()
  voice = new Voice({ db: p.store.db, runners, limits: { maxBytes: 1024 * 1024, maxMs: 60_000 }, log: silentLogger })
  agentId = ((await p.call('POST', '/api/v1/AgentConfigRecord', { json: { name: 'Echo', runner: 'echo', model: 'echo-1' } })).body as { id: string }).id
  conversation = ((await p.call('POST', '/api/v1/WebchatConversation', { json: { title: 'Voice', agent_id: agentId } })).body as { id: string }).id
  message = Bun.randomUUIDv7()
  await p.store.db
    .insertInto('webchat_messages')
    .values({ id: message, company_id: p.root.companyId!, conversation_id: conversation, sender_id: null, agent_id: null, role: 'agent', text: 'x', attachments: jsonb([{ document_id: Bun.randomUUIDv7(), name: 'a.txt', media_type: 'text/plain', size_bytes: 1 }]) })
    .execute()
})
afterAll(() => p.close())

test('answers aloud as the settings say: never, always, or when spoken to; never while voice is off', () => {
  expect(voice.aloud(agentWith({ answer_aloud: 'never' }), true)).toBe(false)
  expect(voice.aloud(agentWith({ answer_aloud: 'always' }), false)).toBe(true)
  expect(voice.aloud(agentWith({ answer_aloud: 'when_spoken_to' }), false)).toBe(false)
  expect(voice.aloud(agentWith({ answer_aloud: 'when_spoken_to' }), true)).toBe(true)
  expect(voice.aloud(agentWith({ enabled: false, answer_aloud: 'always' }), true)).toBe(false)
})

describe('refusals that name the reason', () => {
  test.each([
    ['voice off', { enabled: false }, 'Echo does not listen to voice notes; please write instead.'],
    ['a runner without speech', { provider: 'mute' }, 'Echo cannot hear voice notes just now: its speech runner "mute" offers no speech.'],
    ['a runner not installed', { provider: 'gone' }, 'Echo cannot hear voice notes just now: its speech runner "gone" is not installed.'],
  ])('%s', async (_, settings, words) => {
    const error = await voice.hear(agentWith(settings), { userId: p.root.userId, conversationId: conversation }, new Uint8Array(10)).catch((e: unknown) => e)
    expect(error).toBeInstanceOf(VoiceError)
    expect((error as VoiceError).kind).toBe('off')
    expect((error as VoiceError).message).toBe(words)
  })
})

describe.skipIf(!HAS_SPEECH_TOOLS)('with real audio', () => {
  test('a note is heard with the settings’ model and language, kept, and paid by its length', async () => {
    const note = speech('hello there', 'wav')
    const result = await voice.hear(agentWith({ provider: 'speaker', transcription_model: 'whisper-large', language: 'pt-BR' }), { userId: p.root.userId, conversationId: conversation }, note)
    expect(result).toMatchObject({ text: 'Heard it.', mediaType: 'audio/wav', sizeBytes: note.length })
    expect(heard.at(-1)).toMatchObject({ model: 'whisper-large', language: 'pt-BR', mediaType: 'audio/wav', filename: 'voice.wav', durationMs: result.durationMs })
    const clip = await p.store.db.selectFrom('voice_clips').selectAll().where('id', '=', result.clipId).executeTakeFirstOrThrow()
    expect(clip).toMatchObject({ direction: 'heard', message_id: null, media_type: 'audio/wav', conversation_id: conversation })
    const usage = await p.store.db.selectFrom('usage_records').select(['source', 'runner', 'model', 'audio_ms', 'cost_usd']).where('conversation_id', '=', conversation).where('model', '=', 'whisper-large').executeTakeFirstOrThrow()
    expect(usage).toMatchObject({ source: 'voice', runner: 'speaker', model: 'whisper-large', audio_ms: result.durationMs })
    expect(Number(usage.cost_usd)).toBeCloseTo(0.001, 9)
  })

  test('a provider that fails is a failed note, in words', async () => {
    const error = await voice.hear(agentWith({ provider: 'speaker', transcription_model: 'broken' }), { userId: null, conversationId: conversation }, speech('hello', 'wav')).catch((e: unknown) => e)
    expect((error as VoiceError).kind).toBe('failed')
    expect((error as VoiceError).message).toContain('provider said 500')
  })

  test('a long answer is said in parts of at most 4,000 characters, in order, as words, and listed on its message', async () => {
    spoken.length = 0
    const paragraph = `**Step** ${'one more sentence that goes on. '.repeat(40)}`
    const answer = Array.from({ length: 10 }, () => paragraph).join('\n\n')
    expect(answer.length).toBeGreaterThan(10_000)
    const clips = await voice.speak(agentWith({ provider: 'speaker', voice_id: 'nova' }), { userId: p.root.userId, conversationId: conversation }, message, answer)
    expect(clips.map((c) => c.part)).toEqual(spoken.map((_, i) => i))
    expect(spoken.length).toBeGreaterThanOrEqual(3)
    for (const request of spoken) {
      expect(request.text.length).toBeLessThanOrEqual(4000)
      expect(request.text).not.toContain('**')
      expect(request).toMatchObject({ model: 'gpt-4o-mini-tts', voice: 'nova', format: 'opus' })
    }
    expect(spoken.map((r) => r.text).join(' ').replace(/\s+/g, ' ')).toBe(answer.replaceAll('**', '').replace(/\s+/g, ' ').trim())
    const stored = await p.store.db.selectFrom('webchat_messages').select('attachments').where('id', '=', message).executeTakeFirstOrThrow()
    const attachments = stored.attachments as Array<Record<string, unknown>>
    // The document it had stays; each part follows it.
    expect(attachments[0]).toMatchObject({ name: 'a.txt' })
    expect(attachments.slice(1).map((a) => a.name)).toEqual(clips.map((c) => `Spoken answer, part ${c.part + 1} of ${clips.length}`))
    const first = await p.store.db.selectFrom('voice_clips').select(['bytes', 'direction', 'message_id']).where('id', '=', clips[0]!.clipId).executeTakeFirstOrThrow()
    expect(first).toMatchObject({ direction: 'spoken', message_id: message })
    expect(isOggOpus(first.bytes)).toBe(true)
  })

  test('a provider that answers something other than OGG/Opus is refused, and nothing is kept', async () => {
    speakAs = () => new TextEncoder().encode('{"error":{"message":"quota"}}')
    try {
      const before = await p.store.db.selectFrom('voice_clips').select('id').where('direction', '=', 'spoken').execute()
      const error = await voice.speak(agentWith({ provider: 'speaker' }), { userId: null, conversationId: conversation }, message, 'Hi').catch((e: unknown) => e)
      expect(String(error)).toContain('something that is not audio where OGG/Opus was asked for')
      expect(await p.store.db.selectFrom('voice_clips').select('id').where('direction', '=', 'spoken').execute()).toHaveLength(before.length)
    } finally {
      speakAs = () => speech('part', 'ogg')
    }
  })
})
