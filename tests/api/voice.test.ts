import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { openAIRunnerEnv, startFakeOpenAI } from '../helpers/fake-openai.ts'
import { startTestPlatform, type Principal, type TestPlatform } from '../helpers/platform.ts'
import { expectProblem } from '../helpers/problem.ts'
import { HAS_SPEECH_TOOLS, isOggOpus, speech } from '../helpers/speech.ts'
import { until } from '../helpers/until.ts'

const UPLOAD = '/api/chat/voice'
const MAX_BYTES = 200 * 1024
const MAX_SECONDS = 10

const provider = startFakeOpenAI()
let p: TestPlatform
let listener: string
let deaf: string
let conversation: string

function form(fields: { conversation_id?: string; file?: File | string }): FormData {
  const body = new FormData()
  for (const [name, value] of Object.entries(fields)) if (value !== undefined) body.append(name, value)
  return body
}

interface Heard {
  voice_clip_id: string
  text: string
  media_type: string
  size_bytes: number
  duration_ms: number | null
  detail?: string
}

const upload = async (conversationId: string, file: File | undefined, as?: Principal | null) => {
  const reply = await p.call('POST', UPLOAD, { body: form({ conversation_id: conversationId, file }), as })
  return reply as typeof reply & { body: Heard }
}

async function agentWith(name: string, voice: Record<string, unknown>): Promise<string> {
  const made = await p.call('POST', '/api/v1/AgentConfigRecord', { json: { name, runner: 'echo', model: 'echo-1', voice } })
  expect(made.status).toBe(201)
  return made.body.id
}

async function conversationWith(agentId: string, as?: Principal): Promise<string> {
  const made = await p.call('POST', '/api/v1/WebchatConversation', { json: { agent_id: agentId, title: 'Spoken' }, as })
  expect(made.status).toBe(201)
  return made.body.id
}

/** One turn through POST /api/chat, its NDJSON events read to the end. */
const turn = (body: Record<string, unknown>, as?: Principal) => p.call('POST', '/api/chat', { json: body, as })

/** A clip's bytes as served, read as bytes (the test client reads bodies as text). */
async function play(id: string, as: Principal = p.root) {
  const response = await p.api.request(`/api/chat/voice/${id}`, { headers: { authorization: `Bearer ${as.token}` } })
  return { status: response.status, headers: response.headers, bytes: new Uint8Array(await response.arrayBuffer()) }
}

beforeAll(async () => {
  p = await startTestPlatform({
    SWITCHBOARD_VOICE_MAX_BYTES: String(MAX_BYTES),
    SWITCHBOARD_VOICE_MAX_SECONDS: String(MAX_SECONDS),
    SWITCHBOARD_PLUGIN_RUNNER_OPENAI_MAX_RETRIES: '0',
    ...openAIRunnerEnv(provider),
  })
  listener = await agentWith('Listener', { enabled: true, provider: 'openai' })
  deaf = await agentWith('Deaf', { enabled: false })
  conversation = await conversationWith(listener)
})
afterAll(async () => {
  await p.close()
  provider.stop()
})

