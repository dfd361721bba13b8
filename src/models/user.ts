import { z } from '@hono/zod-openapi'
import { defineModel } from './define.ts'

export const User = defineModel({
  name: 'User',
  table: 'users',
  description: 'A person who signs in to the console or talks to agents. One table for every company.',
  fields: {
    email: z.email().max(320),
    username: z.string().regex(/^[A-Za-z0-9_.-]{2,64}$/, '2 to 64 letters, digits, dots, dashes or underscores'),
    display_name: z.string().trim().max(200).default(''),
    avatar: z.string().max(500).nullable().default(null).openapi({ description: 'Path under /static/avatars/ or a URL.' }),
    password: z.string().min(8).max(1024).optional().openapi({ description: 'Write-only; stored as an argon2id hash.' }),
  },
  writeOnly: ['password'],
  readOnly: { is_superadmin: z.boolean() },
  access: { list: 'admin', read: 'member', create: 'admin', update: 'admin', delete: 'admin' },
  async toRow({ password, ...row }) {
    return password === undefined ? row : { ...row, password_hash: await Bun.password.hash(String(password)) }
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
    platform: z.enum(['slack', 'telegram', 'whatsapp', 'email', 'webchat']),
    platform_user_id: z.string().trim().min(1).max(200),
    platform_username: z.string().max(200).default(''),
  },
  access: { list: 'member', read: 'member', create: 'admin', update: 'admin', delete: 'admin' },
  example: { user_id: '01936f3e-6d2a-7c41-9b1e-2f3a4b5c6d7e', platform: 'slack', platform_user_id: 'U024BE7LH' },
})
