import type { Context, Hono } from 'hono'
import type { ActiveTheme } from '../plugin-host/host.ts'
import { LOGO_TYPES } from '../plugin-host/theme-files.ts'

/** What the theme routes need of the plugin host: which theme is on, asked on every request. */
export interface ThemeSource {
  activeTheme(): ActiveTheme | undefined
}

/** An SVG opened on its own runs no script and loads nothing; its inline styles still apply. */
const SVG_POLICY = "default-src 'none'; style-src 'unsafe-inline'"

/** Whether the theme switched on ships a logo (the layout shows it instead of the product name). */
export function hasThemeLogo(plugins: ThemeSource): boolean {
  return plugins.activeTheme()?.logo !== undefined
}

/**
 * GET /static/theme.css and GET /static/theme/logo: the active theme's files, read from its plugin folder on each
 * request. Browsers revalidate every time (no-cache with an ETag, so an unchanged file costs a 304), which is what
 * makes a theme switched on or off apply on the next page load without a restart. Mount before the /static/* files.
 */
export function mountTheme(app: Hono<any>, plugins: ThemeSource): void {
  app.get('/static/theme.css', async (c) => {
    const theme = plugins.activeTheme()
    // No theme: an empty stylesheet, so the page's link never fails and the console's own colours stand.
    const css = theme?.css ? new Uint8Array(await Bun.file(theme.css).arrayBuffer()) : new Uint8Array()
    return send(c, css, 'text/css; charset=utf-8', theme?.plugin ?? '')
  })

  app.get('/static/theme/logo', async (c) => {
    const theme = plugins.activeTheme()
    if (!theme?.logo) return c.text('This theme has no logo.', 404, { 'cache-control': 'no-cache' })
    const type = LOGO_TYPES[theme.logo.split('.').pop()!.toLowerCase()]!
    const logo = new Uint8Array(await Bun.file(theme.logo).arrayBuffer())
    if (type === 'image/svg+xml') c.header('content-security-policy', SVG_POLICY)
    return send(c, logo, type, theme.plugin)
  })
}

/** Answers with the bytes, or 304 when the browser's copy is the same (theme and content). */
function send(c: Context, bytes: Uint8Array, type: string, plugin: string): Response {
  const tag = `"${new Bun.CryptoHasher('sha256').update(plugin).update('\0').update(bytes).digest('base64url').slice(0, 27)}"`
  c.header('etag', tag)
  c.header('cache-control', 'no-cache')
  c.header('x-content-type-options', 'nosniff')
  const seen = c.req.header('if-none-match')?.split(',').map((t) => t.trim().replace(/^W\//, ''))
  if (seen?.includes(tag) || seen?.includes('*')) return c.body(null, 304)
  c.header('content-type', type)
  return c.body(bytes as Uint8Array<ArrayBuffer>, 200)
}
