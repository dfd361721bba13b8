import type { DeviceSignIn } from './device-sign-in.ts'
/** The runner contract (DESIGN §4, Runners): a runner streams events for one request to a language model. */

export interface ChatMessage {
  role: 'system' | 'user' | 'assistant' | 'tool'
  content: string
  /** On `tool` messages: the call this answers. */
  tool_call_id?: string
  /** On `assistant` messages that asked for tools. */
  tool_calls?: ToolCall[]
}

export interface ToolCall {
  id: string
  name: string
  arguments: Record<string, unknown>
}

export interface ToolSpec {
  name: string
  description: string
  /** JSON Schema of the arguments. */
  parameters: Record<string, unknown>
}

/** A model of a runner's registry: `id` in the console, `api_id` on the wire and for cost. */
export interface ModelEntry {
  id: string
  name: string
  api_id: string
  /** An id nobody has confirmed yet; a runner whose registry holds one is refused at start. */
  placeholder?: boolean
}

export interface RunnerRequest {
  messages: ChatMessage[]
  tools: ToolSpec[]
  model: ModelEntry
  /** Cancels the provider request (and kills a subprocess) when aborted: by the user, or by the timeout. */
  signal: AbortSignal
}

export type RunnerEvent =
  | { type: 'text'; text: string }
  | { type: 'tool_call'; call: ToolCall }
  | { type: 'usage'; input_tokens: number; output_tokens: number; cost_usd: number }
  | { type: 'done' }
  | { type: 'error'; text: string; details?: string; error_type: string }

/** A recording to turn into text: its bytes already judged to be audio, and measured. */
export interface TranscribeRequest {
  audio: Uint8Array
  /** What the bytes are (audio/ogg, audio/webm, audio/wav, audio/mpeg…), and a file name that says so. */
  mediaType: string
  filename: string
  /** The provider's name of the model. */
  model: string
  /** ISO 639-1, when the agent says what people speak. */
  language?: string
  /** How long the recording is: what transcription is paid by. */
  durationMs: number
  signal: AbortSignal
}

/** Text to say aloud, in a voice, as a format a platform plays. */
export interface SpeakRequest {
  text: string
  model: string
  voice: string
  /** opus: OGG/Opus, what Telegram and WhatsApp take as a voice note and browsers play. */
  format: 'opus' | 'mp3' | 'wav'
  signal: AbortSignal
}

export interface Runner {
  name: string
  /** The models the runner ships with: the registry's first content. */
  models(): ModelEntry[]
  /** The provider's current catalogue, for POST /models/refresh; absent when the provider has none to ask. */
  catalogue?(signal: AbortSignal): Promise<ModelEntry[]>
  /**
   * How the runner signs in to its provider; absent when it needs nothing (a local runner). `device`: with OAuth's
   * device-authorization grant, through the runner endpoints auth/login, auth/code and auth/logout.
   */
  auth?: { method: 'api_key'; configured(): Promise<boolean> } | { method: 'device'; configured(): Promise<boolean>; device: DeviceSignIn }
  stream(request: RunnerRequest): AsyncIterable<RunnerEvent>
  /** Speech to text, where the provider offers it (OpenAI's /audio/transcriptions, whisper.cpp's server, speaches). */
  transcribe?(request: TranscribeRequest): Promise<{ text: string; cost_usd: number }>
  /** Text to speech, where the provider offers it (OpenAI's /audio/speech, speaches). */
  speak?(request: SpeakRequest): Promise<{ audio: Uint8Array; cost_usd: number }>
}
