import { consoleCookie } from '../helpers/console.ts'
import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { Hono } from 'hono'
import { createApiClient } from '../../src/admin/api-client.ts'
import { createAdminApp } from '../../src/admin/app.tsx'
import { createWebChat } from '../../src/admin/chat/index.ts'
import { mountAvatarFiles } from '../../src/admin/portal/avatar-files.ts'
import { mountPortal } from '../../src/admin/portal/routes.tsx'
import { AVATAR_PATH, mountAvatars } from '../../src/api/avatars/index.ts'
import { apiThrottle } from '../../src/throttle/api.ts'
import { startTestPlatform, type Principal, type TestPlatform } from '../helpers/platform.ts'

const ORIGIN = 'http://127.0.0.1:8080'
const PASSWORD = 'portal-password-1'
const STALE = 'This profile was changed by someone else (or in another tab); reload to see the current values.'
/** A 1×1 GIF. */
const GIF = new Uint8Array([...new TextEncoder().encode('GIF89a'), 1, 0, 1, 0, 0x80, 0, 0, 0, 0, 0, 255, 255, 255, 0x2c, 0, 0, 0, 0, 1, 0, 1, 0, 0, 2, 2, 0x44, 1, 0, 0x3b])

let p: TestPlatform
let console_: Hono<any>

beforeAll(async () => {
  p = await startTestPlatform()
  // Until app.ts and app.tsx mount them, the suite mounts the avatar routes and the page itself (before any request:
  // Hono's router takes no routes once it has matched one).
  if (!p.api.routes.some((r) => r.method === 'PUT' && r.path === AVATAR_PATH)) mountAvatars(p.api, apiThrottle(p.services))
  const client = createApiClient(p.api)
  console_ = createAdminApp(p.services, client, [], createWebChat(p.services, client))
  if (!console_.routes.some((r) => r.method === 'GET' && r.path === '/me')) mountPortal(console_, client)
})
afterAll(() => p.close())

interface Person extends Principal {
  cookie: string
}

/** A member of their own company, signed in through the console's sign-in form. */
async function signedInMember(): Promise<Person> {
  const user = await p.createUser({ companyId: await p.createCompany(), role: 'member', password: PASSWORD })
  return { ...user, cookie: await signIn(user.username, PASSWORD) }
}

const signIn = (username: string, password: string) => consoleCookie(p, username, password)

const htmx = { 'hx-request': 'true', 'hx-request-type': 'partial' }

async function page(who: Person | null, path: string, init: { method?: string; body?: BodyInit; headers?: Record<string, string> } = {}) {
  const headers = { ...(who ? { cookie: who.cookie } : {}), origin: ORIGIN, ...init.headers }
  const response = await console_.request(path, { method: init.method ?? 'GET', body: init.body, headers })
  return { status: response.status, headers: response.headers, text: await response.text() }
}

/** A form post as htmx sends it (or as a plain browser does, with `fragment` false). */
const post = (who: Person, path: string, fields: Record<string, string>, fragment = true) =>
  page(who, path, { method: 'POST', body: new URLSearchParams(fields), headers: { 'content-type': 'application/x-www-form-urlencoded', ...(fragment ? htmx : {}) } })

const etagIn = (html: string) => /name="etag" value="([^"]*)"/.exec(html)?.[1]?.replaceAll('&quot;', '"')
const user = async (who: Principal) => (await p.call('GET', `/api/v1/User/${who.userId}`, { as: who })).body
/** The field's error message, found by the input's own id: shown next to that field and nowhere else. */
const fieldError = (html: string, id: string) => new RegExp(`id="${id}-error">([^<]*)<`).exec(html)?.[1]

