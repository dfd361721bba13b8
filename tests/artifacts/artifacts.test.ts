import { afterAll, beforeAll, describe, expect, test } from 'bun:test'
import { MAX_BYTES_PER_PERSON } from '../../src/artifacts/artifacts.ts'
import { MAX_IMAGE_BYTES, MAX_TEXT_BYTES } from '../../src/artifacts/content.ts'
import { manualClock } from '../../src/clock.ts'
import { startTestPlatform, type Principal, type TestPlatform } from '../helpers/platform.ts'

// The artifacts service and its share links as a link holder meets them: the pages of the console's port, with a
// clock the tests move instead of waiting days.

const DAY = 24 * 60 * 60 * 1000
const clock = manualClock()
let p: TestPlatform
let owner: Principal
let stranger: Principal

/** A 1×1 PNG. */
const PNG = 'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg=='

beforeAll(async () => {
  p = await startTestPlatform({}, clock)
  owner = await p.createUser()
  stranger = await p.createUser()
})
afterAll(() => p.close())

const artifacts = () => p.services.artifacts

async function make(input: { title?: string; kind?: any; content?: string; ttl_days?: number } = {}, as: Principal = owner) {
  return (await artifacts().create(as, { title: 'Report', kind: 'markdown', content: '# Q3\n\nRevenue grew.', ...input })).record
}

/** A share link's page and its document, as a browser with no session asks for them. */
async function open(url: string) {
  const path = url.slice(p.services.config.adminBaseUrl.length)
  const page = await p.admin.request(path)
  // As the share page's frame asks for it (an HTML artifact opened any other way is a download).
  const content = await p.admin.request(path.replace('?token=', '/content?token='), { headers: { 'sec-fetch-dest': 'iframe' } })
  return { page: { status: page.status, headers: page.headers, text: await page.text() }, content: { status: content.status, headers: content.headers, text: await content.text() } }
}

async function statusOf(url: string): Promise<[number, number]> {
  const { page, content } = await open(url)
  return [page.status, content.status]
}

