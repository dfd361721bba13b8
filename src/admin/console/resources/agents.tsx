/** @jsxImportSource hono/jsx */
import type { Hono } from 'hono'
import { isUuid } from '../../../models/fields.ts'
import { problemText, type ApiClient } from '../../api-client.ts'
import type { AdminEnv } from '../../context.ts'
import { ChannelsPlaceholder, mountAgentChannels } from '../agent-channels.tsx'
import { FormField } from '../fields.tsx'
import type { Field, FormValues } from '../form.ts'
import { optionsFrom, type ConsoleResource, type Ctx, type Option } from '../resource.ts'


/** The runner select asks for the model field again when it changes: models are per runner. */
const modelField: Field = { name: 'model', label: 'Model', kind: 'select', options: 'models', help: 'From the runner’s model registry (see Runners).' }
const runnerField: Field = {
  name: 'runner',
  label: 'Runner',
  kind: 'select',
  options: 'runners',
  required: true,
  attrs: { 'hx-get': '/agents/model-field', 'hx-trigger': 'change', 'hx-target': '#record-model-field', 'hx-swap': 'outerHTML', 'hx-include': 'this' },
}

async function models(c: Ctx, api: ApiClient, runner: string): Promise<Option[]> {
  if (!/^[a-z0-9][a-z0-9-]{0,63}$/.test(runner)) return []
  return optionsFrom(api.as(c).GET('/api/runners/{name}/models', { params: { path: { name: runner } } }), (m) => ({ value: m.id, label: m.name === m.id ? m.id : `${m.name} (${m.id})` }))
}

/** The gateway's catalogue as the tools picker lists it: servers, and each server's tools under it. */
async function catalogue(c: Ctx, api: ApiClient): Promise<Option[]> {
  return optionsFrom(api.as(c).GET('/api/mcp/tools'), (server) => [
    { value: server.name, label: server.name },
    ...(server.tools ?? []).map((tool) => ({ value: `${server.name}/${tool.name}`, label: tool.name })),
  ])
}

async function options(c: Ctx, api: ApiClient, values: FormValues) {
  const runner = typeof values.runner === 'string' && values.runner ? values.runner : 'echo'
  const [runners, registry, toolPlugins, tools, people] = await Promise.all([
    optionsFrom(api.as(c).GET('/api/runners'), (r) => ({ value: r.name, label: r.enabled === false ? `${r.name} (switched off)` : r.name })),
    models(c, api, runner),
    optionsFrom(api.as(c).GET('/api/plugins'), (p) => (p.kind === 'mcp' ? [{ value: p.name, label: `${p.name}: ${p.description}` }] : [])),
    catalogue(c, api),
    optionsFrom(api.as(c).GET('/api/v1/User', { params: { query: { limit: '500', order: 'username.asc', select: 'id,username,display_name' } } }), (u) => ({ value: u.id, label: u.display_name ? `${u.display_name} (${u.username})` : u.username })),
  ])
  return { runners, models: registry, toolPlugins, tools, people }
}

async function LivePanel({ c, api, id, message }: { c: Ctx; api: ApiClient; id: string; message?: string }) {
  const live = await api.as(c).GET('/api/agents')
  const instance = live.data?.data.find((a) => a.agent_id === id)
  return (
    <section id="live" class="panel">
      <h2>Live state</h2>
      {!live.data ? (
        <p class="problem">{problemText(live, 'Reading the live state')}</p>
      ) : instance ? (
        <dl class="facts">
          <dt>Running since</dt>
          <dd>{instance.started_at}</dd>
          <dt>Generation</dt>
          <dd>{instance.generation}</dd>
          <dt>Turns in flight</dt>
          <dd>{instance.turns_in_flight}</dd>
        </dl>
      ) : (
        <p>Not running (switched off, or not started yet).</p>
      )}
      <form method="post" action={`/agents/${id}/reload`} hx-post={`/agents/${id}/reload`} hx-target="#live" hx-swap="outerHTML">
        <button type="submit">Reload</button>
        <span class="help"> Starts a fresh instance; turns already running finish on the old one.</span>
      </form>
      {message ? (
        <p class={message.startsWith('Reloaded') ? 'notice' : 'problem'} role={message.startsWith('Reloaded') ? 'status' : 'alert'}>
          {message}
        </p>
      ) : null}
    </section>
  )
}

