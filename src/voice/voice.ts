import { sql } from 'kysely'
import type { Attachment } from '../chat/events.ts'
import type { AgentVoice } from '../db/columns.ts'
import { jsonb } from '../db/jsonb.ts'
import type { Db, Executor } from '../db/schema.ts'
import type { Logger } from '../logger.ts'
import type { Budgets } from '../usage/budgets.ts'
import { costOf } from '../models/usage.ts'
import type { Runner } from '../runners/contract.ts'
import { splitMessage } from '../channels/split.ts'
import { audioDuration, audioType, judgeRecording, VoiceError, type VoiceLimits } from './audio.ts'
import { spokenText } from './spoken-text.ts'

export const DEFAULT_TRANSCRIPTION_MODEL = 'whisper-1'
export const DEFAULT_SPEECH_MODEL = 'gpt-4o-mini-tts'
export const DEFAULT_VOICE = 'alloy'
/** OpenAI's speech takes at most 4,096 characters at once; a longer answer is spoken in parts, cut at paragraph or word ends. */
const SPEECH_PART_CHARS = 4_000
/** A voice note is heard, or a part spoken, within this long, or given up. */
const SPEECH_TIMEOUT_MS = 120_000

/** What the voice needs of an agent. */
export interface VoiceAgent {
  id: string
  company_id: string
  name: string
  runner: string
  voice: AgentVoice
}

/** Whose speech it is and where it belongs. */
export interface VoicePlace {
  userId: string | null
  conversationId: string
}

export interface Heard {
  clipId: string
  text: string
  mediaType: string
  sizeBytes: number
  durationMs: number | undefined
}

export interface SpokenClip {
  clipId: string
  part: number
  durationMs: number | undefined
  sizeBytes: number
}

/** The spoken parts of an answer as the message lists them beside its documents. */
export function spokenAttachments(clips: SpokenClip[]): Attachment[] {
  return clips.map((clip) => ({
    voice_clip_id: clip.clipId,
    name: clips.length === 1 ? 'Spoken answer' : `Spoken answer, part ${clip.part + 1} of ${clips.length}`,
    media_type: 'audio/ogg',
    size_bytes: clip.sizeBytes,
    ...(clip.durationMs === undefined ? {} : { duration_ms: clip.durationMs }),
  }))
}

/**
 * Speech for agents: a voice note heard (judged by its bytes, capped, transcribed by the runner the agent's voice
 * settings name, kept) and an answer spoken (in parts a platform accepts, kept for the web chat and the outboxes).
 * Each transcription and each part spoken is a usage record, paid by its length.
 */
export class Voice {
  constructor(
    private readonly options: { db: Db; runners: ReadonlyMap<string, Runner>; limits: VoiceLimits; log: Logger; budgets?: Pick<Budgets, 'refusal'> },
  ) {}

  get limits(): VoiceLimits {
    return this.options.limits
  }

  /** Whether the answer to a message should also be spoken: the agent's `answer_aloud`, and was it spoken to. */
  aloud(agent: VoiceAgent, spokenTo: boolean): boolean {
    if (!agent.voice.enabled) return false
    const when = agent.voice.answer_aloud ?? 'when_spoken_to'
    return when === 'always' || (when === 'when_spoken_to' && spokenTo)
  }

