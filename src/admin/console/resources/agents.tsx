/** @jsxImportSource hono/jsx */
import type { Hono } from 'hono'
import { isUuid } from '../../../models/fields.ts'
import { bodyLimit } from 'hono/body-limit'
import { bodyOf, problemText, type ApiClient } from '../../api-client.ts'
import { Alert, Notice } from '../../components/feedback.tsx'
import { ACCEPTED_PICTURES } from '../../portal/components.tsx'
import type { AdminEnv } from '../../context.ts'
import { mountAgentChannels } from '../agent-channels.tsx'
import { FormField } from '../fields.tsx'
import type { Field, FormValues } from '../form.ts'
import { isFragment, optionsFrom, peopleOptions, type ConsoleResource, type Ctx, type Option } from '../resource.ts'
import { Time } from '../../components/time.tsx'


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

const SECRET_HELP = 'The name of a vault secret (see Vault), never the value itself.'

/** A channel's fields: switched on, its own settings, and what a stranger who writes to the agent is told. */
function channel(platform: string, label: string, help: string, settings: Array<Omit<Field, 'name' | 'section'> & { key: string }>): Field {
  const name = `channels.${platform}`
  return {
    section: 'Channels',
    name,
    label,
    kind: 'group',
    help,
    live: (id) => `/agents/${id}/channels/${platform}`,
    fields: [
      { name: `${name}.enabled`, label: `Answers on ${label}`, kind: 'checkbox', fallback: true },
      ...settings.map(({ key, ...field }) => ({ ...field, name: `${name}.${key}` })),
      { name: `${name}.unknown_senders`, label: 'Someone not linked to a person of the company', kind: 'select', options: 'unknownSenders', required: true, fallback: 'invite' },
    ],
  }
}

/** Each platform as a form of its own, in place of the raw JSON of the `channels` field. */
const CHANNEL_FIELDS: Field[] = [
  { section: 'Channels', name: 'channels.webchat.enabled', label: 'Answers in the web chat', kind: 'checkbox', fallback: true },
  channel('telegram', 'Telegram', 'A bot made with @BotFather. Saving points the bot’s webhook at the platform, over HTTPS (the platform’s public address must be one).', [
    { key: 'bot_token_secret', label: 'Bot token (vault name)', help: SECRET_HELP },
    { key: 'webhook_secret_secret', label: 'Webhook secret (vault name, optional)', help: 'Telegram sends it with every update; without it one is derived from the bot token.' },
  ]),
  channel('slack', 'Slack', 'A Slack app with a bot user; paste the webhook URL shown here as its Event Subscriptions request URL, and the same URL followed by /interactions as its Interactivity request URL (for approval buttons).', [
    { key: 'bot_token_secret', label: 'Bot token, xoxb-… (vault name)', help: SECRET_HELP },
    { key: 'signing_secret_secret', label: 'Signing secret (vault name)', help: SECRET_HELP },
    { key: 'app_id', label: 'App id (optional)', help: 'Events of other apps of the workspace are then ignored.' },
  ]),
  channel('whatsapp', 'WhatsApp', 'The WhatsApp Business Cloud API of a Meta app.', [
    { key: 'phone_number_id', label: 'Phone number id', help: 'The number’s id in the Meta dashboard (digits).' },
    { key: 'access_token_secret', label: 'Access token (vault name)', help: SECRET_HELP },
    { key: 'app_secret_secret', label: 'App secret (vault name)', help: SECRET_HELP },
    { key: 'verify_token_secret', label: 'Verify token (vault name)', help: 'The token typed into the Meta dashboard with the webhook URL.' },
  ]),
  channel('email', 'Email', 'Mail to the agent’s account (the Email part below) is answered by mail.', []),
  channel('bridge', 'Bridge', 'A bot of another platform (Discord, Matrix, Teams…) running beside the platform, through /api/internal/bridge.', [
    { key: 'callback_url', label: 'Callback URL (optional)', help: 'Where replies are POSTed; without it the bridge fetches them.' },
  ]),
]

const ANSWER_ALOUD = [
  { value: 'when_spoken_to', label: 'When the person sent a voice note' },
  { value: 'always', label: 'Always' },
  { value: 'never', label: 'Never (text only)' },
]

