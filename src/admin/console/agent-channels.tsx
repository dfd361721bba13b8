/** @jsxImportSource hono/jsx */
import type { Hono } from 'hono'
import type { ContentfulStatusCode } from 'hono/utils/http-status'
import { isUuid } from '../../models/fields.ts'
import { problemText, type ApiClient, type Schema } from '../api-client.ts'
import type { AdminEnv } from '../context.ts'
import { Alert } from '../components/feedback.tsx'
import { Table } from '../components/table.tsx'
import { isFragment, type Ctx } from './resource.ts'
import { Time } from '../components/time.tsx'

/** One platform of the agent as GET /api/agents/{id}/channels describes it. */
type ChannelState = Schema<'ChannelState'>

const PLATFORM_NAMES: Record<ChannelState['platform'], string> = { telegram: 'Telegram', slack: 'Slack', whatsapp: 'WhatsApp', email: 'Email', bridge: 'Bridge (a bot of another platform)' }

const platformName = (platform: ChannelState['platform']) => PLATFORM_NAMES[platform] ?? platform
const yesNo = (value: boolean) => (value ? 'yes' : 'no')
const reachableText = (value: boolean | null) => (value === null ? 'not yet known' : yesNo(value))
const channelsPath = (agentId: string) => `/agents/${agentId}/channels`

function Heading() {
  return <h2 id="channels-title">Channels</h2>
}

function ChannelRow({ state }: { state: ChannelState }) {
  return (
    <tr id={`channel-${state.platform}`}>
      <th scope="row">{platformName(state.platform)}</th>
      <td>{yesNo(state.configured)}</td>
      <td>{state.plugin ? `${state.plugin.name}${state.plugin.enabled ? '' : ' (off)'}` : 'none installed'}</td>
      <td>
        {reachableText(state.reachable)}
        <span class="help">{state.reachable_detail}</span>
      </td>
      <td>
        <Time iso={state.last_delivery_at} never="never" />
      </td>
      <td>
        {state.last_error ?? 'none'}
        {state.last_error ? (
          <span class="help">
            <Time iso={state.last_error_at} />
          </span>
        ) : null}
      </td>
      <td>{state.pending_replies}</td>
      <td>{state.failed_replies}</td>
    </tr>
  )
}

/** A URL is too long for a table cell: each gets a read-only field of its own, whole, to select and copy. */
function WebhookField({ state }: { state: ChannelState & { webhook_url: string } }) {
  const id = `webhook-${state.platform}`
  return (
    <div class="field">
      <label for={id}>{platformName(state.platform)} webhook URL</label>
      <input id={id} type="text" readonly value={state.webhook_url} />
    </div>
  )
}

/** The agent's channels as the API reports them, or why it would not; the refresh asks the platforms again. */
export function ChannelsSection({ agentId, states, problem }: { agentId: string; states?: ChannelState[]; problem?: string }) {
  const path = channelsPath(agentId)
  const webhooks = (states ?? []).filter((state): state is ChannelState & { webhook_url: string } => state.webhook_url !== null)
  return (
    <section id="channels" class="panel" aria-labelledby="channels-title">
      <Heading />
      <Alert text={problem} />
      {problem ? null : states && states.length > 0 ? (
        <>
          <Table caption="The agent’s channels" headers={['Platform', 'Configured', 'Plugin', 'Reachable', 'Last delivery', 'Last error', 'Replies waiting', 'Replies failed']}>
            {states.map((state) => (
              <ChannelRow state={state} />
            ))}
          </Table>
          {webhooks.length > 0 ? (
            <>
              <p class="help">Paste each webhook URL into the platform’s settings: the platform then delivers there what people send the agent.</p>
              {webhooks.map((state) => (
                <WebhookField state={state} />
              ))}
            </>
          ) : null}
        </>
      ) : (
        <p>
          This agent is on no chat platform. Set one up in the Channels part of <a href={`/agents/${agentId}#part-channels`}>the agent’s settings</a>: the bot’s token is
          stored in the vault, and the form names it.
        </p>
      )}
      <form method="get" action={path} hx-get={path} hx-target="#channels" hx-swap="outerHTML">
        <button type="submit">Refresh</button>
      </form>
    </section>
  )
}

