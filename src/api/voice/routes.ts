import { createRoute, z } from '@hono/zod-openapi'
import { SPOKEN_FORMS } from '../../voice/audio.ts'
import { IdParam } from '../params.ts'
import { ProblemSchema, commonErrors, notFoundError, signedIn } from '../responses.ts'

export const VOICE_UPLOAD_PATH = '/api/chat/voice'

const problem = (description: string) => ({ description, content: { 'application/problem+json': { schema: ProblemSchema } } })

export const VoiceUpload = z
  .object({
    conversation_id: z.uuid().openapi({ description: 'The conversation the voice note is said in; you must take part in it.' }),
    file: z
      .instanceof(File, { message: 'attach the recording as a file part named "file"' })
      .openapi({ type: 'string', format: 'binary', description: `The recording: ${SPOKEN_FORMS}, judged by its content, not its name.` }),
  })
  .openapi('VoiceUpload')

const HeardVoiceNote = z
  .object({
    voice_clip_id: z.uuid().openapi({ description: 'Send it with the transcript as the message (POST /api/chat `voice_clip_id`): the note is kept beside the message.' }),
    text: z.string().openapi({ description: 'What was made out of the recording.', example: 'What is the weather in Paris today?' }),
    media_type: z.string().openapi({ example: 'audio/webm' }),
    size_bytes: z.int(),
    duration_ms: z.int().nullable().openapi({ description: 'How long it lasts; null where the recording does not say (a live WebM recording).' }),
  })
  .openapi('HeardVoiceNote')

export const hearVoiceRoute = createRoute({
  method: 'post',
  path: VOICE_UPLOAD_PATH,
  operationId: 'hearVoiceNote',
  summary: 'Transcribe a voice note said in a conversation',
  description:
    `Accepts ${SPOKEN_FORMS}, judged by the bytes, up to SWITCHBOARD_VOICE_MAX_BYTES (10 MiB) and SWITCHBOARD_VOICE_MAX_SECONDS (300 s) of sound. ` +
    'The conversation’s agent must hear voice notes (its `voice.enabled`); its speech runner transcribes the recording, which is kept. ' +
    'The transcript is not sent: the caller sends it as the message with `voice_clip_id`, so the person may read it first.',
  tags: ['Chat'],
  security: signedIn,
  request: { body: { required: true, content: { 'multipart/form-data': { schema: VoiceUpload } } } },
  responses: {
    201: { description: 'The recording, heard and kept.', content: { 'application/json': { schema: HeardVoiceNote } } },
    ...commonErrors,
    ...notFoundError,
    409: problem('The conversation’s agent does not hear voice notes, or its speech runner offers no transcription.'),
    413: problem('The recording is larger or longer than the voice note caps.'),
    415: problem(`The file is not ${SPOKEN_FORMS} by its content, or the body is not multipart/form-data.`),
    422: problem('A field is missing, the recording is damaged, or no words could be made out in it.'),
    429: problem('Over the request throttle, or the monthly budget is spent (hearing is paid for).'),
    502: problem('The speech runner’s provider failed to transcribe it.'),
  },
})

export const voiceClipRoute = createRoute({
  method: 'get',
  path: '/api/chat/voice/{id}',
  operationId: 'getVoiceClip',
  summary: 'Play a voice note or a spoken answer of a conversation',
  description: 'The audio as it was heard or spoken (a message’s attachment with `voice_clip_id` names it), for participants of its conversation.',
  tags: ['Chat'],
  security: signedIn,
  request: { params: IdParam },
  responses: {
    200: {
      description: 'The audio.',
      content: { 'audio/ogg': { schema: { type: 'string', format: 'binary' } }, 'audio/webm': { schema: { type: 'string', format: 'binary' } } },
    },
    ...commonErrors,
    ...notFoundError,
  },
})
