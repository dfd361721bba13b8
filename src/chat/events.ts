/** What a chat turn streams to the client (DESIGN §4, Web chat), one JSON object per NDJSON line. */
export type ChatEvent =
  | { type: 'conversation'; conversation_id: string }
  | { type: 'typing' }
  /** Said by the platform to the people in the conversation (a session that expired); not the agent's answer. */
  | { type: 'notice'; text: string }
  | { type: 'tool_call'; tool: string }
  | { type: 'tool_result'; tool: string; result: string }
  | { type: 'stream'; text: string }
  | { type: 'stream_end' }
  | { type: 'message'; text: string; agent: string; message_id: string }
  | { type: 'error'; text: string; details: string; error_type: string }
  | { type: 'aborted'; message_id: string | null }
