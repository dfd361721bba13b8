/** @jsxImportSource hono/jsx */
import type { Context, Hono } from 'hono'
import type { ContentfulStatusCode } from 'hono/utils/http-status'
import { ShareRefusal, type Artifacts, type SharedArtifact } from '../../artifacts/artifacts.ts'
import { cspHeader, PAGE_POLICY } from '../../http/security-headers.ts'
import type { AdminEnv } from '../context.ts'
import { downloadName, INERT_POLICY, renderArtifact } from './artifact-render.ts'
import { Alert } from '../components/feedback.tsx'
import { Time } from '../components/time.tsx'

/** The share page frames the artifact's own document (same origin, sandboxed by attribute and by its CSP). */
const SHARE_PAGE_POLICY = cspHeader({ ...PAGE_POLICY, 'frame-src': ["'self'"] })

// A link is a secret: no cache keeps it, no search engine lists what it opens.
const PRIVATE = { 'cache-control': 'no-store', 'x-robots-tag': 'noindex, nofollow' }

const HEADINGS: Record<ShareRefusal['status'], string> = { 403: 'This link is not valid', 404: 'Not found', 410: 'No longer available' }


type Ctx = Context<AdminEnv>

/** The artifact a request's link opens, or the refusal it answers with. */
async function open(c: Ctx, artifacts: Artifacts): Promise<SharedArtifact | ShareRefusal> {
  try {
    return await artifacts.openShared(c.req.param('id') ?? '', c.req.query('token') ?? '')
  } catch (error) {
    if (error instanceof ShareRefusal) return error
    throw error
  }
}

function SharedArtifactPage({ artifact, content }: { artifact: SharedArtifact; content: string }) {
  const image = artifact.mediaType.startsWith('image/')
  return (
    <section class="shared-artifact">
      <h1>{artifact.title}</h1>
      <p class="shared-note">Shared with you by link; the link works until <Time iso={artifact.linkExpiresAt.toISOString()} />.</p>
      {image ? (
        <img src={content} alt={artifact.title} class="artifact-image" />
      ) : (
        // No allow-same-origin, ever: the document runs (if it is HTML) in an opaque origin of its own.
        <iframe src={content} sandbox={artifact.mediaType === 'text/html' ? 'allow-scripts' : ''} title={artifact.title} class="artifact-frame" referrerpolicy="no-referrer"></iframe>
      )}
      <p>
        {/* HTML is shown only framed here: on its own, at the console's address, it could pose as the console. */}
        {artifact.mediaType === 'text/html' ? null : (
          <>
            <a href={content} rel="noopener noreferrer" target="_blank">
              Open it on its own
            </a>
            {' · '}
          </>
        )}
        <a href={`${content}&download=1`} rel="noopener noreferrer">
          Download it
        </a>
      </p>
    </section>
  )
}

/**
 * GET /share/artifacts/{id}?token=… and its document, …/content: for anyone holding a link, signed in or not (the
 * signed token is the permission, checked by the kernel). Mount before the console's sign-in gate.
 */
export function mountArtifactShares(app: Hono<AdminEnv>, artifacts: Artifacts): void {
  app.get('/share/artifacts/:id', async (c) => {
    const opened = await open(c, artifacts)
    c.header('content-security-policy', SHARE_PAGE_POLICY)
    for (const [name, value] of Object.entries(PRIVATE)) c.header(name, value)
    if (opened instanceof ShareRefusal) {
      c.status(opened.status as ContentfulStatusCode)
      return c.render(
        <section>
          <h1>{HEADINGS[opened.status]}</h1>
          <Alert text={opened.message} />
        </section>,
        { title: HEADINGS[opened.status] },
      )
    }
    const content = `/share/artifacts/${opened.id}/content?token=${encodeURIComponent(c.req.query('token') ?? '')}`
    return c.render(<SharedArtifactPage artifact={opened} content={content} />, { title: opened.title, assets: { styles: ['/static/css/artifact.css'] } })
  })

  app.get('/share/artifacts/:id/content', async (c) => {
    const opened = await open(c, artifacts)
    const headers: Record<string, string> = { ...PRIVATE, 'x-content-type-options': 'nosniff' }
    if (opened instanceof ShareRefusal) {
      return c.text(`${HEADINGS[opened.status]}: ${opened.message}`, opened.status as ContentfulStatusCode, { ...headers, 'content-security-policy': INERT_POLICY })
    }
    // HTML runs its script only framed by the share page: opened as a page of its own at the console's address, a
    // hostile one could pose as the console (a sign-in form) or send the reader elsewhere. There it is a download.
    const framed = c.req.header('sec-fetch-dest') === 'iframe'
    if (c.req.query('download') !== undefined || (opened.mediaType === 'text/html' && !framed)) {
      const type = opened.mediaType.startsWith('image/') ? opened.mediaType : `${opened.mediaType}; charset=utf-8`
      return c.body(opened.content as Uint8Array<ArrayBuffer>, 200, {
        ...headers,
        'content-type': type,
        'content-security-policy': INERT_POLICY,
        'content-disposition': `attachment; filename="${downloadName(opened)}"`,
      })
    }
    const { body, contentType, policy } = renderArtifact(opened)
    return c.body(body as string | Uint8Array<ArrayBuffer>, 200, { ...headers, 'content-type': contentType, 'content-security-policy': policy })
  })
}
