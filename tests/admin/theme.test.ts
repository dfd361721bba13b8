import { expect, test } from 'bun:test'
import { readFileSync } from 'node:fs'
import { join } from 'node:path'
import { Hono } from 'hono'
import { hasThemeLogo, mountTheme } from '../../src/admin/theme.ts'
import { usePlatform } from '../helpers/platform.ts'

const runtime = join(import.meta.dir, '..', 'plugin-host', 'fixtures', 'runtime')
const p = usePlatform({ SWITCHBOARD_PLUGIN_PATHS: runtime })

/** The theme routes on an app of their own, over the platform's plugin host. */
function themeApp() {
  const app = new Hono()
  mountTheme(app, p().services.plugins)
  return app
}

test('no theme on: an empty stylesheet that browsers revalidate, and no logo', async () => {
  const app = themeApp()
  const css = await app.request('/static/theme.css')
  expect(css.status).toBe(200)
  expect(css.headers.get('content-type')).toBe('text/css; charset=utf-8')
  expect(css.headers.get('cache-control')).toBe('no-cache')
  expect(css.headers.get('etag')).toMatch(/^".+"$/)
  expect(await css.text()).toBe('')
  expect((await app.request('/static/theme/logo')).status).toBe(404)
  expect(hasThemeLogo(p().services.plugins)).toBe(false)
})

test('switching themes applies on the next request, without a restart; an unchanged stylesheet is a 304', async () => {
  const app = themeApp()
  const none = await app.request('/static/theme.css')

  expect((await p().call('POST', '/api/plugins/theme-dark/enable')).status).toBe(200)
  const dark = await app.request('/static/theme.css')
  expect(await dark.text()).toBe(readFileSync(join(import.meta.dir, '..', '..', 'plugins', 'theme-dark', 'theme.css'), 'utf8'))
  expect(dark.headers.get('etag')).not.toBe(none.headers.get('etag'))
  const again = await app.request('/static/theme.css', { headers: { 'if-none-match': dark.headers.get('etag')! } })
  expect(again.status).toBe(304)
  expect(hasThemeLogo(p().services.plugins)).toBe(false)

  expect((await p().call('POST', '/api/plugins/theme-light/enable')).status).toBe(200)
  // The browser's copy of the dark theme is stale now.
  const light = await app.request('/static/theme.css', { headers: { 'if-none-match': dark.headers.get('etag')! } })
  expect(light.status).toBe(200)
  expect(await light.text()).toContain('--fg: #111111')
  expect(hasThemeLogo(p().services.plugins)).toBe(true)

  expect((await p().call('POST', '/api/plugins/theme-light/disable')).status).toBe(200)
  expect(await (await app.request('/static/theme.css')).text()).toBe('')
})

test('the logo is served with its type, and an SVG cannot run script or load anything', async () => {
  const app = themeApp()
  await p().call('POST', '/api/plugins/theme-light/enable')
  try {
    const logo = await app.request('/static/theme/logo')
    expect(logo.status).toBe(200)
    expect(logo.headers.get('content-type')).toBe('image/svg+xml')
    expect(logo.headers.get('content-security-policy')).toBe("default-src 'none'; style-src 'unsafe-inline'")
    expect(logo.headers.get('x-content-type-options')).toBe('nosniff')
    expect(await logo.text()).toContain('<svg')
  } finally {
    await p().call('POST', '/api/plugins/theme-light/disable')
  }
  expect((await app.request('/static/theme/logo')).status).toBe(404)
})

/** WCAG relative luminance and contrast ratio of two #rrggbb colours. */
function contrast(a: string, b: string): number {
  const luminance = (hex: string) => {
    const [r, g, bl] = [1, 3, 5].map((i) => parseInt(hex.slice(i, i + 2), 16) / 255).map((c) => (c <= 0.03928 ? c / 12.92 : ((c + 0.055) / 1.055) ** 2.4))
    return 0.2126 * r! + 0.7152 * g! + 0.0722 * bl!
  }
  const [hi, lo] = [luminance(a), luminance(b)].sort((x, y) => y - x)
  return (hi! + 0.05) / (lo! + 0.05)
}

test('theme-dark keeps every text colour at WCAG AA contrast (4.5:1) on each of its backgrounds', () => {
  const css = readFileSync(join(import.meta.dir, '..', '..', 'plugins', 'theme-dark', 'theme.css'), 'utf8')
  const v = Object.fromEntries([...css.matchAll(/--([a-z-]+):\s*(#[0-9a-f]{6});/g)].map((m) => [m[1]!, m[2]!]))
  for (const text of ['fg', 'muted', 'accent', 'danger', 'warning', 'success']) {
    for (const background of ['bg', 'surface', 'accent-soft', 'code-bg']) {
      expect(contrast(v[text]!, v[background]!), `--${text} on --${background}`).toBeGreaterThanOrEqual(4.5)
    }
  }
  expect(contrast(v['accent-fg']!, v.accent!)).toBeGreaterThanOrEqual(4.5)
  // Borders of controls and the focus ring are parts of controls: 3:1 (WCAG 1.4.11).
  expect(contrast(v.border!, v.surface!)).toBeGreaterThanOrEqual(3)
  expect(contrast(v.focus!, v.bg!)).toBeGreaterThanOrEqual(3)
  // Every colour the console declares is given, so nothing light is left over on a dark page.
  const declared = [...readFileSync(join(import.meta.dir, '..', '..', 'static', 'css', 'admin.css'), 'utf8').matchAll(/^\s*--([a-z-]+):\s*#/gm)].map((m) => m[1]!)
  expect(declared.length).toBeGreaterThan(10)
  for (const name of declared) expect(v[name], `--${name}`).toBeDefined()
})
