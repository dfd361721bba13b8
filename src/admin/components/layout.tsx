/** @jsxImportSource hono/jsx */
import type { Child } from 'hono/jsx'
import type { Display, Me } from '../context.ts'
import { API_MAJOR, VERSION } from '../../version.ts'

type Standing = 'member' | 'admin' | 'superadmin'

interface NavItem {
  href: string
  label: string
  /** The least standing that can use the page; the API decides in the end, this only keeps the menu honest. */
  for: Standing
}

/** The console's pages in groups, each offered only to whoever can use it; a group with nothing to offer is left out. */
const NAV: Array<{ label: string; items: NavItem[] }> = [
  { label: 'Chat', items: [{ href: '/chat', label: 'Chat', for: 'member' }] },
  {
    label: 'Agents',
    items: [
      { href: '/agents', label: 'Agents', for: 'member' },
      { href: '/runners', label: 'Runners', for: 'admin' },
      { href: '/plugins', label: 'Plugins', for: 'admin' },
    ],
  },
  {
    label: 'Tools',
    items: [
      { href: '/mcp-servers', label: 'MCP servers', for: 'member' },
      { href: '/permissions', label: 'Permissions', for: 'admin' },
      { href: '/approvals', label: 'Tool approvals', for: 'member' },
      { href: '/mcp-commands', label: 'MCP programs', for: 'superadmin' },
    ],
  },
  {
    label: 'People',
    items: [
      { href: '/users', label: 'Users', for: 'admin' },
      { href: '/companies', label: 'Companies', for: 'admin' },
      { href: '/identity-providers', label: 'Sign-in providers', for: 'admin' },
      { href: '/model-acls', label: 'Model permissions', for: 'superadmin' },
    ],
  },
  {
    label: 'Platform',
    items: [
      { href: '/', label: 'Overview', for: 'admin' },
      { href: '/usage', label: 'Usage', for: 'member' },
      { href: '/budgets', label: 'Budgets', for: 'admin' },
      { href: '/audit', label: 'Audit trail', for: 'admin' },
      { href: '/vault', label: 'Vault', for: 'member' },
      { href: '/system-config', label: 'System settings', for: 'superadmin' },
    ],
  },
]

/** The menu as `me` sees it. */
export function menuOf(me: Me): Array<{ label: string; items: NavItem[] }> {
  const rank = RANK[standing(me)]
  return NAV.map((group) => ({ ...group, items: group.items.filter((item) => RANK[item.for] <= rank) })).filter((group) => group.items.length > 0)
}

/** What `me` may use of the console: members chat and see their own things; admins run their company. */
export function standing(me: Me): Standing {
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
  const groups = me ? menuOf(me) : []
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
        <script src="/static/page.js" defer></script>
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
            <button type="button" id="menu-toggle" class="menu-toggle" aria-expanded="false" aria-controls="site-nav">
              Menu
            </button>
          ) : null}
          {me ? (
            <nav id="site-nav" class="site-nav" aria-label="Console">
              {groups.map((group) =>
                group.items.length === 1 && group.items[0]!.label === group.label ? (
                  <a href={group.items[0]!.href} aria-current={current(group.items[0]!.href, path) ? 'page' : undefined}>
                    {group.label}
                  </a>
                ) : (
                  <details class="nav-group">
                    <summary class={group.items.some((item) => current(item.href, path)) ? 'here' : undefined}>{group.label}</summary>
                    <ul>
                      {group.items.map((item) => (
                        <li>
                          <a href={item.href} aria-current={current(item.href, path) ? 'page' : undefined}>
                            {item.label}
                          </a>
                        </li>
                      ))}
                    </ul>
                  </details>
                ),
              )}
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
