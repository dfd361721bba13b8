import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import type { Hono } from 'hono'
import { createApiClient } from '../../src/admin/api-client.ts'
import { createAdminApp } from '../../src/admin/app.tsx'
import { createWebChat } from '../../src/admin/chat/index.ts'
import { startTestPlatform, type Principal, type TestPlatform } from '../helpers/platform.ts'

// /me/artifacts as a person uses it in the console: the list, each action by form and by htmx, the share link.

const ORIGIN = 'http://127.0.0.1:8080'
const PASSWORD = 'artifacts-page-password'

let p: TestPlatform
let console_: Hono<any>

interface Person extends Principal {
  cookie: string
}

beforeAll(async () => {
  p = await startTestPlatform()
  const client = createApiClient(p.api)
  console_ = createAdminApp(p.services, client, [], createWebChat(p.services, client))
})
afterAll(() => p.close())

async function signedIn(companyId?: string): Promise<Person> {
  const user = await p.createUser({ companyId: companyId ?? (await p.createCompany()), role: 'member', password: PASSWORD })
  const login = await p.admin.request('/auth/login', {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', origin: ORIGIN },
    body: new URLSearchParams({ username: user.username, password: PASSWORD }),
  })
  const cookie = login.headers.get('set-cookie')?.split(';')[0]
  if (login.status !== 303 || !cookie) throw new Error(`sign-in failed (${login.status})`)
  return { ...user, cookie }
}

const htmx = { 'hx-request': 'true', 'hx-request-type': 'partial' }

async function page(who: Person | null, path: string, init: { method?: string; headers?: Record<string, string> } = {}) {
  const response = await console_.request(path, { method: init.method ?? 'GET', headers: { ...(who ? { cookie: who.cookie } : {}), origin: ORIGIN, ...init.headers } })
  return { status: response.status, headers: response.headers, text: await response.text() }
}

const post = (who: Person, path: string, fragment = false) => page(who, path, { method: 'POST', headers: fragment ? htmx : {} })

async function artifactOf(who: Person, title = 'Figures') {
  const reply = await p.call('POST', '/api/artifacts', { as: who, json: { title, kind: 'csv', content: 'a,b\n1,2' } })
  if (reply.status !== 201) throw new Error(JSON.stringify(reply.body))
  return reply.body as { id: string }
}

const stored = async (id: string) => (await p.store.db.selectFrom('artifacts').select(['pinned', 'revoked_at', 'expires_at']).where('id', '=', id).executeTakeFirst()) ?? null

