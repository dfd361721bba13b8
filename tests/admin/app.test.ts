import { afterAll, beforeAll, expect, test } from 'bun:test'
import { Hono } from 'hono'
import { createWebChat } from '../../src/admin/chat/index.ts'
import { createApiClient } from '../../src/admin/api-client.ts'
import { createAdminApp } from '../../src/admin/app.tsx'
import { ADMIN_PASSWORD, startTestPlatform, type TestPlatform } from '../helpers/platform.ts'

let p: TestPlatform
let cookie: string
const ORIGIN = 'http://127.0.0.1:8080'

beforeAll(async () => {
  p = await startTestPlatform()
  const login = await p.admin.request('/auth/login', {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', origin: ORIGIN },
    body: new URLSearchParams({ username: 'admin', password: ADMIN_PASSWORD, post_login_redirect: '/users' }),
  })
  expect(login.status).toBe(303)
  expect(login.headers.get('location')).toBe('/users')
  cookie = login.headers.get('set-cookie')!.split(';')[0]!
})
afterAll(() => p.close())

const page = async (path: string, init: RequestInit & { headers?: Record<string, string> } = {}, signedIn = true) => {
  const response = await p.admin.request(path, { ...init, headers: { ...(signedIn ? { cookie } : {}), origin: ORIGIN, ...init.headers } })
  return { status: response.status, headers: response.headers, type: response.headers.get('content-type') ?? '', text: await response.text() }
}
const htmx = { 'hx-request': 'true', 'hx-request-type': 'partial' }
const form = (fields: Record<string, string>) => ({ body: new URLSearchParams(fields), headers: { 'content-type': 'application/x-www-form-urlencoded', ...htmx } })

test('pages need a session; the deep link survives the trip through sign-in', async () => {
  const anonymous = await page('/users?q=ad', {}, false)
  expect(anonymous.status).toBe(303)
  expect(anonymous.headers.get('location')).toBe('/login?post_login_redirect=%2Fusers%3Fq%3Dad')
  const login = await page('/login?post_login_redirect=%2Fusers%3Fq%3Dad', {}, false)
  expect(login.text).toContain('name="post_login_redirect" value="/users?q=ad"')
  const offsite = await page('/login?post_login_redirect=%2F%2Fevil.example', {}, false)
  expect(offsite.text).toContain('name="post_login_redirect" value="/"')
  expect((await page('/login?error=invalid', {}, false)).text).toContain('Unknown username or wrong password.')
})

test('an htmx request without a session is sent to the sign-in page', async () => {
  const reply = await page('/users', { headers: htmx }, false)
  expect(reply.status).toBe(401)
  expect(reply.headers.get('hx-redirect')).toBe('/login?post_login_redirect=%2Fusers')
})

test('the overview lists every model with its record count, read through the public API', async () => {
  for (const name of ['one', 'two', 'three']) await p.call('POST', '/api/v1/AgentConfigRecord', { json: { name } })
  const overview = await page('/')
  expect(overview.status).toBe(200)
  expect(overview.text).toStartWith('<!DOCTYPE html>')
  const row = (model: string) => new RegExp(`${model}</a></td><td>(\\d+)</td>`).exec(overview.text)?.[1]
  expect(row('AgentConfigRecord')).toBe('4') // the three above and the first start's demo agent
  expect(row('Company')).toBe('1')
  for (const model of p.services.models.keys()) expect(row(model)).toMatch(/^\d+$/)
  expect(overview.text).toContain('Sign out')
})

test('users: create through the form, find with the filter, edit on its page, delete', async () => {
  const created = await page('/users', { method: 'POST', ...form({ username: 'grace', display_name: 'Grace Hopper', email: 'grace@example.com', password: 'a-long-password' }) })
  expect(created.status).toBe(201)
  const to = created.headers.get('hx-redirect')!
  expect(to).toMatch(/^\/users\/[0-9a-f-]{36}\?created=1$/)
  const id = /\/users\/([0-9a-f-]{36})/.exec(to)![1]!
  const shown = await page(to)
  expect(shown.text).toContain('Created user grace.')
  expect(shown.text).toContain('value="Grace Hopper"')
  expect(shown.text).toContain('name="_version" value="1"')

  const found = await page('/users?q=gra', { headers: htmx })
  expect(found.text).toStartWith('<div id="rows"')
  expect(found.text).toContain('Grace Hopper')
  expect(found.text).not.toContain('admin@switchboard.local')
  expect(found.text).toContain(`href="/users/${id}"`)

  const saved = await page(`/users/${id}`, { method: 'POST', ...form({ _version: '1', username: 'grace', display_name: 'Rear Admiral Hopper', email: 'grace@example.com' }) })
  expect(saved.status).toBe(200)
  expect(saved.text).toContain('Saved user grace.')
  expect(saved.text).toContain('name="_version" value="2"')
  // The delete form rides along with the new version, so deleting right after saving is not refused as stale.
  expect(saved.text).toMatch(/<form id="delete-form"[^>]*hx-swap-oob="true"/)
  expect((await p.call('GET', `/api/v1/User/${id}`)).body.display_name).toBe('Rear Admiral Hopper')

  const deleted = await page(`/users/${id}/delete`, { method: 'POST', ...form({ _version: '2', _name: 'grace' }) })
  expect(deleted.status).toBe(200)
  expect(deleted.headers.get('hx-redirect')).toBe('/users?deleted=1')
  expect((await p.call('GET', `/api/v1/User/${id}`)).status).toBe(404)
})

