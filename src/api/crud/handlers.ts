import type { Context } from 'hono'
import { authorize } from '../../auth/authorize.ts'
import type { Model } from '../../models/define.ts'
import { parseListQuery } from '../../models/list-query.ts'
import * as records from '../../models/records.ts'
import type { ApiEnv } from '../context.ts'
import { ApiError } from '../errors.ts'

type Ctx = Context<ApiEnv>

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

function etag(version: number): string {
  return `"${version}"`
}

/** The record id from the path; an id that is not a UUID names no record. */
function recordId(c: Ctx, model: Model): string {
  const id = c.req.param('id') ?? ''
  if (!UUID.test(id)) throw new ApiError('not_found', `No ${model.name} with id ${id}.`)
  return id.toLowerCase()
}

/** The version If-Match asks for; `*` or no header asks for none. A tag we never issued cannot match. */
function expectedVersion(c: Ctx, model: Model): number | undefined {
  const header = c.req.header('if-match')?.trim()
  if (!header || header === '*') return undefined
  const match = /^(?:W\/)?"(\d{1,9})"$/.exec(header)
  if (!match) throw new ApiError('precondition_failed', `If-Match ${header} is not an ETag this ${model.name} ever had.`)
  return Number(match[1])
}

/** The body as the route's schema parsed it (defaults filled in). */
function validBody(c: Ctx): Record<string, unknown> {
  return (c.req as unknown as { valid(target: 'json'): Record<string, unknown> }).valid('json')
}

function sendRecord(c: Ctx, { record, version }: records.Versioned, status: 200 | 201 = 200) {
  c.header('ETag', etag(version))
  return c.json(record, status)
}

export async function listHandler(c: Ctx, model: Model) {
  const { actor, services } = c.var
  authorize(actor, model, 'list')
  const query = parseListQuery(model, c.req.queries())
  const { data, count } = await records.listRecords(services.db, actor, model, query)
  return c.json({ data, limit: query.limit, offset: query.offset, ...(count === undefined ? {} : { count }) }, 200)
}

export async function readHandler(c: Ctx, model: Model) {
  const { actor, services } = c.var
  authorize(actor, model, 'read')
  const found = await records.getRecord(services.db, actor, model, recordId(c, model))
  if (c.req.header('if-none-match')?.split(',').some((tag) => tag.trim().replace(/^W\//, '') === etag(found.version))) {
    c.header('ETag', etag(found.version))
    return c.body(null, 304)
  }
  return sendRecord(c, found)
}

export async function createHandler(c: Ctx, model: Model) {
  const { actor, services } = c.var
  authorize(actor, model, 'create')
  const created = await records.createRecord(services.db, actor, model, validBody(c))
  c.header('Location', `/api/v1/${model.name}/${created.record.id}`)
  return sendRecord(c, created, 201)
}

export async function replaceHandler(c: Ctx, model: Model) {
  const { actor, services } = c.var
  authorize(actor, model, 'update')
  const id = recordId(c, model)
  return sendRecord(c, await records.replaceRecord(services.db, actor, model, id, validBody(c), expectedVersion(c, model)))
}

export async function patchHandler(c: Ctx, model: Model) {
  const { actor, services } = c.var
  authorize(actor, model, 'update')
  const id = recordId(c, model)
  // The merge needs the body as sent, not as parsed: parsing fills defaults that would overwrite stored values.
  const patch = (await c.req.json()) as Record<string, unknown>
  return sendRecord(c, await records.patchRecord(services.db, actor, model, id, patch, expectedVersion(c, model)))
}

export async function deleteHandler(c: Ctx, model: Model) {
  const { actor, services } = c.var
  authorize(actor, model, 'delete')
  await records.deleteRecord(services.db, actor, model, recordId(c, model), expectedVersion(c, model))
  return c.body(null, 204)
}