const PLATFORMS = Object.keys(PLATFORM_NAMES) as Array<ChannelState['platform']>
const statusPath = (agentId: string, platform: string) => `/agents/${agentId}/channels/${platform}`

/**
 * One channel of the agent's form, as the platform and the store tell it: the webhook URL to paste into the
 * platform, whether it reaches us, and a button that asks again (a connection check). It stands inside the record
 * form, so the button is a plain one and not a form of its own.
 */
export function ChannelStatus({ agentId, platform, state, problem }: { agentId: string; platform: ChannelState['platform']; state?: ChannelState; problem?: string }) {
  const path = statusPath(agentId, platform)
  const check = (
    <button type="button" hx-get={path} hx-target="closest .group-live" hx-swap="innerHTML">
      Check the connection
    </button>
  )
  if (problem) return <><Alert text={problem} />{check}</>
  if (!state) return <p class="help">Saved settings show here: the webhook URL to give {platformName(platform)}, and whether it reaches the agent.</p>
  const id = `webhook-${platform}`
  return (
    <>
      {state.webhook_url ? (
        <div class="field">
          <label for={id}>Webhook URL to paste into {platformName(platform)}’s settings</label>
          <input id={id} type="text" readonly value={state.webhook_url} />
        </div>
      ) : null}
      <dl class="facts">
        <dt>Answering</dt>
        <dd>{state.configured ? 'yes' : 'no: switched off here, or the agent is off'}</dd>
        <dt>Plugin</dt>
        <dd>{state.plugin ? `${state.plugin.name}${state.plugin.enabled ? '' : ' (switched off by a superadmin)'}` : 'none installed'}</dd>
        <dt>Reaches us</dt>
        <dd>
          {reachableText(state.reachable)} <span class="help">{state.reachable_detail}</span>
        </dd>
        <dt>Last delivery</dt>
        <dd>
          <Time iso={state.last_delivery_at} never="never" />
        </dd>
        <dt>Last error</dt>
        <dd>
          {state.last_error ? (
            <>
              {state.last_error} (<Time iso={state.last_error_at} />)
            </>
          ) : (
            'none'
          )}
        </dd>
        <dt>Replies waiting / failed</dt>
        <dd>
          {state.pending_replies} / {state.failed_replies}
        </dd>
      </dl>
      {check} <a href={channelsPath(agentId)}>All the agent’s channels at a glance</a>
    </>
  )
}

/** GET /agents/{id}/channels: the section for htmx (lazily, or on refresh), else a page of its own. */
export function mountAgentChannels(app: Hono<AdminEnv>, api: ApiClient): void {
  app.get('/agents/:id/channels', async (c: Ctx) => {
    const id = c.req.param('id') ?? ''
    // The id becomes a path segment of an API call: only a UUID may, so nothing else can be named.
    if (!isUuid(id)) return c.notFound()
    const read = await api.as(c).GET('/api/agents/{id}/channels', { params: { path: { id }, query: {} } })
    const status = read.response.status
    const problem = read.data ? undefined : status === 404 ? 'No agent has this id.' : problemText(read, 'Reading the channels')
    const section = <ChannelsSection agentId={id} states={read.data?.data} problem={problem} />
    c.status((read.data ? 200 : status >= 400 && status < 600 ? status : 502) as ContentfulStatusCode)
    if (isFragment(c)) return c.html(section)
    return c.render(
      <section>
        <p class="crumbs">
          <a href="/agents">Agents</a> › <a href={`/agents/${id}`}>the agent</a>
        </p>
        <h1>The agent’s channels</h1>
        {section}
      </section>,
      { title: 'Agent channels' },
    )
  })

  // One channel's part of the agent's form: a fragment only, loaded into the form after the page.
  app.get('/agents/:id/channels/:platform', async (c: Ctx) => {
    const id = c.req.param('id') ?? ''
    const platform = PLATFORMS.find((p) => p === c.req.param('platform'))
    if (!isUuid(id) || !platform) return c.notFound()
    const read = await api.as(c).GET('/api/agents/{id}/channels', { params: { path: { id }, query: { platform } } })
    const problem = read.data ? undefined : read.response.status === 404 ? 'No agent has this id.' : problemText(read, 'Asking how the channel fares')
    return c.html(<ChannelStatus agentId={id} platform={platform} state={read.data?.data[0]} problem={problem} />)
  })
}
