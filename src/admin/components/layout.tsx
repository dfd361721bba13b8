import type { Child } from 'hono/jsx'

const NAV = [
  { href: '/', label: 'Overview' },
  { href: '/api/docs', label: 'API docs', external: true },
]

export function Layout({ title, apiBaseUrl, children }: { title: string; apiBaseUrl: string; children?: Child }) {
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
          <nav>
            {NAV.map((item) => (
              <a href={item.external ? `${apiBaseUrl}${item.href}` : item.href}>{item.label}</a>
            ))}
          </nav>
        </header>
        <main>{children}</main>
      </body>
    </html>
  )
}
