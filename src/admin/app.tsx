/** @jsxImportSource hono/jsx */
import { dirname, join } from 'node:path'
import { Hono, type Context } from 'hono'
import { serveStatic } from 'hono/bun'
import { jsxRenderer } from 'hono/jsx-renderer'
import type { ContentfulStatusCode } from 'hono/utils/http-status'
import { toApiError } from '../errors.ts'
import { localRedirect } from '../auth/redirect.ts'
import { originGuard } from '../auth/origin-guard.ts'
import { requestIds } from '../http/request-id.ts'
import { requestLog } from '../http/request-log.ts'
import { PAGE_POLICY, securityHeaders } from '../http/security-headers.ts'
import { streamLargeBodies } from '../http/large-bodies.ts'
import type { Services } from '../services.ts'
import { problemText, type ApiClient } from './api-client.ts'
import { Layout, type PageAssets } from './components/layout.tsx'
import type { AdminEnv } from './context.ts'
import { ForgotPasswordPage, LoginPage } from './pages/login.tsx'

/** What the sign-in page says after a reset, or after a link was asked for. */
const LOGIN_NOTICES: Record<string, string> = {
  reset: 'Your password is set. Sign in with it.',
  sent: 'If an account matches and has an email address, a link to choose a new password is on its way. It works once, for 24 hours.',
}
import { ResetPasswordPage } from './pages/reset-password.tsx'
import { Health, Overview } from './pages/overview.tsx'
import { CONSOLE_PAGES, mountConsole } from './console/index.ts'
import { mountAvatarFiles } from './portal/avatar-files.ts'
import { mountPortal } from './portal/routes.tsx'
import { mountConnections } from './portal/connections.tsx'
import { mountArtifactsPage } from './portal/artifacts.tsx'
import { mountArtifactShares } from './portal/artifact-share.tsx'
import { mountOAuthConsent } from './pages/oauth-consent.tsx'
import { hasThemeLogo, mountTheme } from './theme.ts'
import { PageRefusal } from './console/routes.tsx'
import type { WebChat } from './chat/index.ts'
import { Alert } from './components/feedback.tsx'
import { standing } from './components/layout.tsx'
import { RememberedRouter } from '../http/remembered-router.ts'

const STATIC_DIR = join(import.meta.dir, '..', '..', 'static')
const packageDir = (name: string) => dirname(Bun.fileURLToPath(import.meta.resolve(`${name}/package.json`)))
const HTMX_DIR = join(packageDir('htmx.org'), 'dist')
const MARKED_DIR = join(packageDir('marked'), 'lib')
const PURIFY_DIR = join(packageDir('dompurify'), 'dist')
const CHART_DIR = join(packageDir('chart.js'), 'dist')
const HIGHLIGHT_DIR = packageDir('@highlightjs/cdn-assets')

declare module 'hono' {
  interface ContextRenderer {
    (content: string | Promise<string>, props: { title: string; assets?: PageAssets }): Response | Promise<Response>
  }
}

/** The admin app (port 8080): console pages rendered on the server, data only through the public API. */
/**
 * `signIn`: the api app's sign-in, sign-out and password-reset handlers, which answer on this port too (DESIGN
 * §4); the composition root hands them over, so the console never reaches into the api layer itself.
 */
