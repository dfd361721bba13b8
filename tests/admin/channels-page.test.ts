import { describe, expect, test } from 'bun:test'
import { hashSecret } from '../../src/auth/secrets.ts'
import { redeemLinkCode } from '../../src/channels/link-codes.ts'
import { systemClock } from '../../src/clock.ts'
import { usePlatform, type Principal } from '../helpers/platform.ts'

// /me/channels: a person's own chat platform accounts (unlink) and link codes, through the public API as them.
const ORIGIN = 'http://127.0.0.1:8080'
const PASSWORD = 'channels-password-1'
const htmx = { 'hx-request': 'true', 'hx-request-type': 'partial' }
const CODE = /<strong>([0-9A-Z]{5}-[0-9A-Z]{5})<\/strong>/

const platformOf = usePlatform()

interface Person extends Principal {
  cookie: string
}

async function signIn(username: string): Promise<string> {
  const login = await platformOf().admin.request('/auth/login', {
    method: 'POST',
    headers: { 'content-type': 'application/x-www-form-urlencoded', origin: ORIGIN },
    body: new URLSearchParams({ username, password: PASSWORD }),
  })
  const cookie = login.headers.get('set-cookie')?.split(';')[0]
  if (login.status !== 303 || !cookie) throw new Error(`sign-in as ${username} failed (${login.status})`)
  return cookie
}

/** A member of `companyId` (a company of their own by default; null: of none), signed in through the console. */
async function person(companyId?: string | null): Promise<Person> {
  const user = await platformOf().createUser({ companyId: companyId === undefined ? await platformOf().createCompany() : companyId, role: 'member', password: PASSWORD })
  return { ...user, cookie: await signIn(user.username) }
}

async function page(who: Person | null, path: string, { post = false, fragment = false } = {}) {
  const headers: Record<string, string> = { origin: ORIGIN, ...(who ? { cookie: who.cookie } : {}), ...(fragment ? htmx : {}) }
  if (post) headers['content-type'] = 'application/x-www-form-urlencoded'
  const response = await platformOf().admin.request(path, { method: post ? 'POST' : 'GET', headers, body: post ? '' : undefined })
  return { status: response.status, headers: response.headers, text: await response.text() }
}

/** Links an account to `who` by hand, as only the operator may (people link with a code from the platform). */
async function link(who: Person, platform: string, platformUserId: string, username = ''): Promise<string> {
  const reply = await platformOf().call('POST', '/api/v1/UserPlatform', {
    json: { user_id: who.userId, platform, platform_user_id: platformUserId, platform_username: username },
    headers: { 'x-switchboard-company': who.companyId! },
  })
  expect(reply.status).toBe(201)
  return reply.body.id as string
}

const linkIds = async (who: Person) => ((await platformOf().call('GET', '/api/me/platforms', { as: who })).body.data as Array<{ id: string }>).map((l) => l.id)

