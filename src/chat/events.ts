import type { ApprovalView } from '../approvals/approvals.ts'
import type { PlanView } from '../plans/view.ts'

/** What a chat turn streams to the client (DESIGN §4, Web chat), one JSON object per NDJSON line. */
export type ChatEvent =
  | { type: 'conversation'; conversation_id: string }
  | { type: 'typing' }
  /**
   * Said by the platform to the people in the conversation (a session that expired); not the agent's answer. A
   * budget's notice (nearly spent) also reaches people on their channel.
   */
  | { type: 'notice'; text: string; kind?: 'budget' }
  | { type: 'tool_call'; tool: string }
  | { type: 'tool_result'; tool: string; result: string }
  | { type: 'stream'; text: string }
  | { type: 'stream_end' }
  /** The agent's stored answer; `task_id` marks a background task's result, which may land while another answer streams. */
  /** `version_of`: a regenerated answer, which replaces that group's current answer (kept as an earlier version). */
  | { type: 'message'; text: string; agent: string; message_id: string; task_id?: string; version_of?: string }
  | { type: 'error'; text: string; details: string; error_type: string }
  | { type: 'aborted'; message_id: string | null }

/** A file attached to a message, as the message stores it: a document read, or the voice note the message was heard from. */
export interface Attachment {
  document_id?: string
  /** The recording the message's text was transcribed from, served at /api/chat/voice/{id}. */
  voice_clip_id?: string
  duration_ms?: number
  name: string
  media_type: string
  size_bytes: number
}

/**
 * What the people of a conversation see live in the web chat, on every process: the turn's events and what the
 * participants do. A `stream` carries where its text starts in the answer, so a client that receives a piece twice
 * (a resume re-sends the answer so far) keeps it once.
 */
export type FeedEvent =
  | Exclude<ChatEvent, { type: 'conversation' | 'stream' | 'tool_result' }>
  /** An answer was spoken: its parts, to play beside it. */
  | { type: 'voice'; message_id: string; attachments: Attachment[] }
  | { type: 'stream'; text: string; offset: number }
  | {
      type: 'user_message'
      message_id: string
      sender: string
      display_name: string
      text: string
      time: string
      attachments: Attachment[]
    }
  | { type: 'user_typing'; sender: string; display_name: string }
  /** A question its writer edited before having it answered again. */
  | { type: 'user_message_edited'; message_id: string; text: string }
  | { type: 'conversation_update'; title: string }
  /** A tool call waiting for a person's yes, and again once answered: the conversation's card shows it. */
  | { type: 'approval'; approval: ApprovalView }
  /** Someone was added or removed: lists and the participants panel are stale. */
  | { type: 'participants' }
  /** The conversation's plan, whole, after each change: the plan panel redraws from it. */
  | { type: 'plan_created'; plan: PlanView }
  | { type: 'plan_task_update'; plan: PlanView }
  | { type: 'plan_updated'; plan: PlanView }
