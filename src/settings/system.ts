import { z } from '@hono/zod-openapi'
import { TtlCache } from '../cache.ts'
import type { Clock } from '../clock.ts'
import type { Db } from '../db/schema.ts'
import type { EventBus } from '../events/bus.ts'
import { flushOn } from '../events/caches.ts'

const WHO = z.enum(['members', 'admins'])

/** Who may start a conversation with the agent, as the setting says (the agent's own rule, else the default). */
export function whoStarts(rule: SettingValue<'chat.who_starts_conversations'>, agentId: string): 'members' | 'admins' {
  return typeof rule === 'string' ? rule : (rule.agents[agentId] ?? rule.default)
}

/**
 * The platform-wide settings an operator changes without a restart, as SystemConfig keys: each with its schema (a
 * SystemConfig record of a known key is refused unless its value fits), its default, and the code that reads it.
 * Other keys stay free for operators' and plugins' own use.
 */
export const SETTINGS = {
  'platform.name': {
    schema: z.string().trim().min(1).max(60),
    default: 'Switchboard',
    description: 'The platform’s name, in the console’s header, its page titles and the sign-in page.',
  },
  'platform.banner': {
    schema: z.string().trim().max(500),
    default: '',
    description: 'A notice on every page of the console and the web chat (a maintenance window, say); empty for none.',
  },
  'chat.who_starts_conversations': {
    schema: z.union([
      WHO,
      z.strictObject({ default: WHO, agents: z.record(z.uuid(), WHO).default({}) }),
    ]),
    default: 'members',
    description:
      'Who may start new conversations with agents, in the web chat and through the API: "members" (everyone) or "admins", or per agent as {"default": "members", "agents": {"<agent id>": "admins"}}. Existing conversations go on either way.',
  },
  'retention.artifact_days': {
    schema: z.int().min(1).max(365),
    default: 30,
    description: 'How many days an artifact is kept when whoever makes it does not say (it is deleted then unless pinned).',
  },
  'retention.conversation_days': {
    schema: z.int().min(0).max(36_500),
    default: 0,
    description: 'Conversations with no message for this many days are deleted, with their messages and documents; 0 keeps them.',
  },
} as const satisfies Record<string, { schema: z.ZodType; default: unknown; description: string }>

export type SettingKey = keyof typeof SETTINGS
export type SettingValue<K extends SettingKey> = z.output<(typeof SETTINGS)[K]['schema']>

export function isSetting(key: string): key is SettingKey {
  return Object.hasOwn(SETTINGS, key)
}

/** What is wrong with `value` as the setting `key`, or nothing (also for a key that is no setting). */
export function settingProblem(key: string, value: unknown): string | undefined {
  if (!isSetting(key)) return undefined
  const parsed = SETTINGS[key].schema.safeParse(value)
  return parsed.success ? undefined : parsed.error.issues.map((issue) => issue.message).join('; ')
}

/** The settings as the code reads them: stored values over defaults, cached and dropped after every write to them. */
export class SystemSettings {
  readonly #values: TtlCache<'all', Map<string, unknown>>

  constructor(
    private readonly db: Db,
    clock: Clock,
    events?: EventBus,
  ) {
    this.#values = new TtlCache(clock, 60_000)
    if (events) flushOn(events, 'system-settings', () => this.#values.clear())
  }

  async get<K extends SettingKey>(key: K): Promise<SettingValue<K>> {
    const stored = (await this.#all()).get(key)
    // A value stored before its key became a setting (or by hand) may not fit: the default then stands.
    const parsed = SETTINGS[key].schema.safeParse(stored)
    return (stored !== undefined && parsed.success ? parsed.data : SETTINGS[key].default) as SettingValue<K>
  }

  #all(): Promise<Map<string, unknown>> {
    return this.#values.get('all', async () => {
      const rows = await this.db.selectFrom('system_config').select(['key', 'value']).where('key', 'in', Object.keys(SETTINGS)).execute()
      return new Map(rows.map((row) => [row.key, row.value]))
    })
  }
}
