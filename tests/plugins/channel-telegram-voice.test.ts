import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { startFakeTelegram } from '../fixtures/channels/telegram-api.ts'
import { openAIRunnerEnv, startFakeOpenAI } from '../helpers/fake-openai.ts'
import { startTestPlatform, type Principal, type TestPlatform } from '../helpers/platform.ts'
import { HAS_SPEECH_TOOLS, isOggOpus, speech } from '../helpers/speech.ts'
import { until } from '../helpers/until.ts'

// Voice notes on Telegram, end to end through the fakes: real speech (espeak-ng, ffmpeg) as Telegram's OGG/Opus,
// heard by the OpenAI runner's transcription, answered by the echo runner, spoken by the OpenAI runner's speech.

const BASE_URL = 'https://switchboard.example.com'
const TOKEN = '7000000042:AAH-voice_token-0123456789abcdefghijklm'
const ADA = 424_242
const MAX_SECONDS = 12

const telegram = startFakeTelegram()
telegram.addBot(TOKEN)
const provider = startFakeOpenAI()
let p: TestPlatform
let person: Principal
let agent: string
let fileNumber = 0

async function createAgent(name: string, voice: Record<string, unknown>): Promise<string> {
  const reply = await p.call('POST', '/api/v1/AgentConfigRecord', { json: { name, runner: 'echo', model: 'echo-1', channels: { telegram: { bot_token_secret: 'tg/voice' } }, voice } })
  expect(reply.status).toBe(201)
  expect((await p.call('POST', `/api/agents/${reply.body.id}/reload`)).status).toBe(200)
  return reply.body.id
}

async function setVoice(voice: Record<string, unknown>) {
  const reply = await p.call('PATCH', `/api/v1/AgentConfigRecord/${agent}`, { json: { voice } })
  expect(reply.status).toBe(200)
}

/** Ada sends a voice note of these bytes, as Telegram delivers it (the file fetched through getFile). */
async function sendVoiceNote(bytes: Uint8Array, duration = 2) {
  const fileId = `voice-${++fileNumber}`
  telegram.bot(TOKEN).files.set(fileId, { path: `voice/file_${fileNumber}.oga`, bytes: new Uint8Array(bytes) })
  const { path, body, headers } = telegram.webhookRequest(TOKEN, telegram.update({ voice: { file_id: fileId, duration, file_size: bytes.length } }))
  const reply = await p.call('POST', path, { body, headers, as: null })
  expect(reply.status).toBe(200)
}

async function sendText(text: string) {
  const { path, body, headers } = telegram.webhookRequest(TOKEN, telegram.update({ text }))
  expect((await p.call('POST', path, { body, headers, as: null })).status).toBe(200)
}

const texts = () => telegram.sent(TOKEN, ADA).map((m) => m.text)
const answered = (text: string) => until(() => texts().includes(text), { what: `"${text}" to reach Ada` })
const answeredWith = (part: string) => until(() => texts().find((t) => t.includes(part)), { what: `an answer with "${part}" to reach Ada` })

beforeAll(async () => {
  p = await startTestPlatform({
    SWITCHBOARD_PLUGIN_CHANNEL_TELEGRAM_API_BASE_URL: telegram.url,
    SWITCHBOARD_CHANNEL_RETRY_MS: '20',
    SWITCHBOARD_BASE_URL: BASE_URL,
    SWITCHBOARD_VOICE_MAX_SECONDS: String(MAX_SECONDS),
    SWITCHBOARD_PLUGIN_RUNNER_OPENAI_MAX_RETRIES: '0',
    ...openAIRunnerEnv(provider),
  })
  expect((await p.call('PUT', '/api/vault/secrets', { json: { scope: 'company', owner_id: p.root.companyId, name: 'tg/voice', value: TOKEN } })).status).toBeLessThan(300)
  agent = await createAgent('Listener', { enabled: true, provider: 'openai', language: 'en-GB' })
  person = await p.createUser()
  expect((await p.call('POST', '/api/v1/UserPlatform', { json: { user_id: person.userId, platform: 'telegram', platform_user_id: String(ADA) } })).status).toBe(201)
})
afterAll(async () => {
  await p.close()
  telegram.stop()
  provider.stop()
})

