import type { OpenAPIHono } from '@hono/zod-openapi'
import type { Context } from 'hono'
import type { StartedTurn } from '../../chat/chat.ts'
import type { ApiEnv } from '../../http/env.ts'
import { WebchatConversation, WebchatMessage } from '../../models/webchat.ts'
import { abortRoute, chatRoute, colleaguesRoute, conversationsRoute, exportRoute, readRoute, regenerateRoute, typingRoute } from './routes.ts'
import { exportConversation } from '../../chat/export.ts'
import { ndjsonTurn } from './ndjson.ts'

/** POST /api/chat and /api/chat/abort: the web chat's turn, for scripts; and what the web chat page needs besides. */
export function mountChat(app: OpenAPIHono<ApiEnv>): void {
  app.openapi(chatRoute, async (c) => {
    const { services } = c.var
    const actor = await services.access.authorize(c.var.actor, WebchatMessage, 'create')
    return streamTurn(c, await services.chat.start(actor, c.req.valid('json')))
  })

  app.openapi(regenerateRoute, async (c) => {
    const { services } = c.var
    const actor = await services.access.authorize(c.var.actor, WebchatMessage, 'create')
    return streamTurn(c, await services.chat.regenerate(actor, c.req.valid('json')))
  })

  app.openapi(abortRoute, async (c) => {
    const { services } = c.var
    const actor = await services.access.authorize(c.var.actor, WebchatMessage, 'create')
    return c.json({ aborted: await services.chat.abort(actor, c.req.valid('json').conversation_id) }, 200)
  })

  app.openapi(conversationsRoute, async (c) => {
    const { services } = c.var
    const actor = await services.access.authorize(c.var.actor, WebchatConversation, 'list')
    const { q, archived } = c.req.valid('query')
    return c.json({ data: await services.chat.conversations(actor, { q, archived: archived === 'true' }) }, 200)
  })

  app.openapi(exportRoute, async (c) => {
    const { services } = c.var
    const actor = await services.access.authorize(c.var.actor, WebchatConversation, 'read')
    const { format } = c.req.valid('query')
    const exported = await exportConversation(services.db, actor, c.req.valid('param').id, format)
    c.header('content-disposition', `attachment; filename="${exported.filename}"`)
    c.header('content-type', format === 'json' ? 'application/json; charset=utf-8' : 'text/markdown; charset=utf-8')
    return c.body(exported.body, 200) as never
  })

  app.openapi(readRoute, async (c) => {
    const { services } = c.var
    const actor = await services.access.authorize(c.var.actor, WebchatConversation, 'read')
    await services.chat.read(actor, c.req.valid('param').id)
    return c.body(null, 204)
  })

  app.openapi(typingRoute, async (c) => {
    const { services } = c.var
    const actor = await services.access.authorize(c.var.actor, WebchatMessage, 'create')
    await services.chat.typing(actor, c.req.valid('json').conversation_id)
    return c.body(null, 204)
  })

  app.openapi(colleaguesRoute, async (c) => {
    const { services } = c.var
    const actor = await services.access.authorize(c.var.actor, WebchatConversation, 'read')
    return c.json({ data: await services.chat.colleagues(actor, c.req.valid('query').q) }, 200)
  })
}

/** A turn's events as NDJSON, one per line. */
function streamTurn(c: Context<ApiEnv>, turn: StartedTurn) {
  c.header('content-type', 'application/x-ndjson; charset=utf-8')
  c.header('cache-control', 'no-store')
  const failed = (error: unknown) => c.var.services.log.error('chat turn stream failed', { error: String((error as Error)?.stack ?? error) })
  return c.body(ndjsonTurn(turn, failed)) as never // a stream is not a typed JSON response; the route documents its lines
}
