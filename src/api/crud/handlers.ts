import type { Context } from 'hono'
import type { Chat } from '../../chat/chat.ts'
import { flushCaches } from '../../events/caches.ts'
import { AgentConfigRecord } from '../../models/agent-config.ts'
import { WebchatConversation, WebchatParticipant } from '../../models/webchat.ts'
import type { Model } from '../../models/define.ts'
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

/**
 * After a write, in every process: cached identities, ACLs and MCP rules are dropped when the write changes who may
 * do what, and live agents follow their configuration (`enabled` false once deleted).
 */
async function afterWrite(c: Ctx, model: Model, write: Write): Promise<void> {
  const { services } = c.var
  if (model.affectsAccess) await flushCaches(services.events, 'identities', 'acl', 'mcp')
  if (model === AgentConfigRecord) await services.agents.configured(write.id, write.record?.enabled === true)
  await announceChatWrite(services.chat, model, write)
}

/** A write as afterWrite needs it: the record written, or for a delete the row as it was (where one was read). */
interface Write {
  verb: 'create' | 'update' | 'delete'
  id: string
  record?: Record<string, unknown>
}

/** Chat writes people see live: who takes part (sockets follow; a removed person's close), a title, an end. */
async function announceChatWrite(chat: Chat, model: Model, { verb, id, record }: Write): Promise<void> {
  if (model === WebchatParticipant && verb !== 'update') {
    await chat.participantsChanged(String(record!.conversation_id), verb === 'delete' ? [String(record!.user_id)] : [])
  }
  if (model === WebchatConversation && verb === 'delete') await chat.participantsChanged(id, ['*'])
  if (model === WebchatConversation && verb === 'update') await chat.renamed(id, String(record!.title))
}

/** A record as responses show it: write-only parts of fields hidden. */
function shown(model: Model, record: Record<string, unknown>): Record<string, unknown> {
  return model.redact ? model.redact(record) : record
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
  return c.json({ data: data.map((record) => shown(model, record)), limit: query.limit, offset: query.offset, ...(count === undefined ? {} : { count }) }, 200)
}

export async function readHandler(c: Ctx, model: Model) {
  const { services } = c.var
  const actor = await services.access.authorize(c.var.actor, model, 'read')
  const found = await records.getRecord(services.db, actor, model, recordId(c))
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
  const created = await records.createRecord(services.db, actor, model, c.req.valid('json'), services.writes)
  await afterWrite(c, model, { verb: 'create', id: String(created.record.id), record: created.record })
  c.header('Location', `/api/v1/${model.name}/${created.record.id}`)
  return sendRecord(c, model, created, 201)
}

export async function replaceHandler(c: WriteCtx, model: Model) {
  const { services } = c.var
  const actor = await services.access.authorize(c.var.actor, model, 'update')
  const id = recordId(c)
  const replaced = await records.replaceRecord(services.db, actor, model, id, c.req.valid('json'), expectedVersions(c), services.writes)
  await afterWrite(c, model, { verb: 'update', id, record: replaced.record })
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
  const patched = await records.patchRecord(services.db, actor, model, id, patch, expectedVersions(c), services.writes)
  await afterWrite(c, model, { verb: 'update', id, record: patched.record })
  return sendRecord(c, model, patched, 200)
}

export async function deleteHandler(c: Ctx, model: Model) {
  const { services } = c.var
  const actor = await services.access.authorize(c.var.actor, model, 'delete')
  const id = recordId(c)
  // Who left a conversation is known only from the row, read before it goes.
  const removed = model === WebchatParticipant ? (await records.getRecord(services.db, actor, model, id)).record : undefined
  await records.deleteRecord(services.db, actor, model, id, expectedVersions(c), services.writes)
  await afterWrite(c, model, { verb: 'delete', id, record: removed })
  return c.body(null, 204)
}
