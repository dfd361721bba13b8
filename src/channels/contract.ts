import type { AgentChannels, AgentEmail } from '../db/columns.ts'
import type { ChannelChoice, ChannelTarget } from '../db/schema.ts'
import type { Job, JobWork } from '../scheduler.ts'

export type { ChannelChoice, ChannelTarget }

/** The platforms an agent can be reached on besides the web chat. */
export type ChannelPlatform = 'telegram' | 'slack' | 'whatsapp' | 'email' | 'bridge'

/** The settings of one platform in an agent's `channels`. */
export type ChannelSettings<P extends ChannelPlatform = ChannelPlatform> = NonNullable<AgentChannels[P]>

/** An agent reachable on a platform: its channel is present and enabled, and the agent itself is enabled. */
export interface ChannelEndpoint<P extends ChannelPlatform = ChannelPlatform> {
  agentId: string
  companyId: string
  agentName: string
  platform: P
  settings: ChannelSettings<P>
  /** The agent's email settings (what the email channel sends and reads with). */
  email: AgentEmail
  /** A vault secret named in the settings: the agent's own of that name, else its company's. */
  secret(name: string): Promise<string | undefined>
}

/** A file that came with a message; documents go through the web chat's document pipeline. */
export interface InboundAttachment {
  name: string
  /** The bytes, base64: the message is stored as JSON until it is processed. */
  base64: string
}

/** One message a platform delivered, as a channel plugin read it (after its signature was checked). */
export interface InboundMessage {
  /** The platform's id of the delivery (Telegram update_id, Slack event_id, WhatsApp message id, Message-ID). */
  deliveryId: string
  sender: {
    /** The platform's id of the person: what UserPlatform.platform_user_id holds. */
    id: string
    username?: string
    displayName?: string
    /**
     * False when the platform cannot vouch for who sent it (an email whose sender the mailbox's server did not
     * authenticate): such a sender is treated as unknown, whoever they claim to be.
     */
    verified?: boolean
  }
  /**
   * The thread: `key` picks the conversation (same key, same person: same conversation); `target` is where the
   * answers go, kept as the plugin's own JSON and handed back to its send().
   */
  thread: { key: string; target: ChannelTarget }
  text: string
  attachments?: InboundAttachment[]
  /** Files the plugin could not fetch, and why: the sender is told, so a lost voice note never meets silence. */
  lost?: Array<{ name: string; why: string }>
}

/** A spoken answer to send: OGG/Opus bytes, and how long they play where that is known. */
export interface VoiceMessage {
  bytes: Uint8Array
  mediaType: string
  durationMs: number | undefined
  filename: string
}

/** Why a send failed, and whether trying again may help: a platform outage may, a blocked bot will not. */
export class ChannelSendError extends Error {
  constructor(
    message: string,
    readonly retryable: boolean,
    /** The platform said when to try again (a 429's retry_after). */
    readonly retryAfterMs?: number,
  ) {
    super(message)
    this.name = 'ChannelSendError'
  }
}

/** What the platform says of the webhook, for the console (Telegram's getWebhookInfo, say). */
export interface WebhookReport {
  reachable: boolean | null
  detail: string
}

/** How the kernel talks back to one platform: a channel plugin registers one. */
export interface ChannelDriver<P extends ChannelPlatform = ChannelPlatform> {
  platform: P
  /** The most characters one message may carry; longer answers are cut into several, at paragraph or word ends. */
  maxLength: number
  /** Sends one message to a thread. Throws ChannelSendError (or any error, taken as retryable) when it fails. */
  send(endpoint: ChannelEndpoint<P>, target: ChannelTarget, text: string): Promise<void>
  /**
   * Sends a message with buttons, where the platform has them. A pressed button comes back through receive() as
   * the presser's message whose text is the choice's `text`. Without this, the message goes out as text alone.
   */
  sendChoices?(endpoint: ChannelEndpoint<P>, target: ChannelTarget, text: string, choices: ChannelChoice[]): Promise<void>
  /**
   * Sends a spoken answer as the platform's voice message (OGG/Opus: Telegram's and WhatsApp's voice notes), after
   * its text has gone. Without this, the text alone is sent.
   */
  sendVoice?(endpoint: ChannelEndpoint<P>, target: ChannelTarget, voice: VoiceMessage): Promise<void>
  /** Shows that the agent is writing, where the platform can; repeated while the turn runs. Failures are ignored. */
  typing?(endpoint: ChannelEndpoint<P>, target: ChannelTarget): Promise<void>
  /** Where the platform should deliver to, for the console; none for a channel that fetches (email). */
  webhookPath?(endpoint: ChannelEndpoint<P>): string
  /** Asks the platform how the webhook fares, where it can tell. */
  webhookReport?(endpoint: ChannelEndpoint<P>): Promise<WebhookReport>
}

/** What a channel plugin uses of the kernel (PluginContext.channels). */
export interface ChannelKernel {
  /** Sends and types through this driver for its platform. One driver per platform. */
  register<P extends ChannelPlatform>(driver: ChannelDriver<P>): void
  /** The agent on this platform, or undefined when the agent is unknown, disabled, or its channel is off. */
  endpoint<P extends ChannelPlatform>(agentId: string, platform: P): Promise<ChannelEndpoint<P> | undefined>
  /**
   * Every agent reachable on the platform, across companies (a channel that fetches, as email does, visits each);
   * none while the calling plugin is switched off.
   */
  endpoints<P extends ChannelPlatform>(platform: P): Promise<ChannelEndpoint<P>[]>
  /** A request of the platform passed verification (a handshake counts): the webhook is reachable. */
  seen(endpoint: ChannelEndpoint): Promise<void>
  /** Something went wrong on the channel outside a send (a fetch, a refused setting): shown on the console. */
  failed(endpoint: ChannelEndpoint, error: string): Promise<void>
  /**
   * Keeps a delivery and has it answered soon, on this process or another: true when it is new, false when this
   * delivery id was received before (the platform retried), in which case nothing happens. Returns once stored, so
   * a webhook can acknowledge right after.
   */
  receive(endpoint: ChannelEndpoint, message: InboundMessage): Promise<boolean>
  /**
   * Judges a host a tenant set (a mail server) by the outbound-address policy and answers the address to connect
   * to, so a second DNS answer cannot differ; rejects naming why when the policy refuses it.
   */
  resolveAllowed(host: string): Promise<string>
  /**
   * Runs `work` every `intervalMs` on the platform's scheduler, the first time one interval from now, never two
   * rounds at once; stopped with the platform (a channel that fetches, as email does, polls this way).
   */
  every(name: string, intervalMs: number, work: JobWork): Job
  /** Aborted when the platform stops. */
  readonly signal: AbortSignal
  /** The public address webhooks are reached at (SWITCHBOARD_BASE_URL). */
  readonly publicBaseUrl: string
}