export function createAdminApp(services: Services, api: ApiClient, signIn: readonly Hono<any>[], chat: WebChat): Hono<AdminEnv> {
  const app = new Hono<AdminEnv>({ router: new RememberedRouter() })
  const apiBaseUrl = services.config.baseUrl
  app.use(streamLargeBodies())
  app.use(securityHeaders(PAGE_POLICY, { pages: true }))

  // htmx comes from the installed package and changes only with an upgrade, so browsers may keep it a day.
  const aDay = { onFound: (_: unknown, c: Context) => c.header('cache-control', 'public, max-age=86400') }
  app.get('/static/htmx.min.js', serveStatic({ root: HTMX_DIR, path: 'htmx.min.js', ...aDay }))
  // The chat renders answers as markdown and sanitizes them in the browser, with these two, served from here.
  app.get('/static/vendor/marked.js', serveStatic({ root: MARKED_DIR, path: 'marked.umd.js', ...aDay }))
  app.get('/static/vendor/purify.js', serveStatic({ root: PURIFY_DIR, path: 'purify.min.js', ...aDay }))
  // Code in answers is highlighted with highlight.js's browser build; its colours are the theme's (chat.css).
  app.get('/static/vendor/highlight.js', serveStatic({ root: HIGHLIGHT_DIR, path: 'highlight.min.js', ...aDay }))
  // The usage pages draw their charts with Chart.js, served from here like the others.
  app.get('/static/vendor/chart.js', serveStatic({ root: CHART_DIR, path: 'chart.umd.min.js', ...aDay }))
  // serveStatic refuses `..`, doubled slashes and backslashes before it looks at the disk, but hands a NUL byte to
  // Bun, which throws. A file it does not serve ends here, not at the sign-in redirect further down.
  // The active theme's stylesheet and logo, at fixed addresses: switching themes needs no restart.
  mountTheme(app, services.plugins)
  // Avatars are in the store (shared by every process), read through the public API; before the static files.
  mountAvatarFiles(app, api)
  const notHere = (c: Context) => c.text('Not found', 404)
  const files = serveStatic({ root: STATIC_DIR, rewriteRequestPath: (path) => path.slice('/static'.length) })
  app.get('/static/*', (c, next) => (c.req.path.includes('\0') ? notHere(c) : next()), files, notHere)

  app.use(requestIds())
  // One line per console request too; the api calls a page makes log their own lines, under the same request id.
  app.use(requestLog(services.log, (c) => ({ user_id: c.get('me')?.user.id ?? null, company_id: c.get('me')?.company_id ?? null })))
  app.use(originGuard([services.config.baseUrl, services.config.adminBaseUrl]))
  // Sign-in and sign-out are the api's own handlers, answering on this port too.
  for (const routes of signIn) app.route('/', routes)
  chat.mountSocket(app)

  // The platform's name and banner, from the System settings (cached, dropped after every change to them).
  app.use(async (c, next) => {
    const [name, banner] = await Promise.all([services.settings.get('platform.name'), services.settings.get('platform.banner')])
    c.set('display', { name, banner })
    await next()
  })
  app.use(jsxRenderer(({ children, title, assets }, c) => <Layout title={title} apiBaseUrl={apiBaseUrl} me={c.get('me')} display={c.get('display')} assets={assets} logo={hasThemeLogo(services.plugins)} path={c.req.path}>{children}</Layout>, { docType: true }))

  app.get('/login', async (c) => {
    const redirect = localRedirect(c.req.query('post_login_redirect'), [services.config.baseUrl, services.config.adminBaseUrl])
    // A company's own sign-in page offers its providers; the shared one, those a superadmin listed.
    const company = c.req.query('company')?.slice(0, 100)
    const providers = (await api.as(c).GET('/auth/sso', { params: { query: company ? { company } : {} } })).data?.data ?? []
    const notice = LOGIN_NOTICES[c.req.query('reset') === 'done' ? 'reset' : (c.req.query('forgot') ?? '')]
    return c.render(<LoginPage error={c.req.query('error')} redirect={redirect} notice={notice} providers={providers} />, { title: 'Sign in' })
  })
  app.get('/forgot-password', (c) => c.render(<ForgotPasswordPage error={c.req.query('error')} />, { title: 'Forgot password' }))

  app.get('/reset-password', (c) => c.render(<ResetPasswordPage token={c.req.query('token') ?? ''} error={c.req.query('error')} />, { title: 'Choose a password' }))

  // Share links open without signing in: the signed token is the permission.
  mountArtifactShares(app, services.artifacts)

  // Every other page needs a session: without one, to the sign-in page and back here afterwards.
  app.use(async (c, next) => {
    const me = await api.as(c).GET('/api/me')
    if (me.response.status === 401) {
      const back = `/login?${new URLSearchParams({ post_login_redirect: `${c.req.path}${new URL(c.req.url).search}` })}`
      if (c.req.header('hx-request') === 'true') {
        c.header('HX-Redirect', back)
        return c.body(null, 401)
      }
      return c.redirect(back, 303)
    }
    if (!me.data) throw new Error(`GET /api/me answered ${me.response.status}`)
    c.set('me', me.data)
    await next()
    // A signed-in page is the person's own: after sign-out, Back must not show it from the browser's cache.
    c.header('cache-control', 'no-store')
  })

  app.get('/', async (c) => {
    // A member's home is the chat: the overview is about running the company, which is not theirs to do.
    if (standing(c.get('me')) === 'member') return c.redirect('/chat', 303)
    const counts = await Promise.all(
      [...services.models.keys()].map(async (model) => {
        const { status, body } = await api.call(c, 'GET', `/api/v1/${model}?limit=1&select=id&count=exact`)
        const count = status === 200 && typeof body === 'object' && body !== null && 'count' in body && typeof body.count === 'number' ? body.count : undefined
        return { model, count }
      }),
    )
    const [figures, budgets] = await Promise.all([api.as(c).GET('/api/overview'), api.as(c).GET('/api/usage/budgets')])
    const health = figures.data ? <Health figures={figures.data} budgets={budgets.data?.data ?? []} /> : <Alert text={problemText(figures, 'Reading the overview')} />
    return c.render(<Overview counts={counts} apiBaseUrl={apiBaseUrl} pages={CONSOLE_PAGES} health={health} />, { title: 'Overview' })
  })
  mountConsole(app, api)
  mountConnections(app, api)
  mountArtifactsPage(app, api)
  mountPortal(app, api)
  mountOAuthConsent(app, api)
  chat.mountPages(app)

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
  app.onError((error, c) => {
    // What the API refused a page: its reason, with its status (a member's 403 says what only admins may do).
    if (error instanceof PageRefusal) {
      c.status(error.status as ContentfulStatusCode)
      return c.render(
        <section>
          <h1>{error.status === 404 ? 'Not found' : 'Not possible'}</h1>
          <Alert text={error.message} />
        </section>,
        { title: error.status === 404 ? 'Not found' : 'Not possible' },
      )
    }
    const problem = toApiError(error)
    if (problem.status >= 500) {
      services.log.error('console page failed', { request_id: c.get('requestId'), path: c.req.path, error: String((error as Error)?.stack ?? error) })
    }
    const text = problem.status >= 500 ? `The page could not be shown. Quote this id when reporting it: ${c.get('requestId')}` : problem.detail
    c.status(problem.status as ContentfulStatusCode)
    return c.render(
      <section>
        <h1>{problem.status >= 500 ? 'Something went wrong' : 'Not possible'}</h1>
        <p class="problem">{text}</p>
      </section>,
      { title: 'Error' },
    )
  })
  return app
}