describe('the page', () => {
  test('without a session, to the sign-in page and back', async () => {
    const anonymous = await page(null, '/me')
    expect(anonymous.status).toBe(303)
    expect(anonymous.headers.get('location')).toBe('/login?post_login_redirect=%2Fme')
  })

  test('the whole page: profile, picture, password, tokens, artifacts and connections linked', async () => {
    const me = await signedInMember()
    const reply = await page(me, '/me')
    expect(reply.status).toBe(200)
    expect(reply.text).toStartWith('<!DOCTYPE html>')
    expect(reply.text).toContain('<title>Your account · Switchboard</title>')
    expect(reply.text).toContain('href="/static/css/portal.css"')
    for (const id of ['profile', 'avatar', 'password', 'tokens', 'artifacts', 'connections']) expect(reply.text).toContain(`<section id="${id}"`)
    expect(reply.text).toMatch(/<section id="artifacts"[^]*?<a href="\/me\/artifacts">manage them<\/a>/)
    expect(reply.text).toMatch(/<section id="connections"[^]*?<a href="\/me\/connections">manage them<\/a>/)
    expect(reply.text).toContain(`Your address is <strong>${me.username}@example.com</strong>`)
    expect(etagIn(reply.text)).toBe((await p.call('GET', `/api/v1/User/${me.userId}`, { as: me })).headers.get('etag')!)
    expect(reply.text).toContain('accept="image/png,image/jpeg,image/gif,image/webp"')
    expect(reply.text).toContain('You have no picture yet.')
    expect(reply.text).not.toContain('alt="Your avatar"')
    // Every input has its label.
    for (const [, id] of reply.text.matchAll(/<input id="([^"]+)"/g)) expect(reply.text, id).toContain(`<label for="${id}">`)
    expect(reply.text).toContain('<legend>Change your password</legend>')
  })

  test('an htmx request gets the page’s content without the layout', async () => {
    const me = await signedInMember()
    const reply = await page(me, '/me', { headers: htmx })
    expect(reply.status).toBe(200)
    expect(reply.text).toStartWith('<div class="portal">')
    expect(reply.text).not.toContain('<html')
  })
})

describe('email address', () => {
  test('the profile form has no address to overwrite; the address has its own section, which asks for a link', async () => {
    const me = await signedInMember()
    const html = (await page(me, '/me')).text
    expect(html).not.toContain('id="profile-email"')
    expect(html).toMatch(/<section id="email"[^]*Your address is <strong>[^<]+@example.com<\/strong>/)
    // This platform sends no mail: the person reads why, and nothing changes.
    const asked = await post(me, '/me/email', { email: 'elsewhere@example.org' })
    expect(asked.status).toBe(400)
    expect(asked.text).toStartWith('<section id="email"')
    expect(asked.text).toContain('cannot send email')
    expect((await user(me)).email).toBe(`${me.username}@example.com`)
  })

  test('the confirmation link opens a page with a button, not a change; a wrong token is refused in words', async () => {
    const me = await signedInMember()
    const opened = await page(me, '/confirm-email?token=eml_not-a-real-one')
    expect(opened.status).toBe(200)
    expect(opened.text).toContain('<input type="hidden" name="token" value="eml_not-a-real-one"/>')
    expect(opened.text).toContain('Confirm the address')
    const refused = await post(me, '/confirm-email', { token: 'eml_not-a-real-one' }, false)
    expect(refused.status).toBe(422)
    expect(refused.text).toContain('This link is unknown, used, expired')
  })
})

