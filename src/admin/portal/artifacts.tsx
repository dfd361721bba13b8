/** @jsxImportSource hono/jsx */
import type { Context, Hono } from 'hono'
import { isUuid } from '../../models/fields.ts'
import { problemText, type Api, type ApiClient, type Schema } from '../api-client.ts'
import type { AdminEnv } from '../context.ts'
import { Alert, Notice } from '../components/feedback.tsx'
import { Table } from '../components/table.tsx'
import { Time, utcText } from '../components/time.tsx'

type Ctx = Context<AdminEnv>

type ArtifactRow = Schema<'Artifact'>

interface Outcome {
  notice?: string
  problem?: string
  /** A share link made just now, shown once with its expiry. */
  link?: { title: string; url: string; expires_at: string }
}

const TITLE = 'My artifacts'
const ASSETS = { styles: ['/static/css/portal.css'] }
const ACTIONS = ['pin', 'unpin', 'revoke', 'unrevoke', 'share', 'delete'] as const
type Action = (typeof ACTIONS)[number]


const KINDS: Record<string, string> = {
  'text/plain': 'Text',
  'text/markdown': 'Markdown',
  'text/html': 'HTML page',
  'application/json': 'JSON',
  'text/csv': 'CSV table',
  'image/png': 'PNG picture',
  'image/jpeg': 'JPEG picture',
  'image/gif': 'GIF picture',
  'image/webp': 'WebP picture',
}

function size(bytes: number): string {
  if (bytes >= 1024 * 1024) return `${(bytes / (1024 * 1024)).toFixed(1)} MiB`
  return bytes >= 1024 ? `${(bytes / 1024).toFixed(1)} KiB` : `${bytes} bytes`
}

/** Where the artifact stands, in words: a revoked one is shown as such first, since its links are dead. */
function state(a: ArtifactRow): { text: string; className: string; live: boolean } {
  if (a.revoked_at) return { text: 'Revoked', className: 'badge badge-warning', live: false }
  if (a.pinned) return { text: 'Pinned', className: 'badge badge-ok', live: true }
  if (a.expires_at && Date.parse(a.expires_at) <= Date.now()) return { text: 'Expired', className: 'badge badge-warning', live: false }
  return { text: `Until ${a.expires_at ? utcText(a.expires_at) : ''}`, className: 'badge', live: true }
}

const swap = (action: string) => ({ method: 'post' as const, action, 'hx-post': action, 'hx-target': '#artifacts', 'hx-swap': 'outerHTML', class: 'inline-form' })

function ActionButton({ id, action, label, title }: { id: string; action: Action; label: string; title: string }) {
  const extra = action === 'delete' ? { 'hx-confirm': `Delete ${title}? Its links stop working, for good.` } : {}
  return (
    <form {...swap(`/me/artifacts/${id}/${action}`)} {...extra}>
      <button type="submit" aria-label={`${label} ${title}`}>
        {label}
      </button>
    </form>
  )
}

/** The list and its outcome: the whole page's section, and what each htmx action swaps in. */
export function ArtifactsSection({ artifacts, outcome = {} }: { artifacts: ArtifactRow[]; outcome?: Outcome }) {
  return (
    <section id="artifacts" class="card portal-wide" aria-labelledby="artifacts-title">
      <h2 id="artifacts-title">Your artifacts</h2>
      <p>
        What agents made for you. Each lives 30 days (or as long as it was given) unless you pin it; unpinning starts its time again. Revoking stops
        every link to it until you unrevoke it.
      </p>
      <Notice text={outcome.notice} />
      <Alert text={outcome.problem} />
      {outcome.link ? (
        <Notice>
          A link to {outcome.link.title}, working until <Time iso={outcome.link.expires_at} />:{' '}
          <a href={outcome.link.url} class="portal-token">
            {outcome.link.url}
          </a>
        </Notice>
      ) : null}
      {artifacts.length === 0 ? (
        <p>You have no artifacts; what your agents make for you will be listed here.</p>
      ) : (
        <Table caption="Your artifacts" headers={['Title', 'Kind', 'Size', 'State', 'Made']} actions>
          {artifacts.map((a) => {
            const s = state(a)
            return (
              <tr id={`artifact-${a.id}`}>
                <td>{a.title}</td>
                <td>{KINDS[a.media_type] ?? a.media_type}</td>
                <td>{size(a.size_bytes)}</td>
                <td>
                  <span class={s.className}>{s.text}</span>
                </td>
                <td>
                  <Time iso={a.created_at} />
                </td>
                <td class="actions">
                  {s.live ? <ActionButton id={a.id} action="share" label="Share link" title={a.title} /> : null}
                  {a.pinned ? <ActionButton id={a.id} action="unpin" label="Unpin" title={a.title} /> : <ActionButton id={a.id} action="pin" label="Pin" title={a.title} />}
                  {a.revoked_at ? <ActionButton id={a.id} action="unrevoke" label="Unrevoke" title={a.title} /> : <ActionButton id={a.id} action="revoke" label="Revoke" title={a.title} />}
                  <ActionButton id={a.id} action="delete" label="Delete" title={a.title} />
                </td>
              </tr>
            )
          })}
        </Table>
      )}
    </section>
  )
}