describe.skipIf(!HAS_SPEECH_TOOLS)('a voice note', () => {
  test('is heard as its transcript, and the answer comes back as text and as an OGG/Opus voice note', async () => {
    const note = speech('what is the weather in Paris today')
    expect(isOggOpus(note)).toBe(true)
    provider.willHear(note, 'What is the weather in Paris today?')
    const voicesBefore = telegram.voices(TOKEN, ADA).length
    // What the web chat hears of the conversation meanwhile.
    const live: string[] = []
    const stopListening = p.services.events.subscribe('chat.event', ({ event }) => live.push(event.type))
    await sendVoiceNote(note)
    await answered('Echo: What is the weather in Paris today?')

    // The provider got the very bytes Ada recorded, named as what they are, with the agent's language.
    const heard = provider.audio.find((a) => a.path === '/v1/audio/transcriptions')!
    expect(Buffer.from(heard.file!.bytes).equals(Buffer.from(note))).toBe(true)
    expect(heard.file!.name).toBe('voice.ogg')
    expect(heard.fields).toMatchObject({ model: 'whisper-1', language: 'en', response_format: 'json' })
    expect(heard.authorization).toBe('Bearer sk-test-key')

    // Spoken aloud, since Ada spoke: the answer's words, asked for as Opus, sent as Telegram's voice note.
    const voice = await until(() => telegram.voices(TOKEN, ADA)[voicesBefore], { what: 'the spoken answer to reach Ada' })
    expect(isOggOpus(voice.voice.bytes)).toBe(true)
    expect(voice.duration).toBeGreaterThanOrEqual(1)
    const spoken = provider.audio.find((a) => a.path === '/v1/audio/speech')!
    expect(spoken.fields).toMatchObject({ input: 'Echo: What is the weather in Paris today?', model: 'gpt-4o-mini-tts', voice: 'alloy', response_format: 'opus' })
    // The text went before the voice, so someone who cannot listen never waits for it.
    const order = telegram.calls.filter((c) => c.token === TOKEN && (c.method === 'sendMessage' || c.method === 'sendVoice') && c.status === 200).map((c) => c.method)
    expect(order.lastIndexOf('sendMessage')).toBeLessThan(order.lastIndexOf('sendVoice'))
    // Whoever has the conversation open in the web chat gets the players, after the answer they play.
    await until(() => live.includes('voice'), { what: 'the players in the web chat' })
    stopListening()
    expect(live.indexOf('message')).toBeGreaterThan(-1)
    expect(live.indexOf('message')).toBeLessThan(live.indexOf('voice'))

    // The conversation keeps the note beside the transcript, and both speeches are paid by their length.
    const message = await p.store.db
      .selectFrom('webchat_messages')
      .select(['id', 'text', 'attachments'])
      .where('text', '=', 'What is the weather in Paris today?')
      .executeTakeFirstOrThrow()
    const attachment = (message.attachments as Array<Record<string, unknown>>)[0]!
    expect(attachment).toMatchObject({ name: 'Voice note', media_type: 'audio/ogg', size_bytes: note.length })
    expect(attachment.duration_ms as number).toBeGreaterThan(1000)
    const clips = await p.store.db.selectFrom('voice_clips').select(['id', 'direction', 'message_id', 'bytes']).where('company_id', '=', p.root.companyId).orderBy('created_at').execute()
    const heardClip = clips.find((c) => c.id === attachment.voice_clip_id)!
    expect(heardClip).toMatchObject({ direction: 'heard', message_id: message.id })
    expect(Buffer.from(heardClip.bytes).equals(Buffer.from(note))).toBe(true)
    expect(clips.some((c) => c.direction === 'spoken' && Buffer.from(c.bytes).equals(Buffer.from(voice.voice.bytes)))).toBe(true)
    const usage = await p.store.db.selectFrom('usage_records').select(['model', 'audio_ms', 'cost_usd']).where('source', '=', 'voice').where('agent_id', '=', agent).execute()
    expect(usage.map((u) => u.model).sort()).toEqual(['gpt-4o-mini-tts', 'whisper-1'])
    const transcription = usage.find((u) => u.model === 'whisper-1')!
    expect(transcription.audio_ms).toBeGreaterThan(1000)
    // whisper-1 is $0.006 a minute: about two seconds cost about $0.0002.
    expect(Number(transcription.cost_usd)).toBeCloseTo((0.006 * transcription.audio_ms) / 60_000, 8)
  })

  test('an audio file (Telegram’s audio, here MP3) is heard as a voice note too', async () => {
    const track = speech('call me back tomorrow', 'mp3')
    provider.willHear(track, 'Call me back tomorrow.')
    const voices = telegram.voices(TOKEN, ADA).length
    const fileId = `audio-${++fileNumber}`
    telegram.bot(TOKEN).files.set(fileId, { path: `music/file_${fileNumber}.mp3`, bytes: new Uint8Array(track) })
    const { path, body, headers } = telegram.webhookRequest(TOKEN, telegram.update({ audio: { file_id: fileId, duration: 2, file_name: 'memo.mp3', mime_type: 'audio/mpeg', file_size: track.length } }))
    expect((await p.call('POST', path, { body, headers, as: null })).status).toBe(200)
    await answered('Echo: Call me back tomorrow.')
    expect(provider.audio.filter((a) => a.path === '/v1/audio/transcriptions').at(-1)!.file!.name).toBe('voice.mp3')
    await until(() => telegram.voices(TOKEN, ADA).length === voices + 1, { what: 'the spoken answer' })
  })

  test('a written message is answered in writing only, unless the agent always answers aloud', async () => {
    const before = telegram.voices(TOKEN, ADA).length
    await sendText('just text please')
    await answered('Echo: just text please')
    await Bun.sleep(300)
    expect(telegram.voices(TOKEN, ADA).length).toBe(before)

    await setVoice({ enabled: true, provider: 'openai', answer_aloud: 'always', voice_id: 'nova' })
    try {
      await sendText('read it to me')
      await answered('Echo: read it to me')
      await until(() => telegram.voices(TOKEN, ADA).length === before + 1, { what: 'the answer to be spoken though Ada wrote' })
      expect(provider.audio.filter((a) => a.path === '/v1/audio/speech').at(-1)!.fields).toMatchObject({ input: 'Echo: read it to me', voice: 'nova' })
    } finally {
      await setVoice({ enabled: true, provider: 'openai', language: 'en-GB' })
    }
  })

  test('one longer than the cap is refused in words, unheard, and nothing else is answered', async () => {
    const long = speech('this sentence goes on and on so that the recording lasts longer than allowed', 'ogg', 4)
    provider.willHear(long, 'should never be transcribed')
    const asked = provider.audio.length
    await sendVoiceNote(long, 20)
    const refusal = await answeredWith('Your voice note was not heard')
    expect(refusal).toMatch(new RegExp(`a voice note may last at most ${MAX_SECONDS} seconds`))
    expect(provider.audio.length).toBe(asked)
    expect(texts()).not.toContain('Echo: should never be transcribed')
  })

  test('one the provider cannot transcribe gets a clear answer, never silence', async () => {
    const note = speech('this one the provider fails on')
    provider.hearing.failWith = 500
    try {
      await sendVoiceNote(note)
      const refusal = await answeredWith('could not be transcribed')
      expect(refusal).toContain('please write it instead')
    } finally {
      provider.hearing.failWith = null
    }
  })

  test('one in which nothing can be made out is said to be so', async () => {
    await sendVoiceNote(speech('mumble mumble'))
    expect(await answeredWith('No words could be made out')).toContain('Your voice note was not heard')
  })

  test('to an agent whose voice is off is answered with how to reach it instead', async () => {
    await setVoice({ enabled: false })
    try {
      await sendVoiceNote(speech('are you listening'))
      expect(await answeredWith('does not listen to voice notes')).toBe('Your voice note was not heard: Listener does not listen to voice notes; please write instead.')
    } finally {
      await setVoice({ enabled: true, provider: 'openai', language: 'en-GB' })
    }
  })

  test('that is not audio at all is judged by its bytes, not by Telegram calling it a voice note', async () => {
    const asked = provider.audio.length
    await sendVoiceNote(new TextEncoder().encode('%PDF-1.7 not a recording at all'))
    expect(await answeredWith('Not read: voice.ogg')).toBeTruthy()
    expect(provider.audio.length).toBe(asked)
  })
})

test('a voice note too large for a bot to download is named back to its sender rather than met with silence', async () => {
  const { path, body, headers } = telegram.webhookRequest(TOKEN, telegram.update({ voice: { file_id: 'voice-huge', duration: 30, file_size: 21 * 1024 * 1024 } }))
  expect((await p.call('POST', path, { body, headers, as: null })).status).toBe(200)
  expect(await answeredWith('larger than')).toStartWith('Not read: voice.ogg (')
  expect(telegram.calls.some((c) => c.method === 'getFile' && c.params.file_id === 'voice-huge')).toBe(false)
})