describe('profile', () => {
  test('saved with the version it was read at; the section comes back with the next one', async () => {
    const me = await signedInMember()
    const etag = etagIn((await page(me, '/me')).text)!
    const saved = await post(me, '/me/profile', { display_name: 'Ada Lovelace', etag })
    expect(saved.status).toBe(200)
    expect(saved.text).toStartWith('<section id="profile"')
    expect(saved.text).toContain('Your profile is saved.')
    expect(saved.text).toContain('role="status"')
    expect(etagIn(saved.text)).not.toBe(etag)
    expect(await user(me)).toMatchObject({ display_name: 'Ada Lovelace', email: `${me.username}@example.com` })
  })

  test('a field the API refuses is marked by that field, what was typed stays, nothing is written', async () => {
    const me = await signedInMember()
    const etag = etagIn((await page(me, '/me')).text)!
    const typed = `Typed ${'x'.repeat(200)}`
    const refused = await post(me, '/me/profile', { display_name: typed, etag })
    expect(refused.status).toBe(422)
    expect(refused.text).toMatch(/<input id="profile-display-name"[^>]*aria-invalid="true"[^>]*aria-describedby="profile-display-name-error"/)
    expect(fieldError(refused.text, 'profile-display-name')).toMatch(/200/)
    expect(refused.text).toContain(`value="${typed}"`)
    expect(refused.text).toContain('role="alert"')
    expect((await user(me)).display_name).not.toBe(typed)
  })

  test('a change made elsewhere since the page was read: 412, said plainly, and the other change stands', async () => {
    const me = await signedInMember()
    const etag = etagIn((await page(me, '/me')).text)!
    // Another tab saves first.
    expect((await p.call('PATCH', `/api/v1/User/${me.userId}`, { as: me, json: { display_name: 'From the other tab' } })).status).toBe(200)
    const stale = await post(me, '/me/profile', { display_name: 'From this tab', email: `${me.username}@example.com`, etag })
    expect(stale.status).toBe(412)
    expect(stale.text).toContain(STALE)
    expect(stale.text).toMatch(/role="alert"[^>]*>[^<]*This profile was changed/)
    expect(stale.text).toContain('value="From this tab"')
    expect((await user(me)).display_name).toBe('From the other tab')
    // Saving again from the same stale form is still refused; after a reload it goes through.
    expect((await post(me, '/me/profile', { display_name: 'From this tab', email: `${me.username}@example.com`, etag: etagIn(stale.text)! })).status).toBe(412)
    const fresh = etagIn((await page(me, '/me')).text)!
    expect((await post(me, '/me/profile', { display_name: 'From this tab', email: `${me.username}@example.com`, etag: fresh })).status).toBe(200)
  })

  test('without scripts the form posts as usual and gets the whole page back', async () => {
    const me = await signedInMember()
    const etag = etagIn((await page(me, '/me')).text)!
    const saved = await post(me, '/me/profile', { display_name: 'Plain', email: `${me.username}@example.com`, etag }, false)
    expect(saved.status).toBe(200)
    expect(saved.text).toStartWith('<!DOCTYPE html>')
    expect(saved.text).toContain('Your profile is saved.')
    expect(saved.text).toContain('<section id="tokens"')
  })

  test('a form posted from another site is refused before it reaches the API', async () => {
    const me = await signedInMember()
    const etag = etagIn((await page(me, '/me')).text)!
    const forged = await page(me, '/me/profile', {
      method: 'POST',
      body: new URLSearchParams({ display_name: 'Forged', email: 'evil@example.com', etag }),
      headers: { 'content-type': 'application/x-www-form-urlencoded', origin: 'https://evil.example' },
    })
    expect(forged.status).toBe(403)
    expect((await user(me)).email).toBe(`${me.username}@example.com`)
  })
})

describe('picture', () => {
  const upload = (me: Person, bytes: Uint8Array<ArrayBuffer> | string, name: string) => {
    const form = new FormData()
    form.set('file', new File([bytes], name))
    return page(me, '/me/avatar', { method: 'POST', body: form, headers: htmx })
  }

  test('uploaded through the API, shown, and removed', async () => {
    const me = await signedInMember()
    const saved = await upload(me, GIF, 'me.gif')
    expect(saved.status).toBe(200)
    expect(saved.text).toStartWith('<section id="avatar"')
    expect(saved.text).toContain('Your picture is saved.')
    const avatar = (await user(me)).avatar as string
    expect(avatar).toMatch(/^\/static\/avatars\/[0-9a-f-]{36}\.gif$/)
    expect(saved.text).toContain(`src="${avatar}" alt="Your avatar"`)
    expect((await page(me, '/me')).text).toContain('alt="Your avatar"')

    const removed = await post(me, '/me/avatar/remove', {})
    expect(removed.status).toBe(200)
    expect(removed.text).toContain('Your picture is removed.')
    expect(removed.text).not.toContain('alt="Your avatar"')
    expect((await user(me)).avatar).toBeNull()
  })

  test('a file that is not a picture is refused with the API’s reason, and the picture stays', async () => {
    const me = await signedInMember()
    expect((await upload(me, GIF, 'me.gif')).status).toBe(200)
    const before = (await user(me)).avatar
    const refused = await upload(me, '<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>', 'me.png')
    expect(refused.status).toBe(415)
    expect(refused.text).toMatch(/role="alert"[^>]*>An avatar must be a PNG, JPEG, GIF or WebP picture/)
    expect(refused.text).toContain(`src="${before}"`)
    expect((await user(me)).avatar).toBe(before)
  })

  test('no file chosen, or one far too large: a message, and nothing sent on', async () => {
    const me = await signedInMember()
    const empty = await page(me, '/me/avatar', { method: 'POST', body: new FormData(), headers: htmx })
    expect(empty.status).toBe(422)
    expect(empty.text).toContain('Choose a picture to upload.')
    const huge = new Uint8Array(2 * 1024 * 1024)
    huge.set(GIF)
    const tooLarge = await upload(me, huge, 'huge.gif')
    expect(tooLarge.status).toBe(413)
    expect(tooLarge.text).toContain('larger than 256 KiB')
    expect((await user(me)).avatar).toBeNull()
  })
})

