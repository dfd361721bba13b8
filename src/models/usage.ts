import { z } from '@hono/zod-openapi'
import { defineModel } from './define.ts'
import { companyMember, visible } from './references.ts'
import { WebchatConversation } from './webchat.ts'
import { AgentConfigRecord } from './agent-config.ts'

/** The largest count the integer columns hold. */
export const MAX_COUNT = 2_147_483_647

/** A runner's count as the columns take it: whole, not negative, in range. */
export function tokenCount(n: number): number {
  return Number.isFinite(n) ? Math.min(MAX_COUNT, Math.max(0, Math.round(n))) : 0
}

/** A runner's cost as the column takes it: not negative, finite. */
export function costOf(usd: number): number {
  return Number.isFinite(usd) ? Math.max(0, usd) : 0
}
const tokens = z.int().min(0).max(MAX_COUNT).default(0)

/** Written by the platform as calls are made; through the API only a superadmin may correct a row. */
export const UsageRecord = defineModel({
  name: 'UsageRecord',
  table: 'usage_records',
  description:
    'What a chat turn (all its model calls) or one model call outside a turn (an /rlm-query) cost the company: runner, model, tokens and USD, and who made it. ' +
    'The platform writes these; company admins read their own company’s.',
  tenantColumn: 'company_id',
  fields: {
    user_id: z.uuid().nullable().default(null).openapi({ description: 'Who made the call; null once that user is deleted.' }),
    source: z.string().min(1).max(64).openapi({ description: 'What made the call: `chat` for a chat turn, `voice` for speech (a note heard, an answer spoken), else the plugin’s name.' }),
    runner: z.string().min(1).max(64),
    model: z.string().min(1).max(200).openapi({ description: 'The runner’s model id.' }),
    input_tokens: tokens,
    output_tokens: tokens,
    cost_usd: z.number().min(0).max(1e9).default(0),
    conversation_id: z.uuid().nullable().default(null).openapi({ description: 'The conversation of a chat turn; null for other calls, or once it is deleted.' }),
    agent_id: z.uuid().nullable().default(null).openapi({ description: 'The agent of a chat turn; null for other calls, or once it is deleted.' }),
    tool_calls: z.int().min(0).max(MAX_COUNT).default(0).openapi({ description: 'How many tools the turn called.' }),
    audio_ms: z.int().min(0).max(MAX_COUNT).default(0).openapi({ description: 'How long the audio was, for speech (`voice`): a voice note transcribed or an answer spoken.' }),
    outcome: z.enum(['complete', 'aborted', 'error']).nullable().default(null).openapi({
      description: 'How a chat turn ended: answered, stopped (its tokens are what the provider had reported by then), or failed or out of time.',
    }),
  },
  references: { user_id: companyMember, conversation_id: visible(() => WebchatConversation), agent_id: visible(() => AgentConfigRecord) },
  access: { list: 'admin', read: 'admin', create: 'superadmin', update: 'superadmin', delete: 'superadmin' },
  example: { user_id: '01936f3e-6d2a-7c41-9b1e-2f3a4b5c6d7f', source: 'rlm', runner: 'openai', model: 'fast', input_tokens: 1200, output_tokens: 300, cost_usd: 0.0021 },
})
