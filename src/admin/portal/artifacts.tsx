/** @jsxImportSource hono/jsx */
import type { Context, Hono } from 'hono'
import { isUuid } from '../../models/fields.ts'
import type { ApiClient, ApiReply } from '../api-client.ts'
import type { AdminEnv } from '../context.ts'
import { Alert, Notice } from '../components/feedback.tsx'
import { Table } from '../components/table.tsx'

type Ctx = Context<AdminEnv>

interface ArtifactRow {
  id: string
  title: string
  media_type: string
  size_bytes: number
  pinned: boolean
  expires_at: string | null
  revoked_at: string | null
  created_at: string
}

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

const when = (iso: string) => iso.replace('T', ' ').replace(/\.\d+Z$|Z$/, ' UTC')

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
  return { text: `Until ${when(a.expires_at ?? '')}`, className: 'badge', live: true }
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
          A link to {outcome.link.title}, working until {when(outcome.link.expires_at)}:{' '}
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
                <td>{when(a.created_at)}</td>
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

const detail = (reply: Pick<ApiReply, 'status' | 'body'>, fallback: string) => (typeof reply.body?.detail === 'string' ? reply.body.detail : `${fallback} (${reply.status}).`)

/** What each action asks of the public API, and what it says when it worked. */
const CALLS: Record<Action, { method: string; path: (id: string) => string; ok: number; notice?: string; failed: string }> = {
  pin: { method: 'POST', path: (id) => `/api/artifacts/${id}/pin`, ok: 200, notice: 'Pinned: it no longer expires.', failed: 'Pinning failed' },
  unpin: { method: 'POST', path: (id) => `/api/artifacts/${id}/unpin`, ok: 200, notice: 'Unpinned: its time starts again from now.', failed: 'Unpinning failed' },
  revoke: { method: 'POST', path: (id) => `/api/artifacts/${id}/revoke`, ok: 200, notice: 'Revoked: its links stop working.', failed: 'Revoking failed' },
  unrevoke: { method: 'POST', path: (id) => `/api/artifacts/${id}/unrevoke`, ok: 200, notice: 'Unrevoked: its links work again until they expire.', failed: 'Unrevoking failed' },
  share: { method: 'POST', path: (id) => `/api/artifacts/${id}/share`, ok: 200, failed: 'Making a link failed' },
  delete: { method: 'DELETE', path: (id) => `/api/v1/Artifact/${id}`, ok: 204, notice: 'Deleted, with every link to it.', failed: 'Deleting failed' },
}

/**
 * /me/artifacts: the person's own artifacts, with pin, unpin, revoke, unrevoke, a share link and delete; every read
 * and change through the public API as them, the same section answering htmx and plain forms.
 */
export function mountArtifactsPage(app: Hono<AdminEnv>, api: ApiClient): void {
  const answer = async (c: Ctx, outcome: Outcome = {}, status = 200) => {
    const listed = await api.call(c, 'GET', '/api/v1/Artifact?order=created_at.desc&limit=200')
    const artifacts: ArtifactRow[] = listed.status === 200 ? listed.body.data : []
    const shown = listed.status === 200 || outcome.problem ? outcome : { ...outcome, problem: detail(listed, 'Listing your artifacts failed') }
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

  app.get('/me/artifacts', (c) => answer(c))

  app.post('/me/artifacts/:id/:action', async (c) => {
    const { id, action } = c.req.param()
    if (!(ACTIONS as readonly string[]).includes(action)) return answer(c, { problem: 'There is no such action.' }, 404)
    const call = CALLS[action as Action]
    // The id becomes a path segment of an API call: only a UUID may, so nothing else can be named.
    const reply = isUuid(id) ? await api.call(c, call.method, call.path(id), action === 'share' ? {} : undefined) : { status: 404, body: { detail: 'No such artifact.' } }
    if (reply.status !== call.ok) {
      const status = reply.status === 404 || reply.status === 409 || reply.status === 403 ? reply.status : 422
      return answer(c, { problem: detail(reply, call.failed) }, status)
    }
    if (action === 'share') {
      const title = (await api.call(c, 'GET', `/api/v1/Artifact/${id}`)).body?.title ?? 'the artifact'
      return answer(c, { link: { title, url: reply.body.url, expires_at: reply.body.expires_at } })
    }
    return answer(c, { notice: call.notice })
  })
}