describe('share links', () => {
  test('a link opens the artifact without signing in: the page frames its document, sandboxed', async () => {
    const artifact = await make({ title: 'Quarterly <figures>' })
    const link = await artifacts().shareLink(owner, artifact.id)
    expect(link.url).toStartWith(`${p.services.config.adminBaseUrl}/share/artifacts/${artifact.id}?token=`)
    // An unpinned artifact's link ends with the artifact.
    expect(link.expires_at).toBe(new Date(Math.floor(Date.parse(artifact.expires_at!) / 1000) * 1000).toISOString())

    const { page, content } = await open(link.url)
    expect(page.status).toBe(200)
    expect(page.text).toContain('<h1>Quarterly &lt;figures&gt;</h1>')
    expect(page.text).toMatch(/<iframe src="\/share\/artifacts\/[^"]+\/content\?token=[^"]+" sandbox="" title="Quarterly &lt;figures&gt;"/)
    expect(page.headers.get('content-security-policy')).toContain("frame-src 'self'")
    expect(page.headers.get('cache-control')).toBe('no-store')

    expect(content.status).toBe(200)
    expect(content.headers.get('content-type')).toBe('text/html; charset=utf-8')
    expect(content.text).toContain('<h1>Q3</h1>')
    expect(content.text).toContain('<p>Revenue grew.</p>')
    const policy = content.headers.get('content-security-policy')!
    expect(policy).toMatch(/; sandbox$/)
    expect(policy).not.toContain('allow-same-origin')
    expect(policy).not.toContain('script-src')
  })

  test('a tampered, stretched, missing or borrowed token answers 403', async () => {
    const artifact = await make()
    const other = await make({ title: 'Other' })
    const { url } = await artifacts().shareLink(owner, artifact.id)
    const token = new URL(url).searchParams.get('token')!
    const [seconds, signature] = token.split('.') as [string, string]
    const base = url.slice(0, url.indexOf('?'))
    const flipped = signature.slice(0, 5) + (signature[5] === 'x' ? 'y' : 'x') + signature.slice(6)
    for (const bad of [`${seconds}.${flipped}`, `${Number(seconds) + 365 * 86_400}.${signature}`, 'nonsense', '']) {
      expect(await statusOf(`${base}?token=${encodeURIComponent(bad)}`)).toEqual([403, 403])
    }
    // The token of one artifact opens no other.
    expect(await statusOf(url.replace(artifact.id, other.id))).toEqual([403, 403])
    const { page } = await open(`${base}?token=${seconds}.${flipped}`)
    expect(page.text).toContain('This link is not valid')
    expect(page.text).not.toContain('Q3')
    expect(await statusOf(url)).toEqual([200, 200])
  })

  test('a deleted artifact answers 404; a malformed id 403, since no token was made for it', async () => {
    const artifact = await make()
    const { url } = await artifacts().shareLink(owner, artifact.id)
    await artifacts().remove(owner, artifact.id)
    expect(await statusOf(url)).toEqual([404, 404])
    expect((await open(url)).page.text).toContain('it was deleted')
    expect(await statusOf(url.replace(artifact.id, 'not-an-id'))).toEqual([403, 403])
  })

  test('a revoked artifact answers 410 on every link made before; unrevoking brings them back', async () => {
    const artifact = await make()
    const links = [await artifacts().shareLink(owner, artifact.id), await artifacts().shareLink(owner, artifact.id, 3)]
    expect((await artifacts().revoke(owner, artifact.id)).record.revoked_at).not.toBeNull()
    for (const { url } of links) expect(await statusOf(url)).toEqual([410, 410])
    expect((await open(links[0]!.url)).page.text).toContain('revoked')
    await expect(artifacts().shareLink(owner, artifact.id)).rejects.toMatchObject({ code: 'conflict' })
    expect((await artifacts().unrevoke(owner, artifact.id)).record.revoked_at).toBeNull()
    for (const { url } of links) expect(await statusOf(url)).toEqual([200, 200])
  })

  test('an expired link answers 410, and so does an expired artifact', async () => {
    const artifact = await make({ ttl_days: 10 })
    const short = await artifacts().shareLink(owner, artifact.id, 1)
    const long = await artifacts().shareLink(owner, artifact.id)
    clock.advance(DAY + 1000)
    expect(await statusOf(short.url)).toEqual([410, 410])
    expect((await open(short.url)).page.text).toContain('This link expired on')
    expect(await statusOf(long.url)).toEqual([200, 200])
    clock.advance(9 * DAY)
    expect(await statusOf(long.url)).toEqual([410, 410])
    // Once expired it cannot be changed or shared any more; it waits for the sweeper.
    await expect(artifacts().pin(owner, artifact.id)).rejects.toMatchObject({ code: 'conflict' })
    await expect(artifacts().shareLink(owner, artifact.id)).rejects.toMatchObject({ code: 'conflict' })
  })

  test('a link works to the last second of its expiry and not at it', async () => {
    const artifact = await make({ ttl_days: 10 })
    const link = await artifacts().shareLink(owner, artifact.id, 1)
    const token = new URL(link.url).searchParams.get('token')!
    const expiresAt = Number(token.split('.')[0]) * 1000
    expect(new Date(expiresAt).toISOString()).toBe(new Date(Date.parse(link.expires_at)).toISOString())
    clock.advance(expiresAt - 1 - clock.now())
    expect(await statusOf(link.url)).toEqual([200, 200])
    clock.advance(1)
    expect(await statusOf(link.url)).toEqual([410, 410])
  })

  test('a pinned artifact never expires; its links still do; unpinning restarts its time to live', async () => {
    const artifact = await make({ ttl_days: 5 })
    const before = await artifacts().shareLink(owner, artifact.id)
    clock.advance(3 * DAY)
    const pinned = (await artifacts().pin(owner, artifact.id)).record
    expect(pinned).toMatchObject({ pinned: true, expires_at: null })
    clock.advance(400 * DAY)
    expect(await artifacts().sweep()).toBeGreaterThanOrEqual(0)
    expect((await artifacts().read(owner, artifact.id)).record.pinned).toBe(true)
    // The link made while it was unpinned ended with the artifact's old expiry.
    expect(await statusOf(before.url)).toEqual([410, 410])
    const fresh = await artifacts().shareLink(owner, artifact.id)
    expect(Date.parse(fresh.expires_at) - clock.now()).toBeGreaterThan(29 * DAY)
    expect(await statusOf(fresh.url)).toEqual([200, 200])

    const unpinned = (await artifacts().unpin(owner, artifact.id)).record
    expect(unpinned.pinned).toBe(false)
    expect(Date.parse(unpinned.expires_at!)).toBe(clock.now() + 5 * DAY)
  })
})

