/** @jsxImportSource hono/jsx */
import type { Child } from 'hono/jsx'
import type { Me } from '../context.ts'

const NAV = [
  { href: '/', label: 'Overview' },
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

export function Layout({ title, apiBaseUrl, me, children }: { title: string; apiBaseUrl: string; me?: Me; children?: Child }) {
  return (
    <html lang="en">
      <head>
        <meta charset="utf-8" />
        <meta name="viewport" content="width=device-width, initial-scale=1" />
        <title>{`${title} · Switchboard`}</title>
        <link rel="stylesheet" href="/static/css/admin.css" />
        <script src="/static/htmx.min.js" defer></script>
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