describe('pictures on the console’s port', () => {
  /** The console serving avatars: the real one once app.tsx mounts them, else the same routes on an app of their own. */
  function avatarServer(): Pick<Hono, 'request'> {
    if (console_.routes.some((r) => r.path === '/static/avatars/:file')) return console_
    const app = new Hono()
    mountAvatarFiles(app, createApiClient(p.api))
    return app
  }

  test('a picture is served from the API as it came, with the API’s safety and cache headers, to anyone', async () => {
    const me = await signedInMember()
    const form = new FormData()
    form.set('file', new File([GIF], 'me.gif'))
    const avatar: string = (await p.call('PUT', AVATAR_PATH, { as: me, body: form })).body.avatar
    const served = await avatarServer().request(avatar)
    expect(served.status).toBe(200)
    expect(new Uint8Array(await served.arrayBuffer())).toEqual(GIF)
    expect(served.headers.get('content-type')).toBe('image/gif')
    expect(served.headers.get('x-content-type-options')).toBe('nosniff')
    expect(served.headers.get('content-security-policy')).toBe("default-src 'none'; sandbox")
    expect(served.headers.get('cache-control')).toBe('public, max-age=31536000, immutable')
  })

  test('unknown and malformed names are a plain 404 that never reaches another API path', async () => {
    const requested: string[] = []
    const spy = { request: (...args: Parameters<typeof p.api.request>) => (requested.push(String(args[0])), p.api.request(...args)) }
    const app = new Hono()
    mountAvatarFiles(app, createApiClient(spy))
    for (const name of [`${crypto.randomUUID()}.png`, '..%2F..%2Fapi%2Fme', `${crypto.randomUUID()}.svg`, 'x.png', '%2e%2e', 'a%00b.png']) {
      const reply = await app.request(`/static/avatars/${name}`)
      expect(reply.status, name).toBe(404)
    }
    // A miss is not cached: the name may be a picture being uploaded just now.
    expect((await app.request(`/static/avatars/${crypto.randomUUID()}.gif`)).headers.get('cache-control')).toBe('no-store')
    expect(requested.length).toBe(2)
    expect(requested.every((path) => /^\/static\/avatars\/[0-9a-f-]{36}\.(png|gif)$/.test(path))).toBe(true)
  })
})

describe('password', () => {
  const change = (me: Person, fields: Record<string, string>) => post(me, '/me/password', fields)

  test('the two new passwords must agree: marked on the repeat field, and the API is not asked', async () => {
    const me = await signedInMember()
    const refused = await change(me, { current_password: PASSWORD, password: 'a-new-password-1', password_repeat: 'a-new-password-2' })
    expect(refused.status).toBe(422)
    expect(refused.text).toStartWith('<section id="password"')
    expect(fieldError(refused.text, 'password-repeat')).toBe('does not match the new password')
    expect(refused.text).toMatch(/<input id="password-repeat"[^>]*aria-invalid="true"/)
    // Passwords are never written back into the page.
    expect(refused.text).not.toContain('a-new-password-1')
    expect(await signIn(me.username, PASSWORD)).toStartWith('switchboard_session_token=')
  })

  test('a wrong current password is marked on that field', async () => {
    const me = await signedInMember()
    const refused = await change(me, { current_password: 'not-my-password', password: 'a-new-password-1', password_repeat: 'a-new-password-1' })
    expect(refused.status).toBe(422)
    expect(fieldError(refused.text, 'password-current')).toBe('wrong password')
  })

  test('changed with the current one; the new one signs in; the API tokens end when the box stays ticked, and the page says so', async () => {
    const me = await signedInMember()
    expect((await p.call('GET', '/api/me', { as: me })).status).toBe(200)
    const form = await p.admin.request('/me', { headers: { cookie: me.cookie } })
    expect(await form.text()).toMatch(/<input type="checkbox" id="password-end-tokens" name="end_api_tokens" value="yes" checked/)
    const changed = await change(me, { current_password: PASSWORD, password: 'a-new-password-1', password_repeat: 'a-new-password-1', end_api_tokens: 'yes' })
    expect(changed.status).toBe(200)
    expect(changed.text).toContain('Your password is changed. Signed out: your other sessions, your personal API tokens and your connected MCP hosts.')
    expect(await signIn(me.username, 'a-new-password-1')).toStartWith('switchboard_session_token=')
    expect((await p.call('GET', '/api/me', { as: me })).status).toBe(401)
  })

  test('unticked, the API tokens stay', async () => {
    const me = await signedInMember()
    const changed = await change(me, { current_password: PASSWORD, password: 'a-new-password-1', password_repeat: 'a-new-password-1' })
    expect(changed.text).toContain('Signed out: your other sessions and your connected MCP hosts.')
    expect((await p.call('GET', '/api/me', { as: me })).status).toBe(200)
  })
})