  /** The runner that does the agent's speech, refusing with the reason when there is none that can. */
  #runner(agent: VoiceAgent, need: 'transcribe' | 'speak'): Runner {
    if (!agent.voice.enabled) throw new VoiceError('off', `${agent.name} does not listen to voice notes; please write instead.`)
    const name = agent.voice.provider || agent.runner
    const runner = this.options.runners.get(name)
    if (!runner?.[need]) {
      const what = need === 'transcribe' ? 'hear voice notes' : 'speak'
      throw new VoiceError('off', `${agent.name} cannot ${what} just now: its speech runner "${name}" ${runner ? 'offers no speech' : 'is not installed'}.`)
    }
    return runner
  }

  /** Hears a voice note said to the agent; the transcript is what the person said. Throws VoiceError saying why not. */
  async hear(agent: VoiceAgent, place: VoicePlace, bytes: Uint8Array, signal?: AbortSignal): Promise<Heard> {
    const runner = this.#runner(agent, 'transcribe')
    const recording = await judgeRecording(bytes, this.options.limits)
    // Hearing is paid for: a spent budget refuses it as it refuses a turn.
    const refused = place.userId ? await this.options.budgets?.refusal({ userId: place.userId, companyId: agent.company_id }) : undefined
    if (refused) throw new VoiceError('budget', refused)
    const model = agent.voice.transcription_model || DEFAULT_TRANSCRIPTION_MODEL
    let result
    try {
      result = await runner.transcribe!({
        audio: recording.bytes,
        mediaType: recording.mediaType,
        filename: recording.filename,
        model,
        ...(agent.voice.language ? { language: agent.voice.language } : {}),
        durationMs: recording.durationMs ?? 0,
        signal: timeout(signal),
      })
    } catch (error) {
      this.options.log.warn('a voice note was not transcribed', { agent_id: agent.id, error: String(error) })
      throw new VoiceError('failed', `The voice note could not be transcribed (${describe(error)}); please write it instead.`)
    }
    if (result.text === '') throw new VoiceError('silent', 'No words could be made out in the voice note; please say it again or write it.')
    const clipId = Bun.randomUUIDv7()
    // The note and what hearing it cost are kept together, or neither.
    await this.options.db.transaction().execute(async (tx) => {
      await tx
        .insertInto('voice_clips')
        .values({ id: clipId, company_id: agent.company_id, conversation_id: place.conversationId, direction: 'heard', media_type: recording.mediaType, bytes: recording.bytes, duration_ms: recording.durationMs ?? null })
        .execute()
      await usage(tx, agent, place, model, result.cost_usd, recording.durationMs ?? 0)
    })
    return { clipId, text: result.text, mediaType: recording.mediaType, sizeBytes: recording.bytes.length, durationMs: recording.durationMs }
  }

  /**
   * Speaks an answer the agent gave (`messageId`), as OGG/Opus, in parts of at most a few thousand characters; the
   * clips are kept under the message. Throws when the runner cannot; the text has gone already, so nothing is lost.
   */
  async speak(agent: VoiceAgent, place: VoicePlace, messageId: string, text: string, signal?: AbortSignal): Promise<SpokenClip[]> {
    const runner = this.#runner(agent, 'speak')
    const model = agent.voice.speech_model || DEFAULT_SPEECH_MODEL
    const voice = agent.voice.voice_id || DEFAULT_VOICE
    const parts = splitMessage(spokenText(text), SPEECH_PART_CHARS).filter((part) => part.trim() !== '')
    const clips: SpokenClip[] = []
    for (const [part, words] of parts.entries()) {
      const { audio, cost_usd } = await runner.speak!({ text: words, model, voice, format: 'opus', signal: timeout(signal) })
      // What came back is judged like anything received: a provider answering an error page is not a voice note.
      const mediaType = await audioType(audio)
      if (mediaType !== 'audio/ogg') throw new Error(`The speech runner answered ${mediaType ?? 'something that is not audio'} where OGG/Opus was asked for.`)
      const durationMs = await audioDuration(audio, mediaType).catch(() => undefined)
      const clipId = Bun.randomUUIDv7()
      await this.options.db.transaction().execute(async (tx) => {
        await tx
          .insertInto('voice_clips')
          .values({ id: clipId, company_id: agent.company_id, conversation_id: place.conversationId, message_id: messageId, direction: 'spoken', part, media_type: mediaType, bytes: audio, duration_ms: durationMs ?? null })
          .execute()
        await usage(tx, agent, place, model, cost_usd, durationMs ?? 0)
      })
      clips.push({ clipId, part, durationMs, sizeBytes: audio.length })
    }
    // The answer carries its spoken parts, so the web chat offers them to play, now and after a reload.
    await this.options.db
      .updateTable('webchat_messages')
      .set({ attachments: sql`attachments || ${jsonb(spokenAttachments(clips))}` })
      .where('id', '=', messageId)
      .execute()
    return clips
  }
}

/** What one transcription or one part spoken cost, as a usage record with its length. */
async function usage(db: Executor, agent: VoiceAgent, place: VoicePlace, model: string, cost: number, ms: number): Promise<void> {
  await db
    .insertInto('usage_records')
    .values({
      id: Bun.randomUUIDv7(),
      company_id: agent.company_id,
      user_id: place.userId,
      source: 'voice',
      runner: agent.voice.provider || agent.runner,
      model,
      cost_usd: costOf(cost),
      conversation_id: place.conversationId,
      agent_id: agent.id,
      audio_ms: Math.max(0, Math.round(ms)),
      outcome: 'complete',
    })
    .execute()
}

/** A clip's audio, for the web chat's player and the outboxes. */
export async function voiceClip(db: Executor, id: string) {
  return db.selectFrom('voice_clips').select(['id', 'company_id', 'conversation_id', 'message_id', 'direction', 'part', 'media_type', 'bytes', 'duration_ms']).where('id', '=', id).executeTakeFirst()
}

function timeout(signal?: AbortSignal): AbortSignal {
  const limit = AbortSignal.timeout(SPEECH_TIMEOUT_MS)
  return signal ? AbortSignal.any([signal, limit]) : limit
}

function describe(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error)
  return message.length > 200 ? `${message.slice(0, 200)}…` : message
}