describe('the sweeper', () => {
  test('deletes expired unpinned artifacts only', async () => {
    const gone = await make({ title: 'short', ttl_days: 1 })
    const kept = await make({ title: 'pinned', ttl_days: 1 })
    await artifacts().pin(owner, kept.id)
    const young = await make({ title: 'young', ttl_days: 30 })
    clock.advance(DAY + 1000)
    expect(await artifacts().sweep()).toBeGreaterThanOrEqual(1)
    const left = await p.store.db.selectFrom('artifacts').select('id').where('id', 'in', [gone.id, kept.id, young.id]).execute()
    expect(left.map((r) => r.id).sort()).toEqual([kept.id, young.id].sort())
  })
})

describe('content', () => {
  test('each kind is stored as its media type; an image is judged by its bytes', async () => {
    const expected = { text: 'text/plain', markdown: 'text/markdown', html: 'text/html', json: 'application/json', csv: 'text/csv' }
    for (const [kind, type] of Object.entries(expected)) expect((await make({ kind, content: kind === 'json' ? '{"a":1}' : 'a,b\n1,2' })).media_type).toBe(type as never)
    const image = await make({ kind: 'image', content: `data:image/gif;base64,${PNG}` })
    expect(image).toMatchObject({ media_type: 'image/png', size_bytes: Buffer.from(PNG, 'base64').length })
  })

  test('bad content is refused: empty, not JSON, not base64, too large, or not a PNG, JPEG, GIF or WebP', async () => {
    const refused = (input: Parameters<typeof make>[0]) => make(input).then(() => 'made', (error) => error.code)
    expect(await refused({ content: '   ' })).toBe('validation_error')
    expect(await refused({ kind: 'json', content: '{"a":' })).toBe('validation_error')
    expect(await refused({ kind: 'image', content: 'not base64!' })).toBe('validation_error')
    expect(await refused({ kind: 'text', content: 'é'.repeat(MAX_TEXT_BYTES / 2 + 1) })).toBe('payload_too_large')
    expect(await refused({ kind: 'image', content: 'A'.repeat(Math.ceil((MAX_IMAGE_BYTES * 4) / 3) + 8) })).toBe('payload_too_large')
    const svg = Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>').toString('base64')
    expect(await refused({ kind: 'image', content: svg })).toBe('unsupported_media_type')
    expect(await refused({ kind: 'image', content: Buffer.from('<html><script>alert(1)</script></html>').toString('base64') })).toBe('unsupported_media_type')
    expect(await refused({ title: '  ' })).toBe('validation_error')
    expect(await refused({ ttl_days: 0 })).toBe('validation_error')
    expect(await refused({ ttl_days: 366 })).toBe('validation_error')
  })

  test('one person keeps at most so many bytes of artifacts', async () => {
    const hoarder = await p.createUser()
    const first = await make({}, hoarder)
    await p.store.db.updateTable('artifacts').set({ size_bytes: MAX_BYTES_PER_PERSON - 10 }).where('id', '=', first.id).execute()
    await expect(make({ content: 'x'.repeat(20) }, hoarder)).rejects.toMatchObject({ code: 'conflict' })
    expect((await make({ content: 'x'.repeat(5) }, hoarder)).size_bytes).toBe(5)
  })

  test('pictures and HTML are served as themselves, downloads as attachments, all sandboxed', async () => {
    const image = await make({ kind: 'image', title: 'Chart', content: PNG })
    const imageLink = await artifacts().shareLink(owner, image.id)
    const { page, content } = await open(imageLink.url)
    expect(page.text).toMatch(/<img src="\/share\/artifacts\/[^"]+\/content\?token=[^"]+" alt="Chart"/)
    expect(content.headers.get('content-type')).toBe('image/png')
    expect(content.headers.get('x-content-type-options')).toBe('nosniff')
    expect(content.headers.get('content-security-policy')).toMatch(/^default-src 'none';.*; sandbox$/)

    const html = await make({ kind: 'html', title: 'Page', content: '<p id="x">hi</p><script>document.getElementById("x").textContent = "ran"</script>' })
    const htmlLink = await artifacts().shareLink(owner, html.id)
    const served = await open(htmlLink.url)
    expect(served.page.text).toContain('sandbox="allow-scripts"')
    expect(served.content.text).toBe('<p id="x">hi</p><script>document.getElementById("x").textContent = "ran"</script>')
    const policy = served.content.headers.get('content-security-policy')!
    expect(policy).toContain('sandbox allow-scripts')
    expect(policy).toContain("connect-src 'none'")
    expect(policy).not.toContain('allow-same-origin')
    expect(policy).toContain("frame-ancestors 'self'")

    const path = htmlLink.url.slice(p.services.config.adminBaseUrl.length).replace('?token=', '/content?token=')
    const download = await p.admin.request(`${path}&download=1`)
    expect(download.headers.get('content-disposition')).toBe('attachment; filename="Page.html"')
    expect(download.headers.get('content-security-policy')).toMatch(/; sandbox$/)
    // Opened as a page of its own (a link, the address bar), HTML is not run at the console's address at all.
    for (const dest of ['document', undefined]) {
      const alone = await p.admin.request(path, { headers: dest ? { 'sec-fetch-dest': dest } : {} })
      expect(alone.headers.get('content-disposition')).toBe('attachment; filename="Page.html"')
      expect(alone.headers.get('content-security-policy')).toMatch(/; sandbox$/)
    }
    expect(served.page.text).not.toContain('Open it on its own')
  })

  test('every kind is served sandboxed, unsniffable and without reach, whatever its content tries', async () => {
    const hostile = '<svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"><script>alert(document.cookie)</script></svg>'
    const kinds: Array<[string, string]> = [
      ['text', hostile],
      ['markdown', hostile],
      ['html', hostile],
      ['json', JSON.stringify({ html: hostile })],
      ['csv', `name,svg\nAda,"${hostile.replace(/"/g, '""')}"`],
      ['image', PNG],
    ]
    for (const [kind, content] of kinds) {
      const artifact = await make({ kind, title: `Hostile ${kind}`, content })
      const served = (await open((await artifacts().shareLink(owner, artifact.id)).url)).content
      expect(served.status, kind).toBe(200)
      const policy = served.headers.get('content-security-policy') ?? ''
      expect(policy, kind).toStartWith("default-src 'none'")
      expect(policy, kind).toMatch(/; sandbox( allow-scripts)?$/)
      expect(policy, kind).not.toContain('allow-same-origin')
      expect(policy, kind).not.toContain('allow-top-navigation')
      expect(policy, kind).toContain("form-action 'none'")
      expect(served.headers.get('x-content-type-options'), kind).toBe('nosniff')
      // Only an HTML artifact may run script, and only in its opaque origin; every other kind is shown as text.
      if (kind === 'html') expect(policy).toContain('sandbox allow-scripts')
      else {
        expect(policy, kind).not.toContain('allow-scripts')
        expect(served.text, kind).not.toContain('<script>')
        expect(served.text, kind).not.toContain('<svg')
      }
    }
  })

  test('markdown keeps raw HTML as text and drops script links; CSV becomes a table', async () => {
    const md = await make({ content: '<script>alert(1)</script>\n\n[click](javascript:alert(1)) [ok](https://example.com)\n\n![tracker](https://example.com/t.gif)' })
    const { content } = await open((await artifacts().shareLink(owner, md.id)).url)
    expect(content.text).not.toContain('<script>alert')
    expect(content.text).toContain('&lt;script&gt;alert(1)&lt;/script&gt;')
    expect(content.text).not.toContain('javascript:')
    expect(content.text).toContain('<a href="https://example.com" rel="noopener noreferrer nofollow" target="_blank">ok</a>')
    expect(content.text).not.toContain('src="https://example.com/t.gif"')

    const csv = await make({ kind: 'csv', content: 'name,total\n<b>Ada</b>,3\n' })
    const table = (await open((await artifacts().shareLink(owner, csv.id)).url)).content.text
    expect(table).toContain('<th scope="col">name</th><th scope="col">total</th>')
    expect(table).toContain('<td>&lt;b&gt;Ada&lt;/b&gt;</td><td>3</td>')
  })
})

