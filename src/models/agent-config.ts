import { z } from '@hono/zod-openapi'
import { hasRole } from '../auth/actor.ts'
import { guardServiceAccount } from '../auth/ladder.ts'
import { ApiError } from '../errors.ts'
import { defineModel } from './define.ts'
import { AgentChannels, AgentContextOptions, AgentEmail, AgentMcpPermissions, AgentPlugins, AgentVoice, pluginName } from '../db/columns.ts'

export const AgentConfigRecord = defineModel({
  name: 'AgentConfigRecord',
  table: 'agent_configs',
  description: 'The full configuration of one agent.',
  tenantColumn: 'company_id',
  fields: {
    name: z.string().trim().min(1).max(100),
    description: z.string().max(2000).default(''),
    enabled: z.boolean().default(true),
    personality: z.string().max(100_000).default('').openapi({ description: 'System prompt: who the agent is.' }),
    runner: pluginName.default('echo').openapi({ description: 'Runner plugin that calls the language model.' }),
    model: z.string().max(200).default('').openapi({ description: 'Model id in the runner’s registry.' }),
    timeout_seconds: z.int().min(1).max(86_400).default(900),
    channels: AgentChannels.prefault({}),
    voice: AgentVoice.prefault({}),
    email: AgentEmail.prefault({}),
    mcp_permissions: AgentMcpPermissions.prefault({}),
    plugins: AgentPlugins.prefault({}),
    context_options: AgentContextOptions.prefault({}),
    starter_prompts: z
      .array(z.string().trim().min(1).max(500))
      .max(6)
      .default([])
      .openapi({ description: 'What the web chat offers to send to start a conversation with the agent, up to six.', example: ['What can you do?'] }),
  },
  readOnly: {
    avatar: z.string().nullable().openapi({ description: 'The agent’s picture, under /static/avatars/; set with PUT /api/agents/{id}/avatar.' }),
  },
  // Even where a ModelAcl lets members edit agents, the identity an agent acts with stays an admin's choice.
  async guard(tx, actor, change, context) {
    await guardServiceAccount(tx, actor, change)
    // Channel and email settings decide whose secrets verify a webhook and whose mail server vouches for a sender:
    // whoever sets them could speak as any linked person, so they stay an admin's even where members edit agents.
    const { before, after } = change
    // An absent web chat setting means on: the console's form, which shows it ticked, sends it that way.
    const meaning = (record: { channels?: unknown; email?: unknown } | undefined, field: 'channels' | 'email') => {
      const value = (record?.[field] ?? {}) as Record<string, unknown>
      return field === 'channels' ? { ...value, webchat: value.webchat ?? { enabled: true } } : value
    }
    const same = (field: 'channels' | 'email') => Bun.deepEquals(meaning(before, field), meaning(after, field))
    if (after && (!same('channels') || !same('email')) && !hasRole(actor, 'admin')) {
      throw new ApiError('forbidden', 'Only company admins change an agent’s channels and email settings.')
    }
    // Mail servers are addresses a tenant sets: the outbound-address policy judges them as it does URLs.
    const email = change.after?.email as AgentEmail | undefined
    for (const server of ['imap', 'smtp'] as const) {
      const host = email?.[server]?.host
      if (host) await context.checkOutbound(`email.${server}.host`, `https://${host.includes(':') && !host.startsWith('[') ? `[${host}]` : host}`)
    }
    const callback = (change.after?.channels as AgentChannels | undefined)?.bridge?.callback_url
    if (callback) await context.checkOutbound('channels.bridge.callback_url', callback)
  },
  audited: true,
  access: { list: 'member', read: 'member', create: 'admin', update: 'admin', delete: 'admin' },
  example: {
    name: 'helpdesk',
    personality: 'You answer questions about our product, briefly and kindly.',
    runner: 'echo',
    model: 'echo-1',
    channels: { webchat: { enabled: true } },
    email: { account: 'help@example.com', sender_name: 'Helpdesk' },
    plugins: { enabled: ['mcp-planning'] },
    context_options: { session_ttl_minutes: 120 },
  },
})
