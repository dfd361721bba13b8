import { createRoute, z, type OpenAPIHono } from '@hono/zod-openapi'
import type { AgentInstance } from '../../agents/supervisor.ts'
import { AgentConfigRecord } from '../../models/agent-config.ts'
import { getRecord, listRecords } from '../../models/records.ts'
import type { ApiEnv } from '../../http/env.ts'
import { malformedIdIsNotFound } from '../hooks.ts'
import { IdParam } from '../params.ts'
import { commonErrors, notFoundError, signedIn } from '../responses.ts'

const LiveAgent = z
  .object({
    agent_id: z.uuid(),
    generation: z.int().openapi({ description: 'Grows with every start or reload.' }),
    started_at: z.iso.datetime(),
    turns_in_flight: z.int(),
    state: z.enum(['running', 'stopping', 'stopped']).openapi({ description: 'A replaced or disabled instance stops taking turns and ends with its last one.' }),
    configuration_version: z.int().nullable().openapi({
      description: 'The version of the agent’s configuration this instance started with (null while it is being read). Behind the stored version: a reload is pending (turns read the model and timeout afresh anyway; ON_STARTUP hooks, such as a channel’s webhook, need the reload).',
    }),
  })
  .openapi('LiveAgent')

const reloadRoute = createRoute({
  method: 'post',
  path: '/api/agents/{id}/reload',
  operationId: 'reloadAgent',
  summary: 'Hot-reload one agent',
  description: 'The new instance is created before the old one is stopped; turns running on the old one finish. ON_STARTUP fires again.',
  tags: ['Agents'],
  security: signedIn,
  request: { params: IdParam },
  responses: {
    200: {
      description: 'The new live instance, or `null` when the agent is disabled (then it is only stopped).',
      content: { 'application/json': { schema: z.object({ instance: z.union([LiveAgent, z.null()]) }) } },
    },
    ...commonErrors,
    ...notFoundError,
  },
})

const listRoute = createRoute({
  method: 'get',
  path: '/api/agents',
  operationId: 'listLiveAgents',
  summary: 'The live agents of the caller’s company',
  tags: ['Agents'],
  security: signedIn,
  responses: { 200: { description: 'Live instances.', content: { 'application/json': { schema: z.object({ data: z.array(LiveAgent) }) } } }, ...commonErrors },
})

function describe(instance: AgentInstance) {
  return {
    agent_id: instance.agentId,
    generation: instance.generation,
    started_at: instance.startedAt.toISOString(),
    turns_in_flight: instance.turnsInFlight,
    state: instance.state,
    configuration_version: instance.configuration?.version ?? null,
  }
}

export function mountAgents(app: OpenAPIHono<ApiEnv>): void {
  app.openapi(reloadRoute, async (c) => {
    const { services } = c.var
    const actor = await services.access.authorize(c.var.actor, AgentConfigRecord, 'update')
    // Reading it through the scoped builder: another company's agent is a 404 like any record.
    const { record } = await getRecord(services.db, actor, AgentConfigRecord, c.req.valid('param').id.toLowerCase())
    // The admin's lever after a change made behind the API's back: turns everywhere read the agent afresh too.
    await services.caches.flush('agents')
    const instance = await services.agents.reload(String(record.id), record.enabled === true)
    return c.json({ instance: instance ? describe(instance) : null }, 200)
  }, malformedIdIsNotFound(AgentConfigRecord.name))

  app.openapi(listRoute, async (c) => {
    const { services } = c.var
    const actor = await services.access.authorize(c.var.actor, AgentConfigRecord, 'list')
    const { data } = await listRecords(services.db, actor, AgentConfigRecord, { filters: [], order: [], select: ['id'], limit: 500, offset: 0, count: false })
    const mine = new Set(data.map((row) => String(row.id)))
    return c.json({ data: services.agents.list().filter((i) => mine.has(i.agentId)).map(describe) }, 200)
  })
}
