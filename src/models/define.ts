import { z } from '@hono/zod-openapi'
import { getOpenApiMetadata } from '@asteasolutions/zod-to-openapi'
import type { AliasableExpression, ExpressionBuilder } from 'kysely'
import type { Actor, Role } from '../auth/actor.ts'
import type { TenantScope } from '../db/scoped.ts'
import type { Executor, Row, TableName } from '../db/schema.ts'
import { columnKind, type ColumnKind } from './column-kind.ts'

export type Verb = 'list' | 'read' | 'create' | 'update' | 'delete'
export const VERBS: readonly Verb[] = ['list', 'read', 'create', 'update', 'delete']

/** A read-only field computed in SQL in the same query as the row (no query per row). */
export interface ComputedField {
  schema: z.ZodType
  select: (eb: ExpressionBuilder<any, any>) => AliasableExpression<unknown>
}

/** Whether `id` names a record the actor may refer to from this field. */
export type ReferenceCheck = (db: Executor, actor: Actor, id: string) => Promise<boolean>

/** Values made by the server on create and shown once in that response only (a new API token). */
export interface Generated {
  shape: z.ZodRawShape
  make(): Promise<{ columns: Record<string, unknown>; shown: Record<string, unknown> }> | { columns: Record<string, unknown>; shown: Record<string, unknown> }
}

/** What a write changes: the record before (update, delete) and after (create, update), as stored columns. */
export interface Change<T extends TableName = TableName> {
  before?: RecordOf<T>
  /** The validated input: the model's fields (write-only ones too) and what the server stamps on create. */
  after?: Partial<RecordOf<T>> & Record<string, unknown>
}

/** Kernel checks a model's guard may need beyond the store. */
export interface WriteContext {
  /** Refuses (422 on `path`) a URL the outbound-address policy does not let the platform reach. */
  checkOutbound(path: string, url: string): Promise<void>
}

/** Columns no response shows, whatever the model: the version travels as the ETag, hashes never travel. */
type Unshown = 'version' | 'password_hash' | 'token_hash'

/**
 * A stored record as a response shows it: its columns, timestamps as ISO-8601 strings (computed fields aside).
 * Code written for any model (the CRUD handlers) sees a plain record.
 */
export type RecordOf<T extends TableName> = [TableName] extends [T]
  ? Record<string, unknown>
  : { [K in Exclude<keyof Row<T>, Unshown>]: Row<T>[K] extends Date ? string : Row<T>[K] extends Date | null ? string | null : Row<T>[K] }

// Code written for any model takes a bare `Model` (of any table), to which each typed model is assignable.
export interface ModelSpec<T extends TableName = any> extends TenantScope<T> {
  /** The name in `/api/v1/{model}`, as the specification writes it. */
  name: string
  description: string
  /** Fields a caller writes: their validation and defaults. */
  fields: z.ZodRawShape
  /** Fields accepted on write and never read back (a password). */
  writeOnly?: readonly string[]
  /** How fields read back where that differs from how they are written (values shown only as set). */
  readAs?: z.ZodRawShape
  /** Turns a stored record into what a response shows (hides write-only parts of a field). */
  redact?: (record: Record<string, unknown>) => Record<string, unknown>
  /** Stored fields the server sets; returned, never taken from a body. */
  readOnly?: z.ZodRawShape
  /** Read-only columns the server sets on create only (the author, a message's role). */
  stamp?: (actor: Actor) => Record<string, unknown>
  computed?: Record<string, ComputedField>
  /** Fields naming other records: a write may only name records the actor can see. */
  references?: Record<string, ReferenceCheck>
  generated?: Generated
  /** Rules across fields (this transport needs that field), checked on create, replace and the merged patch. */
  refine?: (record: Record<string, unknown>) => Array<{ path: string; message: string }>
  /**
   * Runs in the create's transaction, e.g. to make a new user a member of the creator's company; `input` is the
   * body as validated, with its write-only fields (a new company's owner).
   */
  afterCreate?: (db: Executor, record: Record<string, unknown>, actor: Actor, input: Record<string, unknown>) => Promise<void>
  /**
   * Rules a write must keep that depend on the store or on who writes (the role ladder, the last owner). Runs in
   * the write's transaction with the record locked, before the write; throws an ApiError to refuse it.
   */
  guard?(tx: Executor, actor: Actor, change: Change<T>, context: WriteContext): Promise<void>
  /** Writes change who may do what (roles, memberships, ACLs), so cached identities are dropped after them. */
  affectsAccess?: boolean
  /**
   * Set when records are not created through the generic API, saying how they are (a document is uploaded): the
   * generic create is then left out of the document and answers 405 with this text.
   */
  createdElsewhere?: string
  /**
   * Set when no one writes records through the API, saying who does (the platform keeps the audit trail): only
   * list and read are served and documented, and every write answers 405 with this text.
   */
  writtenElsewhere?: string
  /** Writes are recorded in the audit trail, field by field, in the write's own transaction. */
  audited?: boolean
  /** The least role allowed per verb; ModelAcl rows may override it. */
  access: Record<Verb, Role>
  /** Turns validated input into column values (hashing a password). */
  toRow?: (input: Record<string, unknown>, actor: Actor) => Record<string, unknown> | Promise<Record<string, unknown>>
  example: Record<string, unknown>
}

