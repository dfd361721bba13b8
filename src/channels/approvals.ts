import type { ApprovalView } from '../approvals/approvals.ts'
import { hashSecret } from '../auth/secrets.ts'
import { ApiError } from '../errors.ts'
import type { Channels, ChannelsOptions } from './channels.ts'
import type { ChannelEndpoint, InboundMessage } from './contract.ts'
import { speakerOf } from './speakers.ts'

/** `YES 3F9A2C` or `no 3f9a2c`, alone on the first line of a message (an email's reply quotes below it). */
const ANSWER = /^\s*(yes|no|approve|deny)\s+([0-9a-f]{6})\s*[.!]?\s*$/i

/** The code a person answers with: the end of the request's id, whose random part it is. */
export const answerCode = (approvalId: string) => approvalId.replace(/-/g, '').slice(-6).toUpperCase()

/** What the platform is told of a request: while it waits, how to answer; once it ended, how. */
export function approvalText(a: ApprovalView, agentName: string): string {
  const call = `${a.tool} on ${a.server}`
  const code = answerCode(a.id)
  switch (a.status) {
    case 'pending': {
      const minutes = Math.max(1, Math.round((Date.parse(a.expires_at) - Date.now()) / 60_000))
      return `${agentName} wants to call ${call} with:\n${JSON.stringify(a.arguments, null, 2)}\n\nReply YES ${code} to let it, or NO ${code} to refuse. Without an answer within ${minutes} minute${minutes === 1 ? '' : 's'}, it is a no.`
    }
    case 'approved':
      return `Approved${a.decided_by_name ? ` by ${a.decided_by_name}` : ''}: ${agentName} calls ${call} now.`
    case 'denied':
      return `Declined${a.decided_by_name ? ` by ${a.decided_by_name}` : ''}: ${agentName} goes on without ${call}.`
    case 'expired':
      return `Nobody answered in time, so ${agentName} did not call ${call}.`
    default:
      return `The request to call ${call} ended with its turn; nothing was called.`
  }
}

/**
 * Tool approvals on the chat platforms, by reply keyword, which every platform carries: a request of a channel's
 * conversation is said in its thread with a short code, and `YES <code>` or `NO <code>` from the person answers it.
 * An answer is taken when the webhook delivers it, not queued behind the turn that waits for it (a thread's
 * messages are answered one after the other, and that turn is still running).
 */
export class ChannelApprovals {
  constructor(
    private readonly options: ChannelsOptions,
    private readonly channels: Channels,
  ) {}

  /** Says a request (new, or how it ended) in the thread of its conversation, if it has one. */
  async tell(approval: ApprovalView): Promise<void> {
    if (!approval.conversation_id) return
    const code = answerCode(approval.id)
    await this.channels.enqueueInConversation(approval.conversation_id, (agentName) => ({
      key: `approval:${approval.id}:${approval.status}`,
      text: approvalText(approval, agentName),
      // Where the platform has buttons, pressing one sends the words the text asks for.
      ...(approval.status === 'pending'
        ? {
            choices: [
              { label: 'Approve', text: `YES ${code}` },
              { label: 'Deny', text: `NO ${code}` },
            ],
          }
        : {}),
    }))
  }

  /**
   * Takes a message that answers a request waiting in the sender's thread: true when it did (the message goes no
   * further), false for any other message, which is answered as usual.
   */
  async answer(endpoint: ChannelEndpoint, message: InboundMessage, threadKey: string): Promise<boolean> {
    if (message.sender.verified === false) return false
    const said = ANSWER.exec(message.text.split('\n').find((line) => line.trim() !== '') ?? '')
    if (!said) return false
    const { db } = this.options
    const thread = await db
      .selectFrom('channel_threads')
      .select('conversation_id')
      .where('agent_id', '=', endpoint.agentId)
      .where('platform', '=', endpoint.platform)
      .where('thread_key', '=', threadKey)
      .executeTakeFirst()
    if (!thread) return false
    // Answered ones too, of late: a second answer (a second thought, a retried webhook) hears how it ended.
    const recent = await db
      .selectFrom('tool_approvals')
      .select('id')
      .where('conversation_id', '=', thread.conversation_id)
      .orderBy('created_at', 'desc')
      .limit(50)
      .execute()
    const asked = recent.find((a) => answerCode(a.id) === said[2]!.toUpperCase())
    if (!asked) return false
    const userId = await speakerOf(db, endpoint.companyId, endpoint.platform, message.sender)
    const actor = userId ? await this.options.authenticator.memberActor(userId, endpoint.companyId).catch(() => undefined) : undefined
    if (!actor) return false
    try {
      // Heard by everyone (the web chat's card too); the thread is told how it ended by tell().
      await this.options.approvals.decide(actor, asked.id, /^(yes|approve)$/i.test(said[1]!))
    } catch (error) {
      if (!(error instanceof ApiError)) throw error
      await this.channels.enqueue({
        companyId: endpoint.companyId,
        agentId: endpoint.agentId,
        platform: endpoint.platform,
        threadKey,
        target: message.thread.target,
        key: `approval-answer:${hashSecret(message.deliveryId)}`,
        text: error.message,
      })
    }
    return true
  }
}
