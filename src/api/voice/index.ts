import type { Context, MiddlewareHandler } from 'hono'
import type { OpenAPIHono } from '@hono/zod-openapi'
import { bodyLimit } from 'hono/body-limit'
import { requireActor } from '../../auth/access.ts'
import { describeBytes } from '../../documents/sizes.ts'
import { ApiError, type ErrorCode } from '../../errors.ts'
import type { ApiEnv } from '../../http/env.ts'
import { getRecord } from '../../models/records.ts'
import { AgentConfigRecord } from '../../models/agent-config.ts'
import { WebchatConversation } from '../../models/webchat.ts'
import { VoiceError, type VoiceErrorKind } from '../../voice/audio.ts'
import { voiceClip } from '../../voice/voice.ts'
import { hearVoiceRoute, voiceClipRoute, VOICE_UPLOAD_PATH } from './routes.ts'

export { VOICE_UPLOAD_PATH }

// Room in a multipart body for what is not the recording: boundaries, part headers, the conversation id.
const MULTIPART_OVERHEAD = 16 * 1024

/** How a refused voice note is answered: what the caller can do about it decides the status. */
const STATUS_OF: Record<VoiceErrorKind, ErrorCode> = {
  unsupported: 'unsupported_media_type',
  too_large: 'payload_too_large',
  too_long: 'payload_too_large',
  unreadable: 'validation_error',
  silent: 'validation_error',
  off: 'conflict',
  failed: 'bad_gateway',
  budget: 'budget_exceeded',
}

function refusal(error: VoiceError): ApiError {
  const code = STATUS_OF[error.kind]
  return new ApiError(code, error.message, code === 'validation_error' ? { errors: [{ path: 'file', message: error.message }] } : undefined)
}

/**
 * Before the body is read: the caller is signed in and sends a form, and the body is held to the voice note cap
 * (the api app's general limit is far smaller than a recording may be).
 */
export function voiceUploadGuards(maxBytes: number): MiddlewareHandler<ApiEnv>[] {
  const limit = bodyLimit({
    maxSize: maxBytes + MULTIPART_OVERHEAD,
    onError: () => {
      throw new ApiError('payload_too_large', `The upload is larger than ${describeBytes(maxBytes)}, the most a voice note may be.`)
    },
  })
  const admit: MiddlewareHandler<ApiEnv> = async (c, next) => {
    requireActor(c.var.actor)
    if (!/^multipart\/form-data\s*;/i.test(c.req.header('content-type') ?? '')) {
      throw new ApiError('unsupported_media_type', 'Send the recording as multipart/form-data with the fields conversation_id and file.')
    }
    await next()
  }
  return [admit, limit]
}

type HearContext = Context<ApiEnv, string, { out: { form: { conversation_id: string; file: File } } }>

/** POST /api/chat/voice: the recording judged, transcribed by the agent's speech runner, kept. */
async function hear(c: HearContext) {
  const { db, voice } = c.var.services
  const actor = requireActor(c.var.actor)
  const { conversation_id, file } = c.req.valid('form')
  // Another company's conversation, or one the caller takes no part in, is not there (404).
  const { record: conversation } = await getRecord(db, actor, WebchatConversation, conversation_id)
  if (!conversation.agent_id) throw new ApiError('conflict', 'This conversation has no agent any more (it was deleted).')
  const { record: agent } = await getRecord(db, actor, AgentConfigRecord, conversation.agent_id)
  if (file.size > voice.limits.maxBytes) {
    throw new ApiError('payload_too_large', `The recording is ${describeBytes(file.size)}; a voice note may be at most ${describeBytes(voice.limits.maxBytes)}.`)
  }
  try {
    const heard = await voice.hear(agent, { userId: actor.userId, conversationId: conversation.id }, new Uint8Array(await file.arrayBuffer()), c.req.raw.signal)
    return c.json({ voice_clip_id: heard.clipId, text: heard.text, media_type: heard.mediaType, size_bytes: heard.sizeBytes, duration_ms: heard.durationMs ?? null }, 201)
  } catch (error) {
    throw error instanceof VoiceError ? refusal(error) : error
  }
}

/** Voice notes heard in a conversation and its answers spoken: sent to whoever takes part in it. */
export function mountVoice(app: OpenAPIHono<ApiEnv>): void {
  app.openapi(hearVoiceRoute, hear)
  app.openapi(voiceClipRoute, async (c) => {
    const { db } = c.var.services
    const actor = requireActor(c.var.actor)
    const clip = await voiceClip(db, c.req.valid('param').id.toLowerCase())
    if (!clip || clip.company_id !== actor.companyId) throw new ApiError('not_found', 'No such voice note.')
    // Only its conversation's people may play it: anyone else gets the same 404 as for a clip that is not there.
    await getRecord(db, actor, WebchatConversation, clip.conversation_id).catch(() => {
      throw new ApiError('not_found', 'No such voice note.')
    })
    return c.body(clip.bytes as Uint8Array<ArrayBuffer>, 200, {
      'content-type': clip.media_type,
      'x-content-type-options': 'nosniff',
      'content-security-policy': "default-src 'none'; sandbox",
      // A clip never changes: the browser keeps it, for this person only.
      'cache-control': 'private, max-age=86400, immutable',
    }) as never
  })
}