export interface Model<T extends TableName = any> extends ModelSpec<T> {
  /** Response record. */
  record: z.ZodObject
  /** Body of create and replace: every writable field, unknown fields refused. */
  create: z.ZodObject
  /** Body of a JSON merge patch: any writable field, `null` resets it. */
  patch: z.ZodObject
  /** The create response: the record plus any generated values shown once. */
  created: z.ZodObject
  /** Stored columns a response may show, in order. */
  columns: string[]
  /** The kind of every field a list may filter or order by. */
  kinds: Map<string, ColumnKind>
  jsonColumns: Set<string>
}

const id = z.uuid().openapi({ example: '01936f3e-6d2a-7c41-9b1e-2f3a4b5c6d7e' })
const timestamp = z.iso.datetime({ offset: true }).openapi({ example: '2026-11-21T09:30:00.000Z' })

/**
 * The fields as a stored record has them: a field with a default is left out of a create, never of a record, so
 * the document marks it required in records (typed clients then need no fallback), with its description kept.
 */
function present(fields: z.ZodRawShape): z.ZodRawShape {
  return Object.fromEntries(
    Object.entries(fields).map(([name, field]) => {
      if (!(field instanceof z.ZodDefault)) return [name, field]
      const inner = field.removeDefault() as z.ZodType
      const metadata = getOpenApiMetadata(field)
      return [name, Object.keys(metadata).length > 0 ? inner.openapi(metadata) : inner]
    }),
  )
}

export function defineModel<T extends TableName>(spec: ModelSpec<T>): Model<T> {
  const writeOnly = new Set(spec.writeOnly ?? [])
  const readable = Object.fromEntries(Object.entries(spec.fields).filter(([name]) => !writeOnly.has(name)))
  const tenant = spec.tenantColumn ? { [spec.tenantColumn]: id } : {}
  const computedShape = Object.fromEntries(Object.entries(spec.computed ?? {}).map(([k, v]) => [k, v.schema]))

  const record = z
    .object({ id, ...tenant, ...present(readable), ...spec.readAs, ...spec.readOnly, ...computedShape, created_at: timestamp, updated_at: timestamp })
    .openapi(spec.name, { description: spec.description })
  const refine = spec.refine
  const create = z
    .strictObject(spec.fields)
    .superRefine((value, ctx) => {
      for (const problem of refine?.(value) ?? []) ctx.addIssue({ code: 'custom', path: [problem.path], message: problem.message })
    })
    .openapi(`${spec.name}Create`, { example: spec.example })
  // A merge patch may hold any part of a field (one key of a nested object, or null to remove it), so only its
  // top-level keys are checked here; the merged record is then validated whole against `create`.
  const patch = z
    .strictObject(
      Object.fromEntries(
        Object.keys(spec.fields).map((k) => [k, z.unknown().optional().openapi({ description: `Merged into ${k} (see ${spec.name}Create); null resets it.` })]),
      ),
    )
    .openapi(`${spec.name}Patch`, {
      description: 'A JSON merge patch (RFC 7396): fields present are changed, `null` resets a field to its default.',
    })

  const columns = ['id', ...Object.keys(tenant), ...Object.keys(readable), ...Object.keys(spec.readOnly ?? {}), 'created_at', 'updated_at']
  const kinds = new Map<string, ColumnKind>()
  for (const [name, schema] of Object.entries(record.shape)) kinds.set(name, columnKind(schema))
  const jsonColumns = new Set(
    Object.entries({ ...spec.fields, ...spec.readOnly }).filter(([, s]) => columnKind(s) === 'json').map(([k]) => k),
  )
  const created = spec.generated
    ? record.extend(spec.generated.shape).openapi(`${spec.name}Created`, { description: `A new ${spec.name}; the generated values are shown this once.` })
    : record
  return { ...spec, record, create, patch, created, columns, kinds, jsonColumns }
}