test('a stale edit is refused by If-Match and the page says someone else changed the record', async () => {
  const user = await p.createUser({})
  const opened = await page(`/users/${user.userId}`)
  const version = /name="_version" value="(\d+)"/.exec(opened.text)![1]!
  // Someone else saves first.
  expect((await p.call('PATCH', `/api/v1/User/${user.userId}`, { json: { display_name: 'Theirs' } })).status).toBe(200)
  const mine = await page(`/users/${user.userId}`, { method: 'POST', ...form({ _version: version, username: user.username, display_name: 'Mine', email: `${user.username}@example.com` }) })
  expect(mine.status).toBe(412)
  expect(mine.text).toContain('changed by someone else')
  expect(mine.text).toContain('value="Mine"')
  expect((await p.call('GET', `/api/v1/User/${user.userId}`)).body.display_name).toBe('Theirs')
  const staleDelete = await page(`/users/${user.userId}/delete`, { method: 'POST', ...form({ _version: version }) })
  expect(staleDelete.status).toBe(412)
  expect(staleDelete.text).toContain('changed by someone else')
  expect((await p.call('GET', `/api/v1/User/${user.userId}`)).status).toBe(200)
})

test('a form the API refuses comes back with each field’s message, and nothing is written', async () => {
  const refused = await page('/users', { method: 'POST', ...form({ username: 'x', email: 'not-an-email', password: 'short' }) })
  expect(refused.status).toBe(422)
  expect(refused.text).toContain('aria-invalid="true"')
  expect(refused.text).toMatch(/id="record-email-error">must be an email address</)
  expect(refused.text).toContain('value="not-an-email"')
  expect((await p.call('GET', '/api/v1/User?username=eq.x')).body.data).toEqual([])

  const duplicate = await page('/companies', { method: 'POST', ...form({ name: 'Again', slug: 'default', owner_id: p.root.userId }) })
  expect(duplicate.status).toBe(409)
  expect(duplicate.text).toContain('Another record already has the same slug.')
})

test('a company made on its page gets the owner chosen there; without one the form says so beside the field', async () => {
  const owner = await p.createUser({ companyId: null })
  const missing = await page('/companies', { method: 'POST', ...form({ name: 'Ownerless', slug: 'ownerless' }) })
  expect(missing.status).toBe(422)
  expect(missing.text).toMatch(/id="record-owner_id-error">/)
  expect((await p.call('GET', '/api/v1/Company?slug=eq.ownerless')).body.data).toEqual([])

  const made = await page('/companies', { method: 'POST', ...form({ name: 'Owned', slug: 'owned', owner_id: owner.userId }) })
  expect(made.status).toBe(201)
  const id = /\/companies\/([0-9a-f-]{36})/.exec(made.headers.get('hx-redirect')!)![1]!
  const members = await p.store.db.selectFrom('company_users').select(['user_id', 'role']).where('company_id', '=', id).execute()
  expect(members).toEqual([{ user_id: owner.userId, role: 'owner' }])
  // Its page lists the owner among its people, and the form no longer offers to choose one.
  const opened = await page(`/companies/${id}`)
  expect(opened.text).not.toContain('id="record-owner_id"')
  expect(opened.text).toContain(owner.username)
})

