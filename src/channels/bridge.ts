import type { Db } from '../db/schema.ts'
import type { OutboundPolicy } from '../net/outbound.ts'
import { ChannelSendError, type ChannelDriver, type ChannelEndpoint, type ChannelTarget, type InboundMessage } from './contract.ts'

/** Where a bridged thread is: the bot's network (discord, matrix…) and its own id of the thread. */
export interface BridgeTarget extends ChannelTarget {
  network: string
  thread: string
}

/** What a bridge posts for one message a person sent on its platform. */
export interface BridgeMessage {
  network: string
  delivery_id: string
  thread: string
  sender: { id: string; name?: string }
  text: string
  attachments?: Array<{ name: string; base64: string }>
}

/**
 * The bridged message as every channel's: ids are the network's, prefixed with it, so a Discord user 42 and a
 * Matrix user 42 are two people, and a delivery is kept once per network.
 */
export function inboundOf(message: BridgeMessage): InboundMessage {
  const { network } = message
  return {
    deliveryId: `${network}:${message.delivery_id}`,
    sender: { id: `${network}:${message.sender.id}`, ...(message.sender.name ? { displayName: message.sender.name } : {}) },
    thread: { key: `${network}:${message.thread}`, target: { network, thread: message.thread } satisfies BridgeTarget },
    text: message.text,
    ...(message.attachments?.length ? { attachments: message.attachments } : {}),
  }
}

/**
 * The kernel's own driver of bridged platforms. A reply goes to the agent's callback URL when it has one (judged by
 * the outbound-address policy at each send, the internal secret as bearer token); otherwise it waits in
 * bridge_replies until the bridge fetches it.
 */
export function bridgeDriver(db: Db, outbound: OutboundPolicy, secret: () => string | undefined): ChannelDriver<'bridge'> {
  return {
    platform: 'bridge',
    maxLength: 4000,
    async send(endpoint: ChannelEndpoint<'bridge'>, target: ChannelTarget, text: string) {
      const { network, thread } = target as BridgeTarget
      const callback = endpoint.settings.callback_url
      if (!callback) {
        await db.insertInto('bridge_replies').values({ id: Bun.randomUUIDv7(), agent_id: endpoint.agentId, network, thread, text }).execute()
        return
      }
      const token = secret()
      const response = await outbound.fetch(callback, {
        method: 'POST',
        headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}) },
        body: JSON.stringify({ agent_id: endpoint.agentId, network, thread, text }),
        signal: AbortSignal.timeout(15_000),
      })
      // A 4xx will not get better by itself: the reply is kept as failed. Anything else is tried again.
      if (response.status >= 400 && response.status < 500 && response.status !== 429) throw new ChannelSendError(`The bridge refused the reply (${response.status}).`, false)
      if (!response.ok) throw new Error(`The bridge answered ${response.status}.`)
    },
  }
}

/** The replies waiting for a bridge of the agent (on one network, when named), oldest first; each is handed out once. */
export async function takeReplies(db: Db, agentId: string, network: string | undefined, limit: number) {
  return db.transaction().execute(async (tx) => {
    const rows = await tx
      .selectFrom('bridge_replies')
      .select('id')
      .where('agent_id', '=', agentId)
      .$if(network !== undefined, (q) => q.where('network', '=', network!))
      .orderBy('created_at')
      .orderBy('id')
      .limit(limit)
      .forUpdate()
      .skipLocked()
      .execute()
    if (rows.length === 0) return []
    const taken = await tx.deleteFrom('bridge_replies').where('id', 'in', rows.map((r) => r.id)).returning(['network', 'thread', 'text', 'created_at']).execute()
    return taken.sort((a, b) => new Date(a.created_at).getTime() - new Date(b.created_at).getTime()).map((r) => ({ ...r, created_at: new Date(r.created_at).toISOString() }))
  })
}