describe('the page', () => {
  test('signed out, to the sign-in page and back; an htmx form is told where to go', async () => {
    const anonymous = await page(null, '/me/channels')
    expect(anonymous.status).toBe(303)
    expect(anonymous.headers.get('location')).toBe('/login?post_login_redirect=%2Fme%2Fchannels')
    const code = await page(null, '/me/channels/code', { post: true, fragment: true })
    expect(code.status).toBe(401)
    expect(code.headers.get('hx-redirect')).toBe('/login?post_login_redirect=%2Fme%2Fchannels%2Fcode')
  })

  test('lists the person’s own links, and not a colleague’s', async () => {
    const me = await person()
    const colleague = await person(me.companyId)
    const mine = await link(me, 'telegram', '777001', 'ada_tg')
    const theirs = await link(colleague, 'slack', 'U0COLLEAGUE', 'grace')
    const reply = await page(me, '/me/channels')
    expect(reply.status).toBe(200)
    expect(reply.text).toStartWith('<!DOCTYPE html>')
    expect(reply.text).toContain('<title>My chat accounts · Switchboard</title>')
    const row = new RegExp(`<tr id="link-${mine}">([^]*?)</tr>`).exec(reply.text)?.[1]
    expect(row).toMatch(/<td>Telegram<\/td>\s*<td>ada_tg<small> \(777001\)<\/small><\/td>\s*<td><time datetime=\"[^\"]+\">\d{4}-\d\d-\d\d \d\d:\d\d UTC<\/time><\/td>/)
    expect(row).toContain(`action="/me/channels/${mine}/unlink"`)
    expect(reply.text).not.toContain(theirs)
    expect(reply.text).not.toContain('U0COLLEAGUE')
    expect(reply.text).toContain('Get a link code')
  })

  test('with no links yet, says so', async () => {
    const reply = await page(await person(), '/me/channels')
    expect(reply.status).toBe(200)
    expect(reply.text).toContain('You have linked no account yet.')
  })

  test('a platform username is the sender’s to choose, and is shown as text, never markup', async () => {
    const me = await person()
    const id = await link(me, 'telegram', '777002', '<script>alert(1)</script>')
    const reply = await page(me, '/me/channels')
    expect(reply.text).not.toContain('<script>alert(1)')
    expect(reply.text).toContain('&lt;script&gt;alert(1)&lt;/script&gt;')
    // In the confirmation and the button's label too, where it sits in an attribute.
    expect(reply.text).toContain('hx-confirm="Unlink your Telegram account &lt;script&gt;alert(1)&lt;/script&gt;?"')
    expect(reply.text).toContain(`id="link-${id}"`)
  })

  test('a person of no company is told why there is nothing to link', async () => {
    const loner = await person(null)
    const reply = await page(loner, '/me/channels')
    expect(reply.status).toBe(403)
    expect(reply.text).toContain('<p class="problem" role="alert">Chat platform accounts are linked within a company, and you are not a member of any.</p>')
    const code = await page(loner, '/me/channels/code', { post: true, fragment: true })
    expect(code.status).toBe(403)
    expect(code.text).toContain('Chat platform accounts are linked within a company, and you are not a member of any.')
    expect(code.text).not.toMatch(CODE)
  })

  test('the account page links here, beside the connections', async () => {
    const reply = await page(await person(), '/me')
    expect(reply.text).toMatch(/<section id="connections"[^]*?<\/section>\s*<section id="chat-accounts"[^]*?<a href="\/me\/channels">link or unlink them<\/a>/)
  })
})

describe('a link code', () => {
  test('is shown large with its expiry and how to use it, and is a code the agents accept', async () => {
    const me = await person()
    const before = Date.now()
    const reply = await page(me, '/me/channels/code', { post: true, fragment: true })
    expect(reply.status).toBe(200)
    expect(reply.text).toStartWith('<section id="link-code"')
    const code = CODE.exec(reply.text)![1]!
    expect(reply.text).toContain(`<p class="portal-token link-code"><strong>${code}</strong></p>`)
    expect(reply.text).toContain(`Send <code>/link ${code}</code> to the agent on Telegram, Slack, WhatsApp or email; on Telegram, <code>/start ${code}</code> works too.`)
    const expiry = /It works once, until <time datetime="([^"]+)">\d{4}-\d\d-\d\d \d\d:\d\d UTC<\/time>\./.exec(reply.text)![1]!
    const expiresAt = Date.parse(expiry)
    expect(expiresAt).toBeGreaterThan(before + 14 * 60_000)
    expect(expiresAt).toBeLessThan(Date.now() + 16 * 60_000)

    const { db } = platformOf().store
    const row = await db.selectFrom('channel_link_codes').select(['user_id', 'company_id']).where('code_hash', '=', hashSecret(code)).executeTakeFirst()
    expect(row).toEqual({ user_id: me.userId, company_id: me.companyId! })
    expect(await redeemLinkCode(db, systemClock, me.companyId!, code.toLowerCase())).toBe(me.userId)
  })

  test('asked again, replaces the one before; without htmx the whole page shows it', async () => {
    const me = await person()
    const first = CODE.exec((await page(me, '/me/channels/code', { post: true, fragment: true })).text)![1]!
    const again = await page(me, '/me/channels/code', { post: true })
    expect(again.status).toBe(200)
    expect(again.text).toStartWith('<!DOCTYPE html>')
    expect(again.text).toContain('<section id="links"')
    expect(again.text).toContain('Get a new code')
    const second = CODE.exec(again.text)![1]!
    expect(second).not.toBe(first)
    const { db } = platformOf().store
    expect(await redeemLinkCode(db, systemClock, me.companyId!, first)).toBeUndefined()
    expect(await redeemLinkCode(db, systemClock, me.companyId!, second)).toBe(me.userId)
  })
})

describe('unlinking', () => {
  test('removes the person’s own link and says so', async () => {
    const me = await person()
    const id = await link(me, 'slack', 'U0MINE', 'ada')
    const kept = await link(me, 'telegram', '777003')
    const reply = await page(me, `/me/channels/${id}/unlink`, { post: true, fragment: true })
    expect(reply.status).toBe(200)
    expect(reply.text).toStartWith('<section id="links"')
    expect(reply.text).toContain('The account is unlinked: the agents no longer know it.')
    expect(reply.text).not.toContain(`id="link-${id}"`)
    expect(reply.text).toContain(`id="link-${kept}"`)
    expect(await linkIds(me)).toEqual([kept])
  })

  test('without htmx, answers the whole page', async () => {
    const me = await person()
    const id = await link(me, 'email', 'ada@example.com')
    const reply = await page(me, `/me/channels/${id}/unlink`, { post: true })
    expect(reply.status).toBe(200)
    expect(reply.text).toStartWith('<!DOCTYPE html>')
    expect(reply.text).toContain('The account is unlinked')
    expect(await linkIds(me)).toEqual([])
  })

  test('someone else’s link is refused in words, and stays', async () => {
    const owner = await person()
    const id = await link(owner, 'telegram', '777004', 'owner_tg')
    for (const stranger of [await person(owner.companyId), await person()]) {
      const reply = await page(stranger, `/me/channels/${id}/unlink`, { post: true, fragment: true })
      expect(reply.status).toBe(404)
      expect(reply.text).toContain('<p class="problem" role="alert">You have no such link.</p>')
      expect(reply.text).not.toContain('owner_tg')
    }
    expect(await linkIds(owner)).toEqual([id])
  })

  test('a malformed id names nothing', async () => {
    const me = await person()
    const id = await link(me, 'telegram', '777005')
    for (const bad of ['not-an-id', '..%2F..%2Fv1%2FUserPlatform%2F' + id]) {
      const reply = await page(me, `/me/channels/${bad}/unlink`, { post: true, fragment: true })
      expect(reply.status).toBe(404)
      expect(reply.text).toContain('You have no such link.')
    }
    expect(await linkIds(me)).toEqual([id])
  })
})