const UNKNOWN_SENDERS = [
  { value: 'invite', label: 'Is told how to link their account' },
  { value: 'refuse', label: 'Is only told the agent does not talk to them' },
]

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
    peopleOptions(c, api),
  ])
  return { runners, models: registry, toolPlugins, tools, people, unknownSenders: UNKNOWN_SENDERS, answerAloud: ANSWER_ALOUD }
}

async function LivePanel({ c, api, id, message, mayReload = true }: { c: Ctx; api: ApiClient; id: string; message?: string; mayReload?: boolean }) {
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
          <dd>
            <Time iso={instance.started_at} />
          </dd>
          <dt>Generation</dt>
          <dd>{instance.generation}</dd>
          <dt>Turns in flight</dt>
          <dd>{instance.turns_in_flight}</dd>
        </dl>
      ) : (
        <p>Not running (switched off, or not started yet).</p>
      )}
      {mayReload ? (
        <form method="post" action={`/agents/${id}/reload`} hx-post={`/agents/${id}/reload`} hx-target="#live" hx-swap="outerHTML">
          <button type="submit">Reload</button>
          <span class="help"> Starts a fresh instance; turns already running finish on the old one.</span>
        </form>
      ) : null}
      {message ? (
        <p class={message.startsWith('Reloaded') ? 'notice' : 'problem'} role={message.startsWith('Reloaded') ? 'status' : 'alert'}>
          {message}
        </p>
      ) : null}
    </section>
  )
}

/** The agent's picture, which the web chat shows: uploaded through the API, judged there by its bytes. */
function PicturePanel({ id, avatar, notice, problem }: { id: string; avatar: string | null; notice?: string; problem?: string }) {
  return (
    <section id="picture" class="panel" aria-labelledby="picture-title">
      <h2 id="picture-title">Picture</h2>
      {avatar ? <img class="agent-avatar" src={avatar} alt="The agent’s picture" width={64} height={64} /> : <p>No picture yet: the web chat shows the agent’s initial.</p>}
      <form method="post" action={`/agents/${id}/avatar`} hx-post={`/agents/${id}/avatar`} hx-target="#picture" hx-swap="outerHTML" enctype="multipart/form-data" hx-encoding="multipart/form-data">
        <label for="agent-avatar-file">Picture file (PNG, JPEG, GIF or WebP; at most 256 KiB and 4096×4096 pixels)</label>
        <input id="agent-avatar-file" name="file" type="file" accept={ACCEPTED_PICTURES} required />
        <button type="submit">Upload</button>
      </form>
      {avatar ? (
        <form method="post" action={`/agents/${id}/avatar/remove`} hx-post={`/agents/${id}/avatar/remove`} hx-target="#picture" hx-swap="outerHTML" class="inline-form">
          <button type="submit">Remove the picture</button>
        </form>
      ) : null}
      <Notice text={notice} />
      <Alert text={problem} />
    </section>
  )
}

