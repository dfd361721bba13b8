import { sql } from 'kysely'
import type { Executor } from '../db/schema.ts'

/** How a usage summary is grouped. */
export type UsageGrouping = 'day' | 'agent' | 'user' | 'model'

export interface UsageFigures {
  turns: number
  input_tokens: number
  output_tokens: number
  cost_usd: number
  tool_calls: number
}

export interface UsageRow extends UsageFigures {
  /** The day (YYYY-MM-DD), the agent's or person's id, or `runner/model`; null for what is no longer there. */
  key: string | null
  /** What a person reads: the day, the agent's or person's name, the model. */
  label: string
}

export interface UsageScope {
  companyId: string
  /** Only this person's usage; all the company's when unset. */
  userId?: string
  /** From this instant, up to (not including) `until`. */
  since: Date
  until: Date
}

const figures = [
  sql<number>`count(*) filter (where u.source = 'chat')::int`.as('turns'),
  sql<number>`coalesce(sum(u.input_tokens), 0)::float8`.as('input_tokens'),
  sql<number>`coalesce(sum(u.output_tokens), 0)::float8`.as('output_tokens'),
  sql<number>`coalesce(sum(u.cost_usd), 0)::float8`.as('cost_usd'),
  sql<number>`coalesce(sum(u.tool_calls), 0)::float8`.as('tool_calls'),
]

function numbers<T extends UsageFigures>(row: T): T {
  return { ...row, turns: Number(row.turns), input_tokens: Number(row.input_tokens), output_tokens: Number(row.output_tokens), cost_usd: Number(row.cost_usd), tool_calls: Number(row.tool_calls) }
}

function usage(db: Executor, scope: UsageScope) {
  return db
    .selectFrom('usage_records as u')
    .where('u.company_id', '=', scope.companyId)
    .$if(scope.userId !== undefined, (q) => q.where('u.user_id', '=', scope.userId!))
    .where('u.created_at', '>=', scope.since)
    .where('u.created_at', '<', scope.until)
}

/** The scope's usage grouped by day, agent, person or model, in one statement; the biggest cost first (days in order). */
export async function usageSummary(db: Executor, scope: UsageScope, by: UsageGrouping): Promise<UsageRow[]> {
  const base = usage(db, scope)
  const rows =
    by === 'day'
      ? await base
          .select([sql<string>`to_char(date_trunc('day', u.created_at at time zone 'UTC'), 'YYYY-MM-DD')`.as('key'), ...figures])
          .groupBy(sql`1`)
          .orderBy(sql`1`)
          .execute()
      : by === 'agent'
        ? await base
            .leftJoin('agent_configs as a', 'a.id', 'u.agent_id')
            .select([sql<string | null>`u.agent_id::text`.as('key'), sql<string>`coalesce(max(a.name), '')`.as('name'), ...figures])
            .groupBy('u.agent_id')
            .orderBy(sql`sum(u.cost_usd) desc`)
            .execute()
        : by === 'user'
          ? await base
              .leftJoin('users as p', 'p.id', 'u.user_id')
              .select([sql<string | null>`u.user_id::text`.as('key'), sql<string>`coalesce(max(nullif(p.display_name, '')), max(p.username), '')`.as('name'), ...figures])
              .groupBy('u.user_id')
              .orderBy(sql`sum(u.cost_usd) desc`)
              .execute()
          : await base
              .select([sql<string>`u.runner || '/' || u.model`.as('key'), ...figures])
              .groupBy(sql`1`)
              .orderBy(sql`sum(u.cost_usd) desc`)
              .execute()
  return rows.map((row) => {
    const { name, ...rest } = row as typeof row & { name?: string }
    const label = by === 'agent' || by === 'user' ? name || (row.key === null ? (by === 'agent' ? 'Other calls' : 'Deleted people') : 'Deleted') : String(row.key)
    return numbers({ ...rest, label })
  })
}

/** The scope's totals, with the background tasks started in the period. */
export async function usageTotals(db: Executor, scope: UsageScope): Promise<UsageFigures & { background_tasks: number }> {
  const [totals, tasks] = await Promise.all([
    usage(db, scope).select(figures).executeTakeFirstOrThrow(),
    db
      .selectFrom('background_tasks')
      .select(sql<number>`count(*)::int`.as('n'))
      .where('company_id', '=', scope.companyId)
      .$if(scope.userId !== undefined, (q) => q.where('user_id', '=', scope.userId!))
      .where('created_at', '>=', scope.since)
      .where('created_at', '<', scope.until)
      .executeTakeFirstOrThrow(),
  ])
  return { ...numbers(totals), background_tasks: Number(tasks.n) }
}
