/** @jsxImportSource hono/jsx */
import type { Context, Hono } from 'hono'
import type { ContentfulStatusCode } from 'hono/utils/http-status'
import { isUuid } from '../../models/fields.ts'
import { refusedHere, problemText, type Answer, type ApiClient, type Schema } from '../api-client.ts'
import type { AdminEnv } from '../context.ts'
import { Alert, Notice } from '../components/feedback.tsx'
import { Table } from '../components/table.tsx'
import { isFragment } from '../console/resource.ts'
import { swapInto } from './components.tsx'
import { Time } from '../components/time.tsx'

type Ctx = Context<AdminEnv>

/** A link between the person and a chat platform account, as GET /api/me/platforms lists it. */
type Link = Schema<'UserPlatform'>
type LinkCode = Answer<'post', '/api/me/channel-links'>

/** The person's links as read, or why the API would not list them (with its status). */
interface Listed {
  links?: Link[]
  problem?: string
  status: number
}

interface Outcome {
  notice?: string
  problem?: string
}

const TITLE = 'My chat accounts'
const ASSETS = { styles: ['/static/css/portal.css'] }
const PLATFORM_NAMES: Record<string, string> = { telegram: 'Telegram', slack: 'Slack', whatsapp: 'WhatsApp', email: 'Email', webchat: 'Web chat' }

const platformName = (platform: string) => PLATFORM_NAMES[platform] ?? platform
/** What the API refused is refused here too, with its status, so a script or a test can tell. */
const statusOf = (status: number) => (status >= 400 && status < 600 ? status : 422) as ContentfulStatusCode

function LinksSection({ links, outcome = {} }: { links?: Link[]; outcome?: Outcome }) {
  return (
    <section id="links" class="card portal-wide" aria-labelledby="links-title">
      <h2 id="links-title">Your linked accounts</h2>
      <p>When you write to an agent from one of these accounts, it answers you as you, with what you may use.</p>
      <Notice text={outcome.notice} />
      <Alert text={outcome.problem} />
      {links === undefined ? null : links.length === 0 ? (
        <p>You have linked no account yet.</p>
      ) : (
        <Table caption="Your linked accounts" headers={['Platform', 'Account', 'Linked since']} actions>
          {links.map((link) => (
            <tr id={`link-${link.id}`}>
              <td>{platformName(link.platform)}</td>
              <td>
                {link.platform_username || link.platform_user_id}
                {link.platform_username ? <small> ({link.platform_user_id})</small> : null}
              </td>
              <td>
                <Time iso={link.created_at} />
              </td>
              <td class="actions">
                <form {...swapInto('links', `/me/channels/${link.id}/unlink`)} class="inline-form" hx-confirm={`Unlink your ${platformName(link.platform)} account ${link.platform_username || link.platform_user_id}?`}>
                  <button type="submit" aria-label={`Unlink ${platformName(link.platform)} account ${link.platform_username || link.platform_user_id}`}>
                    Unlink
                  </button>
                </form>
              </td>
            </tr>
          ))}
        </Table>
      )}
    </section>
  )
}

function CodeSection({ code, problem }: { code?: LinkCode; problem?: string }) {
  return (
    <section id="link-code" class="card portal-wide" aria-labelledby="link-code-title">
      <h2 id="link-code-title">Link an account</h2>
      {code ? (
        <div class="notice" role="status">
          <p>Your link code:</p>
          <p class="portal-token link-code">
            <strong>{code.code}</strong>
          </p>
          <p>
            It works once, until <Time iso={code.expires_at} />.
          </p>
          <p>
            Send <code>/link {code.code}</code> to the agent on Telegram, Slack, WhatsApp or email; on Telegram, <code>/start {code.code}</code> works too. The account
            you send it from is then linked to you.
          </p>
        </div>
      ) : (
        <p>Get a code here, then send it to an agent from the account you want to link: on Telegram, Slack, WhatsApp or by email.</p>
      )}
      <Alert text={problem} />
      <form {...swapInto('link-code', '/me/channels/code')}>
        <button type="submit">{code ? 'Get a new code' : 'Get a link code'}</button>
        {code ? <span class="help"> A new code replaces this one.</span> : null}
      </form>
    </section>
  )
}

/**
 * /me/channels: the person's own chat platform accounts that speak to the agents as them (unlink), and link codes
 * to link another. All through the public API, as them.
 */
export function mountChannelsPage(app: Hono<AdminEnv>, api: ApiClient): void {
  const readLinks = async (c: Ctx): Promise<Listed> => {
    const { data, error, response } = await api.as(c).GET('/api/me/platforms')
    return data ? { links: data.data, status: 200 } : { problem: problemText({ response, error }, 'Listing your accounts'), status: response.status }
  }

  const page = async (c: Ctx, state: { links?: Listed; linksOutcome?: Outcome; code?: LinkCode; codeProblem?: string } = {}) => {
    const listed = state.links ?? (await readLinks(c))
    return c.render(
      <div class="portal">
        <h1>{TITLE}</h1>
        <LinksSection links={listed.links} outcome={{ ...state.linksOutcome, problem: state.linksOutcome?.problem ?? listed.problem }} />
        <CodeSection code={state.code} problem={state.codeProblem} />
      </div>,
      { title: TITLE, assets: ASSETS },
    )
  }

  app.get('/me/channels', async (c) => {
    const links = await readLinks(c)
    if (links.status !== 200) c.status(statusOf(links.status))
    return page(c, { links })
  })

  app.post('/me/channels/code', async (c) => {
    const { data: code, error, response } = await api.as(c).POST('/api/me/channel-links')
    const codeProblem = code ? undefined : problemText({ response, error }, 'Getting a link code')
    if (!code) c.status(statusOf(response.status))
    if (isFragment(c)) return c.html(<CodeSection code={code} problem={codeProblem} />)
    return page(c, { code, codeProblem })
  })

  app.post('/me/channels/:id/unlink', async (c) => {
    const id = c.req.param('id')
    // The id becomes a path segment of an API call: only a UUID may, so nothing else can be named.
    const { error, response } = isUuid(id)
      ? await api.as(c).DELETE('/api/me/platforms/{id}', { params: { path: { id } } })
      : refusedHere(404, 'You have no such link.')
    const linksOutcome = response.status === 204 ? { notice: 'The account is unlinked: the agents no longer know it.' } : { problem: problemText({ response, error }, 'Unlinking the account') }
    if (response.status !== 204) c.status(statusOf(response.status))
    const links = await readLinks(c)
    if (isFragment(c)) return c.html(<LinksSection links={links.links} outcome={{ ...linksOutcome, problem: linksOutcome.problem ?? links.problem }} />)
    return page(c, { links, linksOutcome })
  })
}