/** A fragment for htmx, the whole page for a plain browser request. */
const isFragment = (c: Ctx) => c.req.header('hx-request') === 'true' && c.req.header('hx-request-type') !== 'full'

/** What each action but a share (which shows its link) asks of the public API, and what it says when it worked. */
const CALLS: Record<Exclude<Action, 'share'>, { run: (api: Api, id: string) => Promise<{ error?: unknown; response: Response }>; notice?: string; failed: string }> = {
  pin: { run: (api, id) => api.POST('/api/artifacts/{id}/pin', { params: { path: { id } } }), notice: 'Pinned: it no longer expires.', failed: 'Pinning' },
  unpin: { run: (api, id) => api.POST('/api/artifacts/{id}/unpin', { params: { path: { id } } }), notice: 'Unpinned: its time starts again from now.', failed: 'Unpinning' },
  revoke: { run: (api, id) => api.POST('/api/artifacts/{id}/revoke', { params: { path: { id } } }), notice: 'Revoked: its links stop working.', failed: 'Revoking' },
  unrevoke: { run: (api, id) => api.POST('/api/artifacts/{id}/unrevoke', { params: { path: { id } } }), notice: 'Unrevoked: its links work again until they expire.', failed: 'Unrevoking' },
  delete: { run: (api, id) => api.DELETE('/api/v1/Artifact/{id}', { params: { path: { id } } }), notice: 'Deleted, with every link to it.', failed: 'Deleting' },
}

/**
 * /me/artifacts: the person's own artifacts, with pin, unpin, revoke, unrevoke, a share link and delete; every read
 * and change through the public API as them, the same section answering htmx and plain forms.
 */
export function mountArtifactsPage(app: Hono<AdminEnv>, api: ApiClient): void {
  const answer = async (c: Ctx, outcome: Outcome = {}, status = 200) => {
    const listed = await api.as(c).GET('/api/v1/Artifact', { params: { query: { order: 'created_at.desc', limit: '200' } } })
    const artifacts: ArtifactRow[] = listed.data?.data ?? []
    const shown = listed.data || outcome.problem ? outcome : { ...outcome, problem: problemText(listed, 'Listing your artifacts') }
    const section = <ArtifactsSection artifacts={artifacts} outcome={shown} />
    c.status(status as 200)
    if (isFragment(c)) return c.html(section)
    return c.render(
      <div class="portal">
        <h1>{TITLE}</h1>
        <p>
          <a href="/me">Back to your account</a>
        </p>
        {section}
      </div>,
      { title: TITLE, assets: ASSETS },
    )
  }

  const refused = (c: Ctx, { error, response }: { error?: unknown; response: Response }, failed: string) => {
    const status = response.status === 404 || response.status === 409 || response.status === 403 ? response.status : 422
    return answer(c, { problem: problemText({ response, error }, failed) }, status)
  }

  app.get('/me/artifacts', (c) => answer(c))

  app.post('/me/artifacts/:id/:action', async (c) => {
    const { id, action } = c.req.param()
    if (!(ACTIONS as readonly string[]).includes(action)) return answer(c, { problem: 'There is no such action.' }, 404)
    // The id becomes a path segment of an API call: only a UUID may, so nothing else can be named.
    if (!isUuid(id)) return answer(c, { problem: 'No such artifact.' }, 404)
    if (action === 'share') {
      const shared = await api.as(c).POST('/api/artifacts/{id}/share', { params: { path: { id } }, body: {} })
      if (!shared.data) return refused(c, shared, 'Making a link')
      const title = (await api.as(c).GET('/api/v1/Artifact/{id}', { params: { path: { id } } })).data?.title ?? 'the artifact'
      return answer(c, { link: { title, url: shared.data.url, expires_at: shared.data.expires_at } })
    }
    const call = CALLS[action as Exclude<Action, 'share'>]
    const done = await call.run(api.as(c), id)
    if (!done.response.ok) return refused(c, done, call.failed)
    return answer(c, { notice: call.notice })
  })
}