function mountAgentExtras(app: Hono<AdminEnv>, api: ApiClient): void {
  const picture = async (c: Ctx, id: string, status: number, said: { notice?: string; problem?: string }) => {
    const read = await api.as(c).GET('/api/v1/AgentConfigRecord/{id}', { params: { path: { id } } })
    const panel = <PicturePanel id={id} avatar={read.data?.avatar ?? null} {...said} />
    if (isFragment(c)) return c.html(panel, status as 200)
    return c.redirect(`/agents/${id}#picture`, 303)
  }
  app.post('/agents/:id/avatar', bodyLimit({ maxSize: 256 * 1024 + 16 * 1024, onError: (c) => picture(c as Ctx, (c as Ctx).req.param('id') ?? '', 413, { problem: 'The picture is larger than 256 KiB.' }) }), async (c) => {
    const id = c.req.param('id')
    if (!isUuid(id)) return c.notFound()
    const file = (await c.req.formData().catch(() => undefined))?.get('file')
    if (!(file instanceof File) || file.size === 0) return picture(c, id, 422, { problem: 'Choose a picture to upload.' })
    const form = new FormData()
    form.set('file', file, file.name)
    const response = await api.fetchAs(api.credentials(c), 'PUT', `/api/agents/${id}/avatar`, { form })
    if (response.status === 200) return picture(c, id, 200, { notice: 'The picture is saved.' })
    return picture(c, id, response.status, { problem: problemText({ response, error: await bodyOf(response) }, 'Uploading the picture') })
  })
  app.post('/agents/:id/avatar/remove', async (c) => {
    const id = c.req.param('id')
    if (!isUuid(id)) return c.notFound()
    const removed = await api.as(c).DELETE('/api/agents/{id}/avatar', { params: { path: { id } } })
    if (removed.response.status === 204) return picture(c, id, 200, { notice: 'The picture is removed.' })
    return picture(c, id, removed.response.status, { problem: problemText(removed, 'Removing the picture') })
  })

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
    { section: 'Identity', name: 'name', label: 'Name', required: true, help: 'People mention it as @name in shared conversations.' },
    { section: 'Identity', name: 'description', label: 'Description', kind: 'textarea', help: 'Shown beside the agent where people choose whom to talk to.' },
    { section: 'Identity', name: 'enabled', label: 'Switched on', kind: 'checkbox' },
    { section: 'Identity', name: 'starter_prompts', label: 'Starter prompts', kind: 'lines', help: 'One per line, up to six: the web chat offers them as buttons in a new conversation.' },
    { section: 'Model', name: 'personality', label: 'Personality (system prompt)', kind: 'textarea' },
    { ...runnerField, section: 'Model' },
    { ...modelField, section: 'Model' },
    { section: 'Model', name: 'timeout_seconds', label: 'Timeout (seconds)', kind: 'number', help: 'Longest a turn may run; 900 by default.' },
    { section: 'Tools', name: 'plugins.enabled', label: 'Tool plugins', kind: 'checkboxes', options: 'toolPlugins', help: 'Built-in tools the agent may use, still within the MCP permissions below.' },
    { section: 'Tools', name: 'mcp_permissions', label: 'MCP servers and tools', kind: 'tools', options: 'tools', help: 'From the gateway’s catalogue. What a person may not use stays out of reach whatever is chosen here.' },
    ...CHANNEL_FIELDS,
    { section: 'Voice', name: 'voice.enabled', label: 'Hears voice notes and may answer aloud', kind: 'checkbox' },
    { section: 'Voice', name: 'voice.answer_aloud', label: 'Answers aloud', kind: 'select', options: 'answerAloud', empty: '(the default: when spoken to)', fallback: 'when_spoken_to', help: 'The written answer always goes too.' },
    { section: 'Voice', name: 'voice.provider', label: 'Speech runner', kind: 'select', options: 'runners', nullable: true, empty: '(the agent’s runner)', help: 'A runner that offers speech, such as openai (or a local server it points at).' },
    { section: 'Voice', name: 'voice.transcription_model', label: 'Transcription model', nullable: true, help: 'Empty: whisper-1.' },
    { section: 'Voice', name: 'voice.speech_model', label: 'Speech model', nullable: true, help: 'Empty: gpt-4o-mini-tts.' },
    { section: 'Voice', name: 'voice.voice_id', label: 'Voice', nullable: true, help: 'As the provider names it; empty: alloy.' },
    { section: 'Voice', name: 'voice.language', label: 'Language people speak (BCP 47, e.g. en-GB)', nullable: true, help: 'Empty: guessed from each note.' },
    { section: 'Email', name: 'email.account', label: 'Email account', kind: 'email', nullable: true },
    { section: 'Email', name: 'email.sender_name', label: 'Email sender name', nullable: true },
    { section: 'Email', name: 'email.from_alias', label: 'Email from alias', kind: 'email', nullable: true },
    { section: 'Email', name: 'email.signature', label: 'Email signature', kind: 'textarea', nullable: true },
    { section: 'Context', name: 'context_options.session_ttl_minutes', label: 'Session lifetime (minutes)', kind: 'number', nullable: true, help: 'Empty: conversations never expire.' },
    { section: 'Context', name: 'context_options.service_account', label: 'Acts as (service account)', kind: 'select', options: 'people', nullable: true, help: 'Empty: the agent acts as the person talking to it.' },
  ],
  options,
  defaults: { enabled: true, runner: 'echo', timeout_seconds: 900 },
  nameOf: (row) => String(row.name ?? ''),
  panels: async (c, api, row, mayEdit) => (
    <>
      {mayEdit ? <PicturePanel id={String(row.id)} avatar={typeof row.avatar === 'string' ? row.avatar : null} /> : null}
      {await LivePanel({ c, api, id: String(row.id), mayReload: mayEdit })}
    </>
  ),
  mountExtra: mountAgentExtras,
}
