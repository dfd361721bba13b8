/** @jsxImportSource hono/jsx */
import type { Hono } from 'hono'
import type { ContentfulStatusCode } from 'hono/utils/http-status'
import { isUuid } from '../../models/fields.ts'
import { problemText, type ApiClient, type Schema } from '../api-client.ts'
import type { AdminEnv } from '../context.ts'
import { Alert } from '../components/feedback.tsx'
import { Table } from '../components/table.tsx'
import { isFragment, type Ctx } from './resource.ts'

/** One platform of the agent as GET /api/agents/{id}/channels describes it. */
type ChannelState = Schema<'ChannelState'>

const PLATFORM_NAMES: Record<ChannelState['platform'], string> = { telegram: 'Telegram', slack: 'Slack', whatsapp: 'WhatsApp', email: 'Email', bridge: 'Bridge (a bot of another platform)' }
const EXAMPLE = '{"telegram": {"bot_token_secret": "telegram/bot-token"}}'

const platformName = (platform: ChannelState['platform']) => PLATFORM_NAMES[platform] ?? platform
const when = (iso: string | null, never: string) => (iso ? iso.replace('T', ' ').replace(/\.\d+Z$|Z$/, ' UTC') : never)
const yesNo = (value: boolean) => (value ? 'yes' : 'no')
const reachableText = (value: boolean | null) => (value === null ? 'not yet known' : yesNo(value))
const channelsPath = (agentId: string) => `/agents/${agentId}/channels`

function Heading() {
  return <h2 id="channels-title">Channels</h2>
}

/**
 * Stands in the agent's page until the channels are read: asking a platform how its webhook fares takes up to a few
 * seconds, which the rest of the page need not wait for. Without htmx, the link opens the channels on their own.
 */
export function ChannelsPlaceholder({ agentId }: { agentId: string }) {
  return (
    <section id="channels" class="panel" aria-labelledby="channels-title" aria-busy="true" hx-get={channelsPath(agentId)} hx-trigger="load" hx-swap="outerHTML">
      <Heading />
      <p>
        Asking the platforms how the agent’s channels fare… <a href={channelsPath(agentId)}>Show the channels</a>
      </p>
    </section>
  )
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
      <td>{when(state.last_delivery_at, 'never')}</td>
      <td>
        {state.last_error ?? 'none'}
        {state.last_error ? <span class="help">{when(state.last_error_at, '')}</span> : null}
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
          This agent is on no chat platform. Add channels in the agent’s settings: the Channels (JSON) field above, e.g. <code>{EXAMPLE}</code>, with the bot token
          stored in the vault under that name.
        </p>
      )}
      <form method="get" action={path} hx-get={path} hx-target="#channels" hx-swap="outerHTML">
        <button type="submit">Refresh</button>
      </form>
    </section>
  )
}

/** GET /agents/{id}/channels: the section for htmx (lazily, or on refresh), else a page of its own. */
export function mountAgentChannels(app: Hono<AdminEnv>, api: ApiClient): void {
  app.get('/agents/:id/channels', async (c: Ctx) => {
    const id = c.req.param('id') ?? ''
    // The id becomes a path segment of an API call: only a UUID may, so nothing else can be named.
    if (!isUuid(id)) return c.notFound()
    const read = await api.as(c).GET('/api/agents/{id}/channels', { params: { path: { id } } })
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
}
