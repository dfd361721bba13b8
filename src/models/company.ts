import { z } from '@hono/zod-openapi'
import { guardMembership } from '../auth/ladder.ts'
import { ApiError } from '../errors.ts'
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
    require_sso: z.boolean().default(false).openapi({
      description: 'Members sign in only through one of the company’s identity providers: their passwords are refused, saying so. Needs an enabled provider.',
    }),
    owner_id: z.uuid().optional().openapi({
      description: 'Write-only, on create: the user who owns the company from the start (a CompanyUser with role owner). Owners change later through CompanyUser.',
    }),
  },
  writeOnly: ['owner_id'],
  references: { owner_id: visible(() => User) },
  toRow: ({ owner_id: _owner, ...row }) => row,
  async guard(tx, _actor, change) {
    // Requiring a provider that does not exist would lock every member out.
    if (change.after?.require_sso === true && change.before?.require_sso !== true) {
      const provider = change.before ? await tx.selectFrom('identity_providers').select('id').where('company_id', '=', change.before.id).where('enabled', '=', true).executeTakeFirst() : undefined
      if (!provider) {
        throw new ApiError('validation_error', 'Set up and enable an identity provider (IdentityProvider) before requiring it, or nobody could sign in.', {
          errors: [{ path: 'require_sso', message: 'needs an enabled identity provider' }],
        })
      }
    }
    if (change.before && change.after?.owner_id !== undefined) {
      throw new ApiError('validation_error', 'A company’s owner is chosen when it is made; later, change roles through its memberships (CompanyUser).', {
        errors: [{ path: 'owner_id', message: 'is set only when the company is made' }],
      })
    }
  },
  async afterCreate(db, record, _actor, input) {
    if (typeof input.owner_id !== 'string') return
    await db.insertInto('company_users').values({ id: Bun.randomUUIDv7(), company_id: String(record.id), user_id: input.owner_id, role: 'owner' }).execute()
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