describe('personal API tokens', () => {
  const tokenIn = (html: string) => /id="created-token"[^>]*value="(sb_[^"]+)"/.exec(html)?.[1]

  test('a new token is shown once, with the warning to copy it, and works; revoked, it stops working', async () => {
    const me = await signedInMember()
    const created = await post(me, '/me/tokens', { name: 'nightly export', expires_at: '' })
    expect(created.status).toBe(200)
    expect(created.text).toStartWith('<section id="tokens"')
    expect(created.text).toMatch(/role="status"[^]*Copy it now: it is shown only this once/)
    const token = tokenIn(created.text)!
    expect(token).toBeDefined()
    expect((await p.call('GET', '/api/me', { as: null, headers: { authorization: `Bearer ${token}` } })).status).toBe(200)

    // The list shows it by name and prefix, never the token again.
    const later = await page(me, '/me')
    expect(later.text).not.toContain(token)
    expect(later.text).toContain('nightly export')
    expect(later.text).toContain(`<code>${token.slice(0, 10)}…</code>`)
    const id = new RegExp(`<tr id="token-([0-9a-f-]{36})"><td>nightly export<`).exec(later.text)![1]!

    const revoked = await post(me, `/me/tokens/${id}/revoke`, {})
    expect(revoked.status).toBe(200)
    expect(revoked.text).toContain('The token is revoked.')
    expect(revoked.text).not.toContain('nightly export</td>')
    expect((await p.call('GET', '/api/me', { as: null, headers: { authorization: `Bearer ${token}` } })).status).toBe(401)
  })

  test('an expiry date becomes the end of that day; a past day or a missing name is marked by its field', async () => {
    const me = await signedInMember()
    const created = await post(me, '/me/tokens', { name: 'until new year', expires_at: '2999-12-31' })
    expect(created.status).toBe(200)
    const stored = (await p.call('GET', '/api/v1/ApiToken?name=eq.until%20new%20year', { as: me })).body.data[0]!
    expect(stored.expires_at).toBe('2999-12-31T23:59:59.000Z')

    const past = await post(me, '/me/tokens', { name: 'too late', expires_at: '2001-01-01' })
    expect(past.status).toBe(422)
    expect(fieldError(past.text, 'token-expires')).toBe('choose a day that has not passed')
    expect(past.text).toContain('value="too late"')
    const unnamed = await post(me, '/me/tokens', { name: '', expires_at: '' })
    expect(unnamed.status).toBe(422)
    expect(fieldError(unnamed.text, 'token-name')).toBeString()
    const names = (await p.call('GET', '/api/v1/ApiToken', { as: me })).body.data.map((t: { name: string }) => t.name)
    // The suite's own token ('tests') and the one made above: none from the refused forms.
    expect(names.sort()).toEqual(['tests', 'until new year'])
  })

  test('another person’s token cannot be revoked from here, nor anything that is not a token id', async () => {
    const me = await signedInMember()
    const other = await signedInMember()
    const theirs = tokenIn((await post(other, '/me/tokens', { name: 'theirs', expires_at: '' })).text)!
    const theirId = (await p.call('GET', '/api/v1/ApiToken?name=eq.theirs', { as: other })).body.data[0]!.id
    const refused = await post(me, `/me/tokens/${theirId}/revoke`, {})
    expect(refused.status).toBe(404)
    expect(refused.text).toContain('role="alert"')
    expect((await p.call('GET', '/api/me', { as: null, headers: { authorization: `Bearer ${theirs}` } })).status).toBe(200)
    expect((await post(me, `/me/tokens/${encodeURIComponent(`../User/${other.userId}`)}/revoke`, {})).status).toBe(404)
  })
})
