/** @jsxImportSource hono/jsx */
import type { Child } from 'hono/jsx'
import type { Me } from '../context.ts'

const NAV = [
  { href: '/', label: 'Overview' },
  { href: '/chat', label: 'Chat' },
  { href: '/users', label: 'Users' },
  { href: '/companies', label: 'Companies' },
]

function SignedIn({ me }: { me: Me }) {
  return (
    <form method="post" action="/auth/logout" class="whoami">
      <span>{me.user.display_name || me.user.username}</span>
      <button type="submit">Sign out</button>
    </form>
  )
}

/** Files a page needs besides the console's own, served from this origin. */
export interface PageAssets {
  scripts?: string[]
  styles?: string[]
}

export function Layout({ title, apiBaseUrl, me, assets = {}, children }: { title: string; apiBaseUrl: string; me?: Me; assets?: PageAssets; children?: Child }) {
  return (
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>{`${title} · Switchboard`}</title>
        <link rel="stylesheet" href="/static/css/admin.css" />
        {(assets.styles ?? []).map((href) => (
          <link rel="stylesheet" href={href} />
        ))}
        <script src="/static/htmx.min.js" defer></script>
        {(assets.scripts ?? []).map((src) => (
          <script src={src} defer></script>
        ))}
      </head>
      <body>
        <header class="top">
          <strong class="brand">Switchboard</strong>
          {me ? (
            <nav>
              {NAV.map((item) => (
                <a href={item.href}>{item.label}</a>
              ))}
              <a href={`${apiBaseUrl}/api/docs`}>API docs</a>
            </nav>
          ) : null}
          {me ? <SignedIn me={me} /> : null}
        </header>
        <main>{children}</main>
      </body>
    </html>
  )
}
