import type { Context } from 'hono'
import { hasRole, type Actor } from '../../auth/actor.ts'
import type { Model, Verb } from '../../models/define.ts'
import { jsonDepth, MAX_JSON_DEPTH } from '../../models/json-depth.ts'
import { parseListQuery } from '../../models/list-query.ts'
import * as records from '../../models/records.ts'
import type { ApiEnv } from '../../http/env.ts'
import { ApiError } from '../../errors.ts'
import { etag, expectedVersions } from '../etag.ts'

type Ctx = Context<ApiEnv>
/** Create and replace: the body as the route's schema parsed it (defaults filled in). */
type WriteCtx = Context<ApiEnv, string, { out: { json: Record<string, unknown> } }>

/** The record id from the path, which the route's IdParam has checked to be a UUID. */
function recordId(c: Ctx): string {
  return c.req.param('id')!.toLowerCase()
}

/** A record as responses show it: write-only parts of fields hidden. */
function shown(model: Model, record: Record<string, unknown>): Record<string, unknown> {
  return model.redact ? model.redact(record) : record
}

/**
 * What the caller's role may do with the collection or a record, as an Allow header: the console offers forms and
 * buttons by it instead of letting a person fill one in to be refused.
 */
async function allowed(c: Ctx, model: Model, actor: Actor, target: 'collection' | 'record'): Promise<string> {
  const least = await c.var.services.access.leastRoles(model)
  const writes = model.writtenElsewhere ? [] : target === 'collection' ? (model.createdElsewhere ? [] : [['POST', 'create']]) : [['PATCH', 'update'], ['PUT', 'update'], ['DELETE', 'delete']]
  const methods = ['GET', 'HEAD']
  for (const [method, verb] of writes as Array<[string, Verb]>) if (hasRole(actor, least(verb))) methods.push(method)
  return methods.join(', ')
}

function sendRecord<S extends 200 | 201>(c: Ctx, model: Model, { record, version }: records.Versioned, status: S) {
  c.header('ETag', etag(version))
  return c.json(shown(model, record), status)
}

export async function listHandler(c: Ctx, model: Model) {
  const { services } = c.var
  const actor = await services.access.authorize(c.var.actor, model, 'list')
  const query = parseListQuery(model, c.req.queries())
  const { data, count } = await records.listRecords(services.db, actor, model, query)
  c.header('Allow', await allowed(c, model, actor, 'collection'))
  return c.json({ data: data.map((record) => shown(model, record)), limit: query.limit, offset: query.offset, ...(count === undefined ? {} : { count }) }, 200)
}

export async function readHandler(c: Ctx, model: Model) {
  const { services } = c.var
  const actor = await services.access.authorize(c.var.actor, model, 'read')
  const found = await records.getRecord(services.db, actor, model, recordId(c))
  c.header('Allow', await allowed(c, model, actor, 'record'))
  // If-None-Match compares weakly: a weak form of the current tag, or *, means the client's copy is current.
  const ifNoneMatch = c.req.header('if-none-match')?.split(',').map((tag) => tag.trim().replace(/^W\//, ''))
  if (ifNoneMatch?.some((tag) => tag === '*' || tag === etag(found.version))) {
    c.header('ETag', etag(found.version))
    return c.body(null, 304)
  }
  return sendRecord(c, model, found, 200)
}

export async function createHandler(c: WriteCtx, model: Model) {
  const { services } = c.var
  const actor = await services.access.authorize(c.var.actor, model, 'create')
  const created = await services.writes.run(actor, (scope) => records.createRecord(scope, model, c.req.valid('json')))
  c.header('Location', `/api/v1/${model.name}/${created.record.id}`)
  return sendRecord(c, model, created, 201)
}

export async function replaceHandler(c: WriteCtx, model: Model) {
  const { services } = c.var
  const actor = await services.access.authorize(c.var.actor, model, 'update')
  const id = recordId(c)
  const replaced = await services.writes.run(actor, (scope) => records.replaceRecord(scope, model, id, c.req.valid('json'), expectedVersions(c)))
  return sendRecord(c, model, replaced, 200)
}

export async function patchHandler(c: Ctx, model: Model) {
  const { services } = c.var
  const actor = await services.access.authorize(c.var.actor, model, 'update')
  const id = recordId(c)
  // The merge needs the body as sent, not as parsed: parsing fills defaults that would overwrite stored values.
  const patch = (await c.req.json()) as Record<string, unknown>
  if (jsonDepth(patch) > MAX_JSON_DEPTH + 1) {
    throw new ApiError('validation_error', `The patch nests deeper than ${MAX_JSON_DEPTH} levels.`, { errors: [{ path: '(body)', message: 'too deep' }] })
  }
  const patched = await services.writes.run(actor, (scope) => records.patchRecord(scope, model, id, patch, expectedVersions(c)))
  return sendRecord(c, model, patched, 200)
}

export async function deleteHandler(c: Ctx, model: Model) {
  const { services } = c.var
  const actor = await services.access.authorize(c.var.actor, model, 'delete')
  const id = recordId(c)
  await services.writes.run(actor, (scope) => records.deleteRecord(scope, model, id, expectedVersions(c)))
  return c.body(null, 204)
}
