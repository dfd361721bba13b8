import { sql } from 'kysely'
import type { AgentChannels } from '../db/columns.ts'
import type { Channels } from './channels.ts'
import { CHANNEL_PLATFORMS } from './channels.ts'
import type { ChannelPlatform } from './contract.ts'

/** How long the console waits for a platform to say how the webhook fares. */
const REPORT_TIMEOUT_MS = 3_000

export interface ChannelState {
  platform: ChannelPlatform
  /** Present in the agent's channels and enabled there. */
  configured: boolean
  /** The plugin serving the platform, and whether a superadmin has it on. */
  plugin: { name: string; enabled: boolean } | null
  /** Where the platform must deliver (none for email, which fetches). */
  webhook_url: string | null
  /** Whether the platform reaches us: what it says where it can tell, else whether a signed request came. */
  reachable: boolean | null
  reachable_detail: string
  last_seen_at: string | null
  last_delivery_at: string | null
  last_error: string | null
  last_error_at: string | null
  /** Replies waiting to go out (being retried), and replies given up on. */
  pending_replies: number
  failed_replies: number
}

const iso = (time: Date | string | null) => (time ? new Date(time).toISOString() : null)

/** Each platform of the agent's channels (or only `only`) as the console shows it. */
export async function channelStates(channels: Channels, agent: { id: string; channels: AgentChannels }, only?: ChannelPlatform): Promise<ChannelState[]> {
  const db = channels.db
  const [statuses, counts] = await Promise.all([
    db.selectFrom('channel_status').selectAll().where('agent_id', '=', agent.id).execute(),
    db
      .selectFrom('channel_outbox')
      .select(['platform', 'status', sql<number>`count(*)::int`.as('n')])
      .where('agent_id', '=', agent.id)
      .where('status', 'in', ['pending', 'failed'])
      .groupBy(['platform', 'status'])
      .execute(),
  ])
  const platforms = CHANNEL_PLATFORMS.filter((p) => agent.channels?.[p] !== undefined && (only === undefined || p === only))
  return Promise.all(
    platforms.map(async (platform): Promise<ChannelState> => {
      const status = statuses.find((s) => s.platform === platform)
      const count = (state: string) => counts.find((c) => c.platform === platform && c.status === state)?.n ?? 0
      const endpoint = await channels.endpoint(agent.id, platform)
      const served = channels.served(platform)
      const driver = channels.driver(platform)
      const path = endpoint && driver?.webhookPath?.(endpoint)
      const seen = status?.last_seen_at ? `Last signed request ${iso(status.last_seen_at)}.` : 'No signed request from the platform yet.'
      let reachable: boolean | null = status?.last_seen_at ? true : null
      let detail = path ? seen : 'Fetched by the platform itself: no webhook.'
      if (endpoint && driver?.webhookReport) {
        const report = await Promise.race([
          driver.webhookReport(endpoint).catch((error: Error) => ({ reachable: null, detail: `The platform could not be asked: ${error.message}` })),
          Bun.sleep(REPORT_TIMEOUT_MS).then(() => ({ reachable: null, detail: 'The platform did not answer in time.' })),
        ])
        reachable = report.reachable ?? reachable
        detail = `${report.detail} ${path ? seen : ''}`.trim()
      }
      return {
        platform,
        configured: endpoint !== undefined,
        plugin: served ? { name: served.plugin, enabled: served.enabled } : null,
        webhook_url: path ? `${channels.publicBaseUrl}${path}` : null,
        reachable,
        reachable_detail: detail,
        last_seen_at: iso(status?.last_seen_at ?? null),
        last_delivery_at: iso(status?.last_delivery_at ?? null),
        last_error: status?.last_error ?? null,
        last_error_at: iso(status?.last_error_at ?? null),
        pending_replies: count('pending'),
        failed_replies: count('failed'),
      }
    }),
  )
}
