import { z } from '@hono/zod-openapi'
import type { ExpressionBuilder } from 'kysely'
import { AUDIT_ACTIONS } from '../audit/trail.ts'
import type { Caller } from '../db/scoped.ts'
import { defineModel } from './define.ts'

const id = z.uuid().nullable()

/**
 * A company's admins read what happened in their company, and the account events (sign-ins, password changes) of
 * their members, which belong to no company; superadmins read everything.
 */
function readable(eb: ExpressionBuilder<any, any>, actor: Caller) {
  if (actor.isSuperadmin) return undefined
  return eb.or([
    eb('audit_events.company_id', '=', actor.companyId),
    eb.and([
      eb('audit_events.company_id', 'is', null),
      eb('audit_events.model', '=', 'User'),
      eb('audit_events.record_id', 'in', eb.selectFrom('company_users').select((e) => e.cast('company_users.user_id', 'text').as('id')).where('company_users.company_id', '=', actor.companyId)),
    ]),
  ])
}

export const AuditEvent = defineModel({
  name: 'AuditEvent',
  table: 'audit_events',
  description:
    'The audit trail: one event per write an admin would ask about (sign-ins, passwords, roles and memberships, MCP settings, plugins, vault names, OAuth grants, agents, tokens), ' +
    'recorded in the write’s own transaction. Written by the platform only; old events are deleted after SWITCHBOARD_AUDIT_RETENTION_DAYS.',
  fields: {},
  readOnly: {
    company_id: id.openapi({ description: 'The company it happened in; null for a person’s own account (a sign-in).' }),
    actor_id: id.openapi({ description: 'Who did it; null when nobody signed in did (a failed sign-in, a reset link spent).' }),
    action: z.enum(AUDIT_ACTIONS),
    model: z.string().openapi({ description: 'What was written: a model of this API, or Plugin, VaultSecret, Session.', example: 'McpServer' }),
    record_id: z.string().nullable().openapi({ description: 'Its id (a plugin’s or a secret’s name).' }),
    changes: z.record(z.string(), z.unknown()).openapi({
      description: 'Per field `{from, to}` (only `to` on create, only `from` on delete); `"changed"` for a secret, whose value is never recorded.',
    }),
    request_id: z.string().nullable().openapi({ description: 'The X-Request-Id of the request that made it.' }),
    address: z.string().nullable().openapi({ description: 'The address the request came from.' }),
  },
  recordRule: (eb, actor, access) => (access === 'read' ? readable(eb, actor) : eb.lit(false)),
  writtenElsewhere: 'The platform writes the audit trail as things happen; no one writes or deletes its events.',
  access: { list: 'admin', read: 'admin', create: 'superadmin', update: 'superadmin', delete: 'superadmin' },
  example: {},
})
