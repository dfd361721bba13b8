import type { Db } from '../db/schema.ts'
import { costOf, tokenCount } from '../models/usage.ts'
import type { Turn } from './turn.ts'

/** What a turn's model calls cost, and how the turn ended. */
export interface TurnUsage {
  input_tokens: number
  output_tokens: number
  cost_usd: number
  tool_calls: number
  outcome: 'complete' | 'aborted' | 'error'
}

/**
 * The turn's UsageRecord, in the agent's company, charged to whoever the turn ran for. Kernel code for a turn already
 * admitted, so not scoped: the company is the agent's, never the caller's say.
 */
export async function recordTurnUsage(db: Db, turn: Pick<Turn, 'actor' | 'agent' | 'conversation'>, usage: TurnUsage): Promise<void> {
  const { actor, agent, conversation } = turn
  await db
    .insertInto('usage_records')
    .values({
      id: Bun.randomUUIDv7(),
      company_id: agent.company_id,
      user_id: actor.userId,
      source: 'chat',
      runner: agent.runner,
      model: agent.model,
      input_tokens: tokenCount(usage.input_tokens),
      output_tokens: tokenCount(usage.output_tokens),
      cost_usd: costOf(usage.cost_usd),
      conversation_id: conversation.id,
      agent_id: agent.id,
      tool_calls: tokenCount(usage.tool_calls),
      outcome: usage.outcome,
    })
    .execute()
}
