import type { Db } from '../db/schema.ts'
import { runTemplate, slot } from '../db/templates.ts'
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
  // Compiled once: every turn ends with it.
  await runTemplate(db, 'usage|turn', () => db.insertInto('usage_records').values(COLUMNS), [
    Bun.randomUUIDv7(),
    agent.company_id,
    actor.userId,
    agent.runner,
    agent.model,
    tokenCount(usage.input_tokens),
    tokenCount(usage.output_tokens),
    costOf(usage.cost_usd),
    conversation.id,
    agent.id,
    tokenCount(usage.tool_calls),
    usage.outcome,
  ], 'keyed')
}

/** The usage record's columns, each a slot of the template but its source. */
const COLUMNS = {
  id: slot(0),
  company_id: slot(1),
  user_id: slot(2),
  source: 'chat',
  runner: slot(3),
  model: slot(4),
  input_tokens: slot(5),
  output_tokens: slot(6),
  cost_usd: slot(7),
  conversation_id: slot(8),
  agent_id: slot(9),
  tool_calls: slot(10),
  outcome: slot(11),
} as const
