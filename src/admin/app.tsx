import { dirname, join } from 'node:path'
import { Hono } from 'hono'
import { jsxRenderer } from 'hono/jsx-renderer'
import type { Services } from '../services.ts'
import type { ApiClient } from './api-client.ts'
import { Layout } from './components/layout.tsx'
import { Overview } from './pages/overview.tsx'

const STATIC_DIR = join(import.meta.dir, '..', '..', 'static')
const HTMX = join(dirname(Bun.fileURLToPath(import.meta.resolve('htmx.org/package.json'))), 'dist', 'htmx.min.js')

declare module 'hono' {
  interface ContextRenderer {
    (content: string | Promise<string>, props: { title: string }): Response | Promise<Response>
  }
}

/** The admin app (port 8080): console pages rendered on the server, data only through the public API. */
export function createAdminApp(services: Services, api: ApiClient): Hono {
  const app = new Hono()
  const apiBaseUrl = services.config.baseUrl

  app.get('/static/htmx.min.js', () => new Response(Bun.file(HTMX), { headers: { 'content-type': 'text/javascript; charset=utf-8', 'cache-control': 'public, max-age=86400' } }))
  app.get('/static/*', async (c) => {
    let relative: string
    try {
      relative = decodeURIComponent(c.req.path.slice('/static/'.length))
    } catch {
      return c.text('Not found', 404)
    }
    if (relative.includes('\0') || relative.split('/').some((part) => part === '..' || part === '')) return c.text('Not found', 404)
    const file = Bun.file(join(STATIC_DIR, relative))
    return (await file.exists()) ? new Response(file) : c.text('Not found', 404)
  })

  app.use(jsxRenderer(({ children, title }) => <Layout title={title} apiBaseUrl={apiBaseUrl}>{children}</Layout>, { docType: true }))

  app.get('/', async (c) => {
    const counts = await Promise.all(
      [...services.models.keys()].map(async (model) => {
        const { status, body } = await api.get<{ count?: number }>(`/api/v1/${model}?limit=1&select=id&count=exact`)
        return { model, count: status === 200 ? body.count : undefined }
      }),
    )
    return c.render(<Overview counts={counts} apiBaseUrl={apiBaseUrl} />, { title: 'Overview' })
  })

  app.notFound((c) => {
    c.status(404)
    return c.render(
      <section>
        <h1>Not found</h1>
        <p>There is no page at {c.req.path}.</p>
        <p>
          <a href="/">Back to the overview</a>
        </p>
      </section>,
      { title: 'Not found' },
    )
  })
  return app
}
