import { z } from '@hono/zod-openapi'
import type { AliasableExpression, ExpressionBuilder } from 'kysely'
import type { Actor, Role } from '../auth/actor.ts'
import type { TenantScope } from '../db/scoped.ts'
import { columnKind, type ColumnKind } from './column-kind.ts'

export type Verb = 'list' | 'read' | 'create' | 'update' | 'delete'
export const VERBS: readonly Verb[] = ['list', 'read', 'create', 'update', 'delete']

/** A read-only field computed in SQL in the same query as the row (no query per row). */
export interface ComputedField {
  schema: z.ZodType
  select: (eb: ExpressionBuilder<any, any>) => AliasableExpression<unknown>
}

export interface ModelSpec extends TenantScope {
  /** The name in `/api/v1/{model}`, as the specification writes it. */
  name: string
  description: string
  /** Fields a caller writes: their validation and defaults. */
  fields: z.ZodRawShape
  /** Fields accepted on write and never read back (a password). */
  writeOnly?: readonly string[]
  /** Stored fields the server sets; returned, never taken from a body. */
  readOnly?: z.ZodRawShape
  /** Read-only fields set to the acting user's id on create. */
  actorColumns?: readonly string[]
  computed?: Record<string, ComputedField>
  /** The least role allowed per verb; ModelAcl rows may override it. */
  access: Record<Verb, Role>
  /** Turns validated input into column values (hashing a password, fixing server-set columns). */
  toRow?: (input: Record<string, unknown>, actor: Actor) => Record<string, unknown> | Promise<Record<string, unknown>>
  example: Record<string, unknown>
}

export interface Model extends ModelSpec {
  /** Response record. */
  record: z.ZodObject
  /** Body of create and replace: every writable field, unknown fields refused. */
  create: z.ZodObject
  /** Body of a JSON merge patch: any writable field, `null` resets it. */
  patch: z.ZodObject
  /** Stored columns a response may show, in order. */
  columns: string[]
  /** The kind of every field a list may filter or order by. */
  kinds: Map<string, ColumnKind>
  jsonColumns: Set<string>
}

const id = z.uuid().openapi({ example: '01936f3e-6d2a-7c41-9b1e-2f3a4b5c6d7e' })
const timestamp = z.iso.datetime({ offset: true }).openapi({ example: '2026-11-21T09:30:00.000Z' })

export function defineModel(spec: ModelSpec): Model {
  const writeOnly = new Set(spec.writeOnly ?? [])
  const readable = Object.fromEntries(Object.entries(spec.fields).filter(([name]) => !writeOnly.has(name)))
  const tenant = spec.tenantColumn ? { [spec.tenantColumn]: id } : {}
  const computedShape = Object.fromEntries(Object.entries(spec.computed ?? {}).map(([k, v]) => [k, v.schema]))

  const record = z
    .object({ id, ...tenant, ...readable, ...spec.readOnly, ...computedShape, created_at: timestamp, updated_at: timestamp })
    .openapi(spec.name, { description: spec.description })
  const create = z.strictObject(spec.fields).openapi(`${spec.name}Create`, { example: spec.example })
  const patch = z
    .strictObject(Object.fromEntries(Object.entries(spec.fields).map(([k, v]) => [k, (v as z.ZodType).nullable().optional()])))
    .openapi(`${spec.name}Patch`, {
      description: 'A JSON merge patch (RFC 7396): fields present are changed, `null` resets a field to its default.',
    })

  const columns = ['id', ...Object.keys(tenant), ...Object.keys(readable), ...Object.keys(spec.readOnly ?? {}), 'created_at', 'updated_at']
  const kinds = new Map<string, ColumnKind>()
  for (const [name, schema] of Object.entries(record.shape)) kinds.set(name, columnKind(schema as z.ZodType))
  const jsonColumns = new Set(
    Object.entries({ ...spec.fields, ...spec.readOnly }).filter(([, s]) => columnKind(s as z.ZodType) === 'json').map(([k]) => k),
  )
  return { ...spec, record, create, patch, columns, kinds, jsonColumns }
}