test('companies page pages through records twenty at a time', async () => {
  for (let i = 0; i < 22; i++) await p.call('POST', '/api/v1/Company', { json: { name: `Firm ${String(i).padStart(2, '0')}`, slug: `firm-${i}` } })
  const first = await page('/companies?q=Firm')
  expect(first.text).toContain('1–20 of 22')
  expect(first.text).toContain('href="/companies?q=Firm&amp;offset=20"')
  const second = await page('/companies?q=Firm&offset=20', { headers: htmx })
  expect(second.text).toContain('21–22 of 22')
  expect(second.text).toContain('Firm 21')
  // Page numbers, the current one marked.
  expect(second.text).toContain('<a href="/companies?q=Firm" hx-get="/companies?q=Firm" hx-target="#rows" hx-swap="outerHTML" hx-push-url="true">1</a>')
  expect(second.text).toContain('aria-current="page">2</a>')
})

test('a list is ordered on the server by the column asked for, either way, across pages', async () => {
  const names = (html: string) => [...html.matchAll(/<td><a href="\/companies\/[^"]+">(Firm \d\d)<\/a><\/td>/g)].map((m) => m[1])
  const down = await page('/companies?q=Firm&sort=name&dir=desc', { headers: htmx })
  expect(names(down.text).slice(0, 3)).toEqual(['Firm 21', 'Firm 20', 'Firm 19'])
  expect(down.text).toContain('aria-sort="descending"')
  // The heading offers the other way; the next page keeps the order.
  expect(down.text).toMatch(/<a href="\/companies\?q=Firm" [^>]*>Name ▼<\/a>/)
  expect(down.text).toContain('href="/companies?q=Firm&amp;sort=name&amp;dir=desc&amp;offset=20"')
  const rest = await page('/companies?q=Firm&sort=name&dir=desc&offset=20', { headers: htmx })
  expect(names(rest.text)).toEqual(['Firm 01', 'Firm 00'])
  // By another column: the slug orders as text (firm-10 before firm-2).
  const bySlug = await page('/companies?q=Firm&sort=slug', { headers: htmx })
  expect(names(bySlug.text).slice(0, 3)).toEqual(['Firm 00', 'Firm 01', 'Firm 10'])
  // A column the page does not show, or hostile text, is the default order, not an error.
  for (const sort of ['password', 'name;drop table companies', 'id.desc']) {
    const odd = await page(`/companies?q=Firm&sort=${encodeURIComponent(sort)}&dir=sideways`, { headers: htmx })
    expect(odd.status).toBe(200)
    expect(names(odd.text).slice(0, 2)).toEqual(['Firm 00', 'Firm 01'])
  }
})

test('an empty list says what to do: search for less, or make the first', async () => {
  const none = await page('/companies?q=no-such-firm-anywhere', { headers: htmx })
  expect(none.text).toContain('No companies match “no-such-firm-anywhere”. Try fewer letters, or clear the search.')
})

test('a member sees the refusal the API gives, in the page', async () => {
  const member = await p.createUser({ role: 'member', password: 'member-password-1' })
  const login = await p.admin.request('/auth/login', {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', origin: ORIGIN },
    body: new URLSearchParams({ username: member.username, password: 'member-password-1' }),
  })
  const memberCookie = login.headers.get('set-cookie')!.split(';')[0]!
  const reply = await p.admin.request('/companies', {
    method: 'POST',
    headers: { cookie: memberCookie, origin: ORIGIN, 'content-type': 'application/x-www-form-urlencoded', ...htmx },
    body: new URLSearchParams({ name: 'Mine', slug: 'mine', owner_id: member.userId }),
  })
  expect(reply.status).toBe(403)
  expect(await reply.text()).toContain('Your role may not create Company records')
})

test('a write from a foreign page is refused before it reaches the API', async () => {
  const reply = await page('/companies', { method: 'POST', ...form({ name: 'Evil', slug: 'evil' }), headers: { ...form({}).headers, origin: 'https://evil.example' } })
  expect(reply.status).toBe(403)
  expect((await p.call('GET', '/api/v1/Company?slug=eq.evil')).body.data).toEqual([])
})

test('htmx and the stylesheet come from this server; static files cannot escape their folder', async () => {
  const htmxFile = await page('/static/htmx.min.js')
  expect(htmxFile.status).toBe(200)
  expect(htmxFile.type).toContain('javascript')
  expect(htmxFile.headers.get('cache-control')).toBe('public, max-age=86400')
  expect((await page('/static/css/admin.css')).type).toContain('text/css')
  const attacks = [
    '/static/../package.json',
    '/static/css/../../package.json',
    '/static/%2e%2e/package.json',
    '/static/%2E%2E%2Fpackage.json',
    '/static/css/%2e%2e/%2e%2e/src/main.ts',
    '/static/..%5cpackage.json',
    '/static//etc/passwd',
    '/static/nope.css',
    '/static/css',
    '/static/%E0%A4%A',
    '/static/a%00b',
  ]
  for (const path of attacks) {
    const reply = await page(path)
    expect(reply.status).toBe(404)
    expect(reply.text).not.toContain('"name": "switchboard"')
    expect(reply.text).not.toContain('root:')
  }
  // A missing file is a 404 for anyone, not a detour through sign-in.
  expect((await page('/static/nope.css', {}, false)).status).toBe(404)
})

test('an unknown page is a readable 404 page', async () => {
  const missing = await page('/no/such/page')
  expect(missing.status).toBe(404)
  expect(missing.text).toContain('There is no page at /no/such/page')
})

test('the edit page offers no password: the console never sets someone’s password', async () => {
  const user = await p.createUser({ password: 'first-password-1' })
  const hash = async () => (await p.store.db.selectFrom('users').select('password_hash').where('id', '=', user.userId).executeTakeFirstOrThrow()).password_hash
  const before = await hash()
  const edit = await page(`/users/${user.userId}`)
  expect(edit.text).toContain(`name="display_name"`)
  expect(edit.text).not.toContain('type="password"')
  const fields = { username: user.username, display_name: 'Kept', email: `${user.username}@example.com` }
  expect((await page(`/users/${user.userId}`, { method: 'POST', ...form({ ...fields, password: 'second-password-2' }) })).status).toBe(200)
  expect(await hash()).toBe(before)
})

/** The path a call to the api app asked for: typed calls hand it a Request, calls by a run-time path a string. */
const pathOf = (input: string | URL | Request) => (input instanceof Request ? new URL(input.url).pathname : String(input))

test('a record id that is not a UUID answers 404 and never reaches another model', async () => {
  const requested: string[] = []
  const spy = { request: (...args: Parameters<typeof p.api.request>) => (requested.push(pathOf(args[0])), p.api.request(...args)) }
  const client = createApiClient(spy)
  const console_ = createAdminApp(p.services, client, [], createWebChat(p.services, client))
  const company = await p.call('GET', `/api/v1/Company/${p.root.companyId}`)
  const traversal = `..%2FCompany%2F${p.root.companyId}`
  const calls: Array<[string, string, Record<string, string>]> = [
    ['GET', `/users/${traversal}`, htmx],
    ['GET', `/users/${traversal}`, {}],
    ['POST', `/users/${traversal}`, { ...form({ username: 'x' }).headers }],
    ['POST', `/users/${traversal}/delete`, { ...form({}).headers }],
    ['POST', `/companies/${traversal}/members`, { ...form({}).headers }],
    ['GET', `/users/${encodeURIComponent('../Company')}`, htmx],
  ]
  for (const [method, path, headers] of calls) {
    const reply = await console_.request(path, { method, headers: { cookie, origin: ORIGIN, ...headers }, body: method === 'POST' ? new URLSearchParams({ username: 'x' }) : undefined })
    expect(reply.status, `${method} ${path}`).toBe(404)
    expect(await reply.text()).not.toContain(company.body.slug)
  }
  expect(requested.filter((path) => !path.startsWith('/api/me'))).toEqual([])
})

test('an API answer that is not JSON is shown as a failure, not a 500', async () => {
  const html = {
    request: (...args: Parameters<typeof p.api.request>) =>
      pathOf(args[0]).startsWith('/api/v1/User/') ? new Response('<html>upstream down</html>', { status: 502, headers: { 'content-type': 'text/html' } }) : p.api.request(...args),
  }
  const htmlClient = createApiClient(html)
  const console_ = createAdminApp(p.services, htmlClient, [], createWebChat(p.services, htmlClient))
  const reply = await console_.request(`/users/${p.root.userId}`, { headers: { cookie, origin: ORIGIN } })
  expect(reply.status).toBe(502)
  expect(await reply.text()).toContain('Reading the user failed (502).')
  const client = createApiClient({ request: () => new Response('plain words', { status: 200, headers: { 'content-type': 'text/plain' } }) })
  const app = new Hono().get('/', async (c) => c.json(await client.call(c, 'GET', '/anything')))
  expect(await (await app.request('/')).json()).toMatchObject({ status: 200, body: 'plain words' })
})

test('signed-in pages are not kept by the browser (Back after sign-out shows nothing private); static files are', async () => {
  for (const path of ['/', '/agents', '/chat', '/me', '/usage']) {
    const page = await p.admin.request(path, { headers: { cookie } })
    expect(page.status, path).toBe(200)
    expect(page.headers.get('cache-control'), path).toBe('no-store')
  }
  expect((await p.admin.request('/static/htmx.min.js')).headers.get('cache-control')).toBe('public, max-age=86400')
})
