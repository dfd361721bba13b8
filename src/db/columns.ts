import { z } from '@hono/zod-openapi'

/**
 * What the store keeps in its JSON columns, as zod shapes: the models validate writes with them and the schema
 * types the columns by them, so the store imports nothing above itself. With them, the field shapes they are made of.
 */

export const nullableUuid = z.uuid().nullable().default(null)

/** A vault secret's name, used wherever configuration refers to a secret instead of holding it. */
export const secretName = z
  .string()
  .regex(/^[A-Za-z0-9_.\-/]{1,128}$/, 'a vault secret name: letters, digits and _ . - /')
  .openapi({ description: 'Name of a vault secret; the value itself is never stored here.' })

export const pluginName = z.string().regex(/^[a-z0-9][a-z0-9-]{0,63}$/, 'a plugin name: lowercase letters, digits, dashes')

/** Environment values or headers, each given inline or named in the vault. */
export type Values = Record<string, { value: string } | { secret: string }>

const enabled = z.boolean().default(true)
const channelBase = {
  enabled,
  unknown_senders: z
    .enum(['invite', 'refuse'])
    .default('invite')
    .openapi({ description: 'What a sender not linked to a user of the company is told: how to link their account (invite), or only that the agent does not talk to them (refuse).' }),
}

const mailServer = (port: number) =>
  z.strictObject({
    host: z.string().trim().min(1).max(253).regex(/^[A-Za-z0-9.:[\]-]+$/, 'a host name or address'),
    port: z.int().min(1).max(65_535).default(port),
    secure: z
      .boolean()
      .default(true)
      .openapi({
        description:
          'TLS from the start (ports 993 and 465). False upgrades with STARTTLS only where the server offers it: on a path someone can tamper with, the password may then travel in clear.',
      }),
  })

/** Per-channel settings; secrets are vault names, never values. */
export const AgentChannels = z
  .strictObject({
    webchat: z.strictObject({ enabled }).optional(),
    slack: z
      .strictObject({ ...channelBase, bot_token_secret: secretName, signing_secret_secret: secretName, app_id: z.string().max(64).optional() })
      .optional(),
    telegram: z.strictObject({ ...channelBase, bot_token_secret: secretName, webhook_secret_secret: secretName.optional() }).optional(),
    whatsapp: z
      .strictObject({
        ...channelBase,
        phone_number_id: z.string().regex(/^\d{1,32}$/),
        access_token_secret: secretName,
        app_secret_secret: secretName,
        verify_token_secret: secretName.optional().openapi({ description: 'Vault name of the verify token typed into the Meta dashboard; the subscription handshake is refused without it.' }),
      })
      .optional(),
    email: z.strictObject({ ...channelBase }).optional(),
    bridge: z
      .strictObject({
        ...channelBase,
        callback_url: z.url({ protocol: /^https?$/ }).max(2048).optional().openapi({
          description:
            'Where the agent’s replies are POSTed (JSON, with the internal secret as bearer token), for a bridge that takes callbacks; the outbound-address policy judges it. Without it, the bridge fetches them: GET /api/internal/bridge/{agent_id}/replies.',
        }),
      })
      .optional()
      .openapi({ description: 'An out-of-process bot for a platform without a plugin (Discord, Matrix, Teams…), through /api/internal/bridge.' }),
  })
  .openapi('AgentChannels', { description: 'Where the agent can be reached. A channel absent here is off.' })
export type AgentChannels = z.output<typeof AgentChannels>

export const AgentVoice = z
  .strictObject({
    enabled: z.boolean().default(false).openapi({ description: 'The agent hears voice notes (transcribed, the transcript is the message) and may answer aloud.' }),
    provider: z.string().max(64).optional().openapi({ description: 'The runner that hears and speaks (one offering speech, such as openai); the agent’s own runner when left out.' }),
    transcription_model: z.string().min(1).max(200).optional().openapi({ description: 'The speech-to-text model, as the provider names it (whisper-1 when left out).' }),
    speech_model: z.string().min(1).max(200).optional().openapi({ description: 'The text-to-speech model, as the provider names it (gpt-4o-mini-tts when left out).' }),
    voice_id: z.string().max(128).optional().openapi({ description: 'The voice the answers are spoken in, as the provider names it (alloy when left out).' }),
    language: z
      .string()
      .regex(/^[a-z]{2,3}(-[A-Za-z0-9]{2,8})*$/, 'a BCP 47 language tag')
      .optional()
      .openapi({ description: 'What people speak to the agent, which helps transcription; guessed from the audio when left out.' }),
    answer_aloud: z
      .enum(['never', 'always', 'when_spoken_to'])
      .default('when_spoken_to')
      .openapi({ description: 'When an answer is also spoken (the text always goes too): never, always, or when the person sent a voice note.' }),
  })
  .openapi('AgentVoice')
export type AgentVoice = z.output<typeof AgentVoice>

export const AgentEmail = z
  .strictObject({
    account: z.email().optional().openapi({ description: 'Mailbox the agent reads and sends from.' }),
    sender_name: z.string().max(200).optional(),
    from_alias: z.email().optional(),
    signature: z.string().max(4000).optional(),
    imap: mailServer(993).optional().openapi({ description: 'Where the agent reads its mail.' }),
    smtp: mailServer(465).optional().openapi({ description: 'Where the agent sends its answers.' }),
    username: z.string().max(320).optional().openapi({ description: 'The mailbox login; the account address when left out.' }),
    password_secret: secretName.optional().openapi({ description: 'Vault name of the mailbox password (the agent’s secret of that name, else the company’s).' }),
    authserv_id: z
      .string()
      .max(255)
      .optional()
      .openapi({
        description:
          'The authserv-id the mailbox’s server writes in Authentication-Results. A sender counts as who the From address says only when that server reports dmarc=pass, or dkim=pass for the From domain; without it every sender is unknown.',
      }),
  })
  .openapi('AgentEmail')
export type AgentEmail = z.output<typeof AgentEmail>

const toolNames = z.array(z.string().min(1).max(128)).max(500)

export const AgentMcpPermissions = z
  .strictObject({
    servers: z
      .record(
        z.string().regex(/^[a-z0-9][a-z0-9_-]{0,63}$/),
        z.strictObject({
          allow: toolNames.optional().openapi({ description: 'Only these tools; absent means every tool not denied.' }),
          deny: toolNames.default([]),
          approve: toolNames.optional().openapi({ description: 'Tools of the server whose every call waits for a person’s yes, whatever the permission rules allow.' }),
        }),
      )
      .default({}),
  })
  .openapi('AgentMcpPermissions', { description: 'Which MCP servers and tools the agent may use.' })
export type AgentMcpPermissions = z.output<typeof AgentMcpPermissions>

export const AgentPlugins = z
  .strictObject({ enabled: z.array(pluginName).max(200).default([]) })
  .openapi('AgentPlugins')
export type AgentPlugins = z.output<typeof AgentPlugins>

export const AgentContextOptions = z
  .strictObject({
    session_ttl_minutes: z.int().min(1).max(525_600).nullable().default(null).openapi({
      description: 'Minutes after which a stale conversation session expires; the next answer starts with a notice.',
    }),
    service_account: nullableUuid.openapi({
      description: 'User whose identity and MCP permissions the agent uses instead of the caller’s.',
    }),
  })
  .openapi('AgentContextOptions')
export type AgentContextOptions = z.output<typeof AgentContextOptions>