describe.skipIf(!HAS_SPEECH_TOOLS)('POST /api/chat/voice', () => {
  test('a recording is heard: 201 with its transcript; sent as the message, it is kept beside it and the answer is spoken', async () => {
    const note = speech('remind me to buy bread', 'webm')
    provider.willHear(note, 'Remind me to buy bread.')
    const heard = await upload(conversation, new File([note], 'recording.bin'))
    expect(heard.status).toBe(201)
    expect(heard.body).toMatchObject({ text: 'Remind me to buy bread.', media_type: 'audio/webm', size_bytes: note.length })
    expect(heard.body.duration_ms).toBeGreaterThan(1000)
    // Named by what the bytes are, whatever the upload was called.
    expect(provider.audio.at(-1)!.file!.name).toBe('voice.webm')

    const reply = await turn({ conversation_id: conversation, text: heard.body.text, voice_clip_id: heard.body.voice_clip_id })
    expect(reply.status).toBe(200)
    type Message = { text: string; attachments: Array<Record<string, unknown> & { voice_clip_id: string }> }
    const messages = async () => (await p.call('GET', `/api/v1/WebchatMessage?conversation_id=eq.${conversation}&order=id.asc`)).body.data as Message[]
    const question = (await messages()).find((m) => m.text === 'Remind me to buy bread.')!
    expect(question.attachments).toEqual([{ voice_clip_id: heard.body.voice_clip_id, name: 'Voice note', media_type: 'audio/webm', size_bytes: note.length, duration_ms: heard.body.duration_ms }])

    // Spoken after the turn: the answer gains its spoken part, playable by the conversation's people.
    const answer = await until(async () => (await messages()).find((m) => m.text === 'Echo: Remind me to buy bread.' && m.attachments.length > 0), {
      what: 'the answer to be spoken',
    })
    expect(answer.attachments).toHaveLength(1)
    expect(answer.attachments[0]).toMatchObject({ name: 'Spoken answer', media_type: 'audio/ogg' })
    const played = await play(answer.attachments[0]!.voice_clip_id)
    expect(played.status).toBe(200)
    expect(played.headers.get('content-type')).toBe('audio/ogg')
    expect(played.headers.get('x-content-type-options')).toBe('nosniff')
    expect(isOggOpus(played.bytes)).toBe(true)
    const mine = await play(heard.body.voice_clip_id)
    expect(mine.headers.get('content-type')).toBe('audio/webm')
    expect(Buffer.from(mine.bytes).equals(Buffer.from(note))).toBe(true)
  })

  test('a voice note is said once: sent again, or in another conversation, it is refused', async () => {
    const note = speech('only once', 'wav')
    provider.willHear(note, 'Only once.')
    const heard = await upload(conversation, new File([note], 'once.wav'))
    expect(heard.status).toBe(201)
    const elsewhere = await conversationWith(listener)
    expectProblem(await turn({ conversation_id: elsewhere, text: 'Only once.', voice_clip_id: heard.body.voice_clip_id }), 422, 'validation_error')
    expect((await turn({ conversation_id: conversation, text: 'Only once.', voice_clip_id: heard.body.voice_clip_id })).status).toBe(200)
    expectProblem(await turn({ conversation_id: conversation, text: 'Only once.', voice_clip_id: heard.body.voice_clip_id }), 422, 'validation_error')
  })

  test('what is not audio is 415, whatever it is called; a body that is not a form is 415 too', async () => {
    const refused = await upload(conversation, new File(['%PDF-1.7 nothing to hear'], 'voice.ogg', { type: 'audio/ogg' }))
    expectProblem(refused, 415, 'unsupported_media_type')
    expect(refused.body.detail).toContain('That is not a recording')
    expectProblem(await p.call('POST', UPLOAD, { json: { conversation_id: conversation } }), 415, 'unsupported_media_type')
  })

  test('a recording past the size cap is 413 before the provider hears of it; past the length cap, 413 saying how long', async () => {
    const asked = provider.audio.length
    const big = speech('this goes on for quite a while so that the wave file is big', 'wav', 3)
    expect(big.length).toBeGreaterThan(MAX_BYTES)
    const tooBig = await upload(conversation, new File([big], 'big.wav'))
    expectProblem(tooBig, 413, 'payload_too_large')
    expect(tooBig.body.detail).toContain('200 KiB, the most a voice note may be')
    const long = speech('this goes on for quite a while so that the recording is long', 'ogg', 5)
    expect(long.length).toBeLessThan(MAX_BYTES)
    const tooLong = await upload(conversation, new File([long], 'long.ogg'))
    expectProblem(tooLong, 413, 'payload_too_large')
    expect(tooLong.body.detail).toMatch(new RegExp(`a voice note may last at most ${MAX_SECONDS} seconds`))
    expect(provider.audio.length).toBe(asked)
  })

  test('a missing file is 422; a recording in which nothing can be made out is 422 saying so', async () => {
    expectProblem(await upload(conversation, undefined), 422, 'validation_error')
    const silent = await upload(conversation, new File([speech('hmm', 'ogg')], 'hmm.ogg'))
    expectProblem(silent, 422, 'validation_error')
    expect(silent.body.detail).toContain('No words could be made out')
  })

  test('an agent that does not hear voice notes is 409; a provider that fails is 502, in words', async () => {
    const withDeaf = await conversationWith(deaf)
    const off = await upload(withDeaf, new File([speech('hello', 'ogg')], 'hello.ogg'))
    expectProblem(off, 409, 'conflict')
    expect(off.body.detail).toBe('Deaf does not listen to voice notes; please write instead.')
    provider.hearing.failWith = 500
    try {
      const failed = await upload(conversation, new File([speech('hello', 'ogg')], 'hello.ogg'))
      expectProblem(failed, 502, 'bad_gateway')
      expect(failed.body.detail).toContain('could not be transcribed')
    } finally {
      provider.hearing.failWith = null
    }
  })

  test('a person whose monthly budget is spent is not heard: 429 saying so, and the provider is not asked', async () => {
    const spender = await p.createUser()
    const theirs = await conversationWith(listener, spender)
    expect((await p.call('POST', '/api/v1/Budget', { json: { user_id: spender.userId, metric: 'cost_usd', monthly_limit: 0.01 } })).status).toBe(201)
    await p.store.db.insertInto('usage_records').values({ id: Bun.randomUUIDv7(), company_id: p.root.companyId!, user_id: spender.userId, source: 'rlm', runner: 'echo', model: 'echo-1', cost_usd: 0.02 }).execute()
    p.services.budgets.charged(p.root.companyId!)
    const asked = provider.audio.length
    const refused = await upload(theirs, new File([speech('spend more', 'ogg')], 'more.ogg'), spender)
    expectProblem(refused, 429, 'budget_exceeded')
    expect(refused.body.detail).toContain('monthly budget is spent')
    expect(provider.audio.length).toBe(asked)
  })

  test('no credentials is 401; another company’s conversation, and one the caller is not in, are 404; so are their clips', async () => {
    const note = speech('private words', 'ogg')
    provider.willHear(note, 'Private words.')
    expectProblem(await upload(conversation, new File([note], 'a.ogg'), null), 401, 'unauthorized')
    const outsider = await p.createUser({ companyId: await p.createCompany() })
    expectProblem(await upload(conversation, new File([note], 'a.ogg'), outsider), 404, 'not_found')
    const colleague = await p.createUser()
    expectProblem(await upload(conversation, new File([note], 'a.ogg'), colleague), 404, 'not_found')
    const heard = await upload(conversation, new File([note], 'a.ogg'))
    expect(heard.status).toBe(201)
    const clip = `/api/chat/voice/${heard.body.voice_clip_id}`
    expectProblem(await p.call('GET', clip, { as: null }), 401, 'unauthorized')
    expectProblem(await p.call('GET', clip, { as: outsider }), 404, 'not_found')
    expectProblem(await p.call('GET', clip, { as: colleague }), 404, 'not_found')
    expectProblem(await p.call('GET', '/api/chat/voice/01936f3e-6d2a-7c41-9b1e-2f3a4b5c6d7e'), 404, 'not_found')
  })
})
