/** @jsxImportSource hono/jsx */
import type { Child } from 'hono/jsx'
import type { Display, Me } from '../context.ts'
import { API_MAJOR, VERSION } from '../../version.ts'

type Standing = 'member' | 'admin' | 'superadmin'

/** Pages by the least standing that can use them; the API decides in the end, this only keeps the menu honest. */
const NAV: Array<{ href: string; label: string; for: Standing }> = [
  { href: '/', label: 'Overview', for: 'member' },
  { href: '/chat', label: 'Chat', for: 'member' },
  { href: '/agents', label: 'Agents', for: 'member' },
  { href: '/mcp-servers', label: 'MCP servers', for: 'member' },
  { href: '/permissions', label: 'Permissions', for: 'admin' },
  { href: '/runners', label: 'Runners', for: 'admin' },
  { href: '/plugins', label: 'Plugins', for: 'member' },
  { href: '/vault', label: 'Vault', for: 'member' },
  { href: '/usage', label: 'Usage', for: 'member' },
  { href: '/budgets', label: 'Budgets', for: 'admin' },
  { href: '/users', label: 'Users', for: 'admin' },
  { href: '/audit', label: 'Audit trail', for: 'admin' },
  { href: '/companies', label: 'Companies', for: 'member' },
  { href: '/mcp-commands', label: 'MCP programs', for: 'superadmin' },
  { href: '/model-acls', label: 'Model permissions', for: 'superadmin' },
  { href: '/system-config', label: 'System settings', for: 'superadmin' },
]

function standing(me: Me): Standing {
  if (me.user.is_superadmin) return 'superadmin'
  return me.role === 'admin' || me.role === 'owner' ? 'admin' : 'member'
}

const RANK: Record<Standing, number> = { member: 0, admin: 1, superadmin: 2 }

/** The menu entry of the page shown: its own address, or a page under it (`/agents/…` is under Agents). */
function current(href: string, path: string): boolean {
  return href === '/' ? path === '/' : path === href || path.startsWith(`${href}/`)
}

function SignedIn({ me }: { me: Me }) {
  return (
    <form method="post" action="/auth/logout" class="whoami">
      <a href="/me">{me.user.display_name || me.user.username}</a>
      <button type="submit">Sign out</button>
    </form>
  )
}

/** Files a page needs besides the console's own, served from this origin. */
export interface PageAssets {
  scripts?: string[]
  styles?: string[]
}

/**
 * Every page of the admin port: console, portal and chat. The theme's stylesheet comes last, so a theme plugin
 * overrides the console's colours; it is served at a fixed address that always holds the active theme.
 */
export function Layout({ title, apiBaseUrl, me, display = { name: 'Switchboard', banner: '' }, assets = {}, logo, path = '', children }: { title: string; apiBaseUrl: string; me?: Me; display?: Display; assets?: PageAssets; logo?: boolean; path?: string; children?: Child }) {
  const mine = me ? NAV.filter((item) => RANK[item.for] <= RANK[standing(me)]) : []
  return (
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>{`${title} · ${display.name}`}</title>
        <link rel="stylesheet" href="/static/css/admin.css" />
        <link rel="stylesheet" href="/static/css/console.css" />
        {(assets.styles ?? []).map((href) => (
          <link rel="stylesheet" href={href} />
        ))}
        <link rel="stylesheet" href="/static/theme.css" />
        <script src="/static/htmx.min.js" defer></script>
        {(assets.scripts ?? []).map((src) => (
          <script src={src} defer></script>
        ))}
      </head>
      <body>
        <a class="skip-link" href="#main">
          Skip to the content
        </a>
        <header class="top">
          <a class="brand" href="/">
            {logo ? <img src="/static/theme/logo" alt="" class="logo" /> : null}
            {display.name}
          </a>
          {me ? (
            <nav aria-label="Console">
              {mine.map((item) => (
                <a href={item.href} aria-current={current(item.href, path) ? 'page' : undefined}>
                  {item.label}
                </a>
              ))}
              <a href={`${apiBaseUrl}/api/docs`}>API docs</a>
            </nav>
          ) : null}
          {me ? <SignedIn me={me} /> : null}
        </header>
        {display.banner ? (
          <p class="banner" role="status">
            {display.banner}
          </p>
        ) : null}
        <main id="main" tabindex={-1}>
          {children}
        </main>
        <footer class="site">
          Switchboard {VERSION} · API {API_MAJOR}
        </footer>
      </body>
    </html>
  )
}
