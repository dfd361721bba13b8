import type { OpenAPIHono } from '@hono/zod-openapi'
import { stream } from 'hono/streaming'
import { history } from '../../chat/messages.ts'
import { runTurn, type TurnAgent } from '../../chat/turn.ts'
import { AgentConfigRecord } from '../../models/agent-config.ts'
import { createRecord, getRecord } from '../../models/records.ts'
import { WebchatConversation, WebchatMessage } from '../../models/webchat.ts'
import type { ApiEnv } from '../../http/env.ts'
import { ApiError } from '../../errors.ts'
import { abortRoute, chatRoute } from './routes.ts'

/** POST /api/chat and /api/chat/abort: the web chat's turn, for scripts. */
export function mountChat(app: OpenAPIHono<ApiEnv>): void {
  app.openapi(chatRoute, async (c) => {
    const { services } = c.var
    const { agent_id, conversation_id, text } = c.req.valid('json')
    const actor = await services.access.authorize(c.var.actor, WebchatMessage, 'create')
    // Independent reads, so concurrent: every round trip here is time before the first token.
    // The history is read alongside; if the conversation turns out not to be the caller's, it is never used.
    const [found, existing, earlier] = await Promise.all([
      getRecord(services.db, actor, AgentConfigRecord, agent_id),
      conversation_id ? getRecord(services.db, actor, WebchatConversation, conversation_id) : undefined,
      conversation_id ? history(services.db, conversation_id) : [],
    ])
    const agent = found.record as unknown as TurnAgent & { enabled: boolean }
    if (!agent.enabled) throw new ApiError('conflict', `The agent ${agent.name} is disabled.`)
    const conversation =
      existing?.record ?? (await createRecord(services.db, actor, WebchatConversation, WebchatConversation.create.parse({ agent_id, title: text.slice(0, 80) }))).record
    const controller = services.turns.start(String(conversation.id))
    // The turn runs on the agent's live instance: a reload meanwhile waits for it before stopping that instance.
    const release = services.agents.instance(agent.id).lease()

    c.header('content-type', 'application/x-ndjson; charset=utf-8')
    c.header('cache-control', 'no-store')
    return stream(c, async (out) => {
      // A client that goes away stops the turn as an abort would.
      out.onAbort(() => controller.abort(new Error('the client went away')))
      try {
        await out.write(`${JSON.stringify({ type: 'conversation', conversation_id: conversation.id })}\n`)
        const turn = {
          actor,
          agent,
          conversation: { id: String(conversation.id), context_prompt: String(conversation.context_prompt) },
          history: earlier,
          text,
          signal: controller.signal,
        }
        for await (const event of runTurn({ db: services.db, runners: services.plugins.runners, models: services.runnerModels, tools: services.tools, log: services.log }, turn)) {
          await out.write(`${JSON.stringify(event)}\n`)
        }
      } finally {
        release()
        services.turns.finish(String(conversation.id), controller)
      }
    }) as never // a stream is not a typed JSON response; the route documents its lines
  })

  app.openapi(abortRoute, async (c) => {
    const { services } = c.var
    const { conversation_id } = c.req.valid('json')
    const actor = await services.access.authorize(c.var.actor, WebchatMessage, 'create')
    // Only someone who takes part may stop it; anyone else learns nothing, not even that it exists.
    await getRecord(services.db, actor, WebchatConversation, conversation_id)
    return c.json({ aborted: services.turns.abort(conversation_id) }, 200)
  })
}