describe('whose it is', () => {
  test('another person of the same company cannot read, change, share or delete it: 404', async () => {
    const artifact = await make()
    for (const attempt of [
      () => artifacts().read(stranger, artifact.id),
      () => artifacts().pin(stranger, artifact.id),
      () => artifacts().revoke(stranger, artifact.id),
      () => artifacts().shareLink(stranger, artifact.id),
      () => artifacts().remove(stranger, artifact.id),
    ]) {
      await expect(attempt()).rejects.toMatchObject({ code: 'not_found' })
    }
    expect((await artifacts().list(stranger)).map((a) => a.id)).not.toContain(artifact.id)
    expect((await artifacts().list(owner)).map((a) => a.id)).toContain(artifact.id)
    expect((await artifacts().read(owner, artifact.id)).record.revoked_at).toBeNull()
  })

  test('someone of no company cannot make one', async () => {
    const loner = await p.createUser({ companyId: null })
    await expect(make({}, loner)).rejects.toMatchObject({ code: 'forbidden' })
  })
})

describe('in the caller’s transaction', () => {
  const actorOf = (who: Principal) => ({ userId: who.userId, companyId: who.companyId, role: 'member' as const, isSuperadmin: false })
  const kept = (id: string) => p.store.db.selectFrom('artifacts').select(['id', 'pinned']).where('id', '=', id).executeTakeFirst()

  test('an artifact made and pinned there stands or falls with the caller’s work', async () => {
    let made = ''
    await expect(
      p.services.writes.transaction(actorOf(owner), async (scope) => {
        made = (await artifacts().create(owner, { title: 'Draft', kind: 'markdown', content: 'Soon gone.' }, scope)).record.id
        expect((await artifacts().pin(owner, made, scope)).record.pinned).toBe(true)
        throw new Error('the caller failed')
      }),
    ).rejects.toThrow('the caller failed')
    expect(await kept(made)).toBeUndefined()

    const heard: string[] = []
    const stop = p.services.writes.on((write) => void (write.type === 'artifact' && heard.push(`${write.verb} ${write.id}`)))
    try {
      const record = await p.services.writes.transaction(actorOf(owner), async (scope) => {
        const created = (await artifacts().create(owner, { title: 'Kept', kind: 'markdown', content: 'Stays.' }, scope)).record
        await artifacts().pin(owner, created.id, scope)
        expect(heard).toEqual([])
        return created
      })
      expect(await kept(record.id)).toEqual({ id: record.id, pinned: true })
      expect(heard).toEqual([`create ${record.id}`, `update ${record.id}`])
    } finally {
      stop()
    }
  })
})
