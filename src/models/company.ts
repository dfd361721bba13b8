import { z } from '@hono/zod-openapi'
import { guardMembership } from '../auth/ladder.ts'
import { defineModel } from './define.ts'
import { slug } from './fields.ts'
import { MEMBERSHIPS } from './memberships.ts'
import { visible } from './references.ts'
import { User } from './user.ts'

export const Company = defineModel({
  name: 'Company',
  table: 'companies',
  description: 'A tenant. Every tenant-scoped record belongs to exactly one company.',
  fields: {
    name: z.string().trim().min(1).max(200),
    slug,
  },
  // A company is its own tenant: members see the companies they belong to and change only the one they work
  // in; superadmins see and change all of them.
  recordRule: (eb, actor, access) => {
    if (actor.isSuperadmin) return undefined
    if (access === 'write') return eb('companies.id', '=', actor.companyId)
    return eb.exists(
      eb.selectFrom('company_users as m').select('m.id').whereRef('m.company_id', '=', 'companies.id').where('m.user_id', '=', actor.userId),
    )
  },
  audited: true,
  access: { list: 'member', read: 'member', create: 'superadmin', update: 'owner', delete: 'superadmin' },
  affectsAccess: true,
  example: { name: 'Acme', slug: 'acme' },
})

export const CompanyUser = defineModel({
  name: 'CompanyUser',
  ...MEMBERSHIPS,
  description: 'Membership of a user in a company, with the role that decides what they may do there.',
  fields: {
    user_id: z.uuid(),
    role: z.enum(['owner', 'admin', 'member']).default('member'),
  },
  references: { user_id: visible(() => User) },
  guard: guardMembership,
  audited: true,
  access: { list: 'member', read: 'member', create: 'admin', update: 'admin', delete: 'admin' },
  affectsAccess: true,
  example: { user_id: '01936f3e-6d2a-7c41-9b1e-2f3a4b5c6d7e', role: 'member' },
})