describe('/me/artifacts', () => {
  test('without a session: to the sign-in page and back', async () => {
    const reply = await page(null, '/me/artifacts')
    expect(reply.status).toBe(303)
    expect(reply.headers.get('location')).toBe('/login?post_login_redirect=%2Fme%2Fartifacts')
  })

  test('the account page links to it; an empty list says so', async () => {
    const me = await signedIn()
    expect((await page(me, '/me')).text).toMatch(/<section id="artifacts"[^]*?<a href="\/me\/artifacts">manage them<\/a>/)
    const reply = await page(me, '/me/artifacts')
    expect(reply.status).toBe(200)
    expect(reply.text).toContain('<title>My artifacts · Switchboard</title>')
    expect(reply.text).toContain('You have no artifacts; what your agents make for you will be listed here.')
  })

  test('lists one’s own artifacts only, with their state and actions', async () => {
    const me = await signedIn()
    const colleague = await signedIn(me.companyId!)
    const mine = await artifactOf(me, 'My <table>')
    await artifactOf(colleague, 'Their table')
    const reply = await page(me, '/me/artifacts')
    expect(reply.text).toContain(`<tr id="artifact-${mine.id}"><td>My &lt;table&gt;</td><td>CSV table</td><td>7 bytes</td>`)
    expect(reply.text).not.toContain('Their table')
    for (const action of ['share', 'pin', 'revoke', 'delete']) expect(reply.text).toContain(`action="/me/artifacts/${mine.id}/${action}"`)
    expect(reply.text).toMatch(/<span class="badge">Until \d{4}-\d\d-\d\d \d\d:\d\d UTC<\/span>/)
  })

  test('pin, unpin, revoke and unrevoke change it through the API; htmx gets the section alone', async () => {
    const me = await signedIn()
    const { id } = await artifactOf(me)
    const pinned = await post(me, `/me/artifacts/${id}/pin`, true)
    expect(pinned.status).toBe(200)
    expect(pinned.text).toStartWith('<section id="artifacts"')
    expect(pinned.text).toContain('Pinned: it no longer expires.')
    expect(pinned.text).toContain('<span class="badge badge-ok">Pinned</span>')
    expect(await stored(id)).toMatchObject({ pinned: true, expires_at: null })

    const unpinned = await post(me, `/me/artifacts/${id}/unpin`)
    expect(unpinned.text).toStartWith('<!DOCTYPE html>')
    expect(unpinned.text).toContain('Unpinned: its time starts again from now.')
    expect((await stored(id))?.pinned).toBe(false)

    expect((await post(me, `/me/artifacts/${id}/revoke`, true)).text).toContain('<span class="badge badge-warning">Revoked</span>')
    expect((await stored(id))?.revoked_at).not.toBeNull()
    // A revoked artifact offers no share link, and the API refuses one.
    const revoked = await page(me, '/me/artifacts')
    expect(revoked.text).not.toContain(`/me/artifacts/${id}/share`)
    const refused = await post(me, `/me/artifacts/${id}/share`, true)
    expect(refused.status).toBe(409)
    expect(refused.text).toContain('role="alert">This artifact is revoked')
    expect((await post(me, `/me/artifacts/${id}/unrevoke`, true)).text).toContain('Unrevoked: its links work again until they expire.')
    expect((await stored(id))?.revoked_at).toBeNull()
  })

  test('a share link is shown once, and opens the artifact', async () => {
    const me = await signedIn()
    const { id } = await artifactOf(me, 'Shared table')
    const reply = await post(me, `/me/artifacts/${id}/share`, true)
    expect(reply.status).toBe(200)
    const url = /<a href="([^"]+)" class="portal-token">/.exec(reply.text)?.[1]?.replaceAll('&amp;', '&')
    expect(url).toStartWith(`${p.services.config.adminBaseUrl}/share/artifacts/${id}?token=`)
    expect(reply.text).toContain('A link to Shared table, working until ')
    const opened = await console_.request(url!.slice(p.services.config.adminBaseUrl.length))
    expect(opened.status).toBe(200)
    expect(await opened.text()).toContain('<h1>Shared table</h1>')
  })

  test('delete removes it; another person’s artifact or a malformed id is not found, and stays', async () => {
    const me = await signedIn()
    const other = await signedIn(me.companyId!)
    const theirs = await artifactOf(other)
    for (const action of ['pin', 'revoke', 'delete', 'share']) {
      const reply = await post(me, `/me/artifacts/${theirs.id}/${action}`, true)
      expect(reply.status).toBe(404)
      expect(reply.text).toContain('role="alert">No Artifact with id')
    }
    expect(await stored(theirs.id)).toMatchObject({ pinned: false, revoked_at: null })
    expect((await post(me, '/me/artifacts/not-an-id/pin', true)).status).toBe(404)
    expect((await post(me, `/me/artifacts/${theirs.id}/explode`, true)).status).toBe(404)

    const mine = await artifactOf(me)
    const deleted = await post(me, `/me/artifacts/${mine.id}/delete`, true)
    expect(deleted.text).toContain('Deleted, with every link to it.')
    expect(await stored(mine.id)).toBeNull()
  })

  test('a form posted from another site is refused', async () => {
    const me = await signedIn()
    const { id } = await artifactOf(me)
    const forged = await console_.request(`/me/artifacts/${id}/delete`, { method: 'POST', headers: { cookie: me.cookie, origin: 'https://evil.example' } })
    expect(forged.status).toBe(403)
    expect(await stored(id)).not.toBeNull()
  })
})
