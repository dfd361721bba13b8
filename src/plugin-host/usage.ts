import type { Context } from 'hono'
import type { ApiEnv } from '../http/env.ts'
import { scoped } from '../db/scoped.ts'
import { costOf, tokenCount, UsageRecord } from '../models/usage.ts'
import type { Services } from '../services.ts'
import { requireMember, type PluginEnv, type UsageReport } from './sdk.ts'

/** The kernel services of the api app a plugin's route runs in; the plugin's own code never sees them. */
function servicesOf(c: Context<PluginEnv>): Services {
  return (c as unknown as Context<ApiEnv>).get('services')
}

/** One UsageRecord in the caller's company (the scoped builder sets it), made by the plugin `source`. */
export async function recordUsage(c: Context<PluginEnv>, source: string, usage: UsageReport): Promise<void> {
  const actor = requireMember(c)
  await scoped(servicesOf(c).db, actor)
    .insertInto(UsageRecord, {
      id: Bun.randomUUIDv7(),
      user_id: actor.userId,
      source,
      runner: usage.runner,
      model: usage.model,
      input_tokens: tokenCount(usage.input_tokens),
      output_tokens: tokenCount(usage.output_tokens),
      cost_usd: costOf(usage.cost_usd),
    })
    .execute()
}
