import { z } from '@hono/zod-openapi'
import { hasRole } from '../auth/actor.ts'
import { guardUser } from '../auth/ladder.ts'
import { defineModel } from './define.ts'
import { companyMember } from './references.ts'

/**
 * A picture the console shows: a file under /static/avatars/, or an http(s) URL. Nothing else (no javascript:, no
 * data:, no other local path) so an avatar can never run or reach into the platform.
 */
const avatar = z
  .string()
  .max(500)
  .refine((value) => /^\/static\/avatars\/[A-Za-z0-9][A-Za-z0-9._-]{0,199}$/.test(value) && !value.includes('..') || isWebUrl(value), 'a file under /static/avatars/ or an http(s) URL')
  .openapi({ description: 'A file under /static/avatars/, or an http(s) URL.' })

function isWebUrl(value: string): boolean {
  if (!/^https?:\/\//i.test(value)) return false
  try {
    const url = new URL(value)
    return (url.protocol === 'http:' || url.protocol === 'https:') && url.hostname !== '' && url.username === '' && url.password === ''
  } catch {
    return false
  }
}

export const User = defineModel({
  name: 'User',
  table: 'users',
  description: 'A person who signs in to the console or talks to agents. One table for every company.',
  fields: {
    email: z.email().max(320),
    username: z.string().regex(/^[A-Za-z0-9_.-]{2,64}$/, '2 to 64 letters, digits, dots, dashes or underscores'),
    display_name: z.string().trim().max(200).default(''),
    avatar: avatar.nullable().default(null),
    password: z.string().min(8).max(1024).optional().openapi({
      description:
        'Write-only; stored as an argon2id hash. Set when the account is made, or by a superadmin; users change their own with POST /api/me/password.',
    }),
    is_superadmin: z.boolean().optional().openapi({ description: 'Platform-wide operator. Only superadmins change it; the last one stays.' }),
  },
  writeOnly: ['password'],
  readAs: { is_superadmin: z.boolean() },
  // Users see themselves; company admins see their company's users. A user who also belongs to another company
  // can only be changed by themselves or a superadmin, so no admin reaches into another tenant's account.
  recordRule: (eb, actor, access) => {
    if (actor.isSuperadmin) return undefined
    const self = eb('users.id', '=', actor.userId)
    if (!hasRole(actor, 'admin') || actor.companyId === null) return self
    const inMyCompany = eb.exists(
      eb.selectFrom('company_users as m').select('m.id').whereRef('m.user_id', '=', 'users.id').where('m.company_id', '=', actor.companyId),
    )
    if (access === 'read') return eb.or([self, inMyCompany])
    const elsewhere = eb.exists(
      eb.selectFrom('company_users as o').select('o.id').whereRef('o.user_id', '=', 'users.id').where('o.company_id', '<>', actor.companyId),
    )
    return eb.or([self, eb.and([inMyCompany, eb.not(elsewhere), eb('users.is_superadmin', '=', false)])])
  },
  guard: guardUser,
  audited: true,
  access: { list: 'member', read: 'member', create: 'admin', update: 'member', delete: 'admin' },
  affectsAccess: true,
  async toRow({ password, ...row }) {
    return password === undefined ? row : { ...row, password_hash: await Bun.password.hash(String(password)) }
  },
  // A user made by a company admin joins that company, so the admin can see and manage them.
  async afterCreate(db, record, actor) {
    if (actor.companyId === null) return
    await db.insertInto('company_users').values({ id: Bun.randomUUIDv7(), company_id: actor.companyId, user_id: String(record.id), role: 'member' }).execute()
  },
  example: { email: 'ada@example.com', username: 'ada', display_name: 'Ada Lovelace' },
})

export const UserPlatform = defineModel({
  name: 'UserPlatform',
  table: 'user_platforms',
  description: 'Maps a user to their identity on a chat platform, so a Slack or Telegram sender is a known user.',
  tenantColumn: 'company_id',
  fields: {
    user_id: z.uuid(),
    platform: z.enum(['slack', 'telegram', 'whatsapp', 'email', 'webchat', 'bridge']),
    platform_user_id: z.string().trim().min(1).max(200),
    platform_username: z.string().max(200).default(''),
  },
  references: { user_id: companyMember },
  // A link lets whoever holds the platform account speak as the person: only the person makes one, by sending the
  // link code from /me/channels from that account. An admin may unlink; only the operator links by hand.
  audited: true,
  access: { list: 'member', read: 'member', create: 'superadmin', update: 'superadmin', delete: 'admin' },
  example: { user_id: '01936f3e-6d2a-7c41-9b1e-2f3a4b5c6d7e', platform: 'slack', platform_user_id: 'U024BE7LH' },
})