function mountAgentExtras(app: Hono<AdminEnv>, api: ApiClient): void {
  // The model field for the runner just chosen, swapped in place of the old one.
  app.get('/agents/model-field', async (c) => {
    const runner = c.req.query('runner') ?? ''
    return c.html(<FormField field={modelField} values={{ model: '' }} errors={[]} prefix="record" options={{ models: await models(c, api, runner) }} />)
  })
  app.post('/agents/:id/reload', async (c) => {
    const id = c.req.param('id')
    if (!isUuid(id)) return c.notFound()
    const reloaded = await api.as(c).POST('/api/agents/{id}/reload', { params: { path: { id } } })
    const message = reloaded.data ? (reloaded.data.instance ? 'Reloaded.' : 'Reloaded: the agent is switched off, so it was only stopped.') : problemText(reloaded, 'The reload')
    const panel = await LivePanel({ c, api, id, message })
    return c.html(panel, reloaded.data ? 200 : (reloaded.response.status as 403))
  })
  mountAgentChannels(app, api)
}

export const agents: ConsoleResource = {
  model: 'AgentConfigRecord',
  path: '/agents',
  title: 'Agents',
  singular: 'agent',
  intro: 'Each agent has a personality, a runner and model, the places it can be reached, and the tools it may use.',
  columns: [
    { field: 'name', label: 'Name' },
    { field: 'runner', label: 'Runner' },
    { field: 'model', label: 'Model' },
    { field: 'enabled', label: 'On' },
  ],
  search: { field: 'name', label: 'Name contains' },
  fields: [
    { name: 'name', label: 'Name', required: true, help: 'People mention it as @name in shared conversations.' },
    { name: 'description', label: 'Description', kind: 'textarea' },
    { name: 'enabled', label: 'Switched on', kind: 'checkbox' },
    { name: 'personality', label: 'Personality (system prompt)', kind: 'textarea' },
    runnerField,
    modelField,
    { name: 'timeout_seconds', label: 'Timeout (seconds)', kind: 'number', help: 'Longest a turn may run; 900 by default.' },
    { name: 'plugins.enabled', label: 'Tool plugins', kind: 'checkboxes', options: 'toolPlugins', help: 'Built-in tools the agent may use, still within the MCP permissions below.' },
    { name: 'mcp_permissions', label: 'MCP servers and tools', kind: 'tools', options: 'tools', help: 'From the gateway’s catalogue. What a person may not use stays out of reach whatever is chosen here.' },
    { name: 'channels', label: 'Channels (JSON)', kind: 'json', help: 'e.g. {"webchat": {"enabled": true}}. Secrets are vault names, never values.' },
    { name: 'voice.enabled', label: 'Voice on', kind: 'checkbox' },
    { name: 'voice.provider', label: 'Voice provider', nullable: true },
    { name: 'voice.voice_id', label: 'Voice id', nullable: true },
    { name: 'voice.language', label: 'Voice language (BCP 47, e.g. en-GB)', nullable: true },
    { name: 'email.account', label: 'Email account', kind: 'email', nullable: true },
    { name: 'email.sender_name', label: 'Email sender name', nullable: true },
    { name: 'email.from_alias', label: 'Email from alias', kind: 'email', nullable: true },
    { name: 'email.signature', label: 'Email signature', kind: 'textarea', nullable: true },
    { name: 'context_options.session_ttl_minutes', label: 'Session lifetime (minutes)', kind: 'number', nullable: true, help: 'Empty: conversations never expire.' },
    { name: 'context_options.service_account', label: 'Acts as (service account)', kind: 'select', options: 'people', nullable: true, help: 'Empty: the agent acts as the person talking to it.' },
  ],
  options,
  defaults: { enabled: true, runner: 'echo', timeout_seconds: 900 },
  nameOf: (row) => String(row.name ?? ''),
  panels: async (c, api, row) => (
    <>
      {await LivePanel({ c, api, id: String(row.id) })}
      <ChannelsPlaceholder agentId={String(row.id)} />
    </>
  ),
  mountExtra: mountAgentExtras,
}
