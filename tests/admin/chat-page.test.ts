import { describe, expect, test } from 'bun:test'
import { echoAgent, useChatPlatform } from '../helpers/web-chat.ts'
import { rowsOf } from '../helpers/typed-call.ts'

const p = useChatPlatform()
const htmx = { 'hx-request': 'true', 'hx-request-type': 'partial' }

async function page(cookie: string, path: string, init: RequestInit & { headers?: Record<string, string> } = {}) {
  const response = await fetch(`${p().adminUrl}${path}`, { redirect: 'manual', ...init, headers: { cookie, origin: p().adminUrl, ...init.headers } })
  return { status: response.status, location: response.headers.get('location'), text: await response.text() }
}
const form = (fields: Record<string, string>) => ({ method: 'POST', body: new URLSearchParams(fields), headers: { 'content-type': 'application/x-www-form-urlencoded', ...htmx } })

describe('the chat page', () => {
  test('lists the person’s conversations and shows one with its messages, people and the socket script', async () => {
    const agent = await echoAgent(p())
    const a = await p().person()
    const created = await page(a.cookie, '/chat/new', { method: 'POST', body: new URLSearchParams({ agent_id: agent.id }), headers: { 'content-type': 'application/x-www-form-urlencoded' } })
    expect(created.status).toBe(303)
    const id = created.location!.split('/').at(-1)!
    const shown = await page(a.cookie, `/chat/${id}`)
    expect(shown.status).toBe(200)
    expect(shown.text).toContain(`data-conversation="${id}"`)
    expect(shown.text).toContain('<script src="/static/chat.js" defer="">')
    expect(shown.text).toContain('id="composer"')
    expect(shown.text).toContain(`<li data-user="${a.userId}">`)
    const list = await page(a.cookie, '/chat')
    expect(list.text).toContain(`data-id="${id}"`)
    // The vendored assets come from this origin.
    for (const asset of ['/static/vendor/marked.js', '/static/vendor/purify.js', '/static/chat.js', '/static/css/chat.css']) {
      expect((await fetch(`${p().adminUrl}${asset}`)).status, asset).toBe(200)
    }
  })

  test('a conversation the person does not take part in is a 404 page; a malformed id too', async () => {
    const agent = await echoAgent(p())
    const [a, b] = [await p().person(), await p().person()]
    const id = (await p().call('POST', '/api/v1/WebchatConversation', { json: { agent_id: agent.id }, as: a })).body.id
    expect((await page(b.cookie, `/chat/${id}`)).status).toBe(404)
    expect((await page(b.cookie, '/chat/..%2Fusers')).status).toBe(404)
  })

  test('pinning from the list marks it pinned for the person only, and the fragment comes back', async () => {
    const agent = await echoAgent(p())
    const [a, b] = [await p().person(), await p().person()]
    const id = (await p().call('POST', '/api/v1/WebchatConversation', { json: { agent_id: agent.id }, as: a })).body.id
    await p().call('POST', '/api/v1/WebchatParticipant', { json: { conversation_id: id, user_id: b.userId }, as: a })
    const pinned = await page(a.cookie, `/chat/${id}/pin`, form({ current: id }))
    expect(pinned.status).toBe(200)
    // The list's content, for the list to swap in (the list itself stays, with its refresh trigger).
    expect(pinned.text).toStartWith('<ul>')
    expect(pinned.text).toContain('aria-pressed="true"')
    const theirs = await page(b.cookie, '/chat/list', { headers: htmx })
    expect(theirs.text).toContain('aria-pressed="false"')
    expect(theirs.text).not.toContain('aria-pressed="true"')
  })

  test('adding a colleague by username on the people panel; an unknown name is said so', async () => {
    const agent = await echoAgent(p())
    const [a, b] = [await p().person(), await p().person()]
    const id = (await p().call('POST', '/api/v1/WebchatConversation', { json: { agent_id: agent.id }, as: a })).body.id
    const unknown = await page(a.cookie, `/chat/${id}/participants`, form({ person: 'nobody-by-this-name' }))
    expect(unknown.text).toContain('Nobody in your company matches &quot;nobody-by-this-name&quot;.')
    const added = await page(a.cookie, `/chat/${id}/participants`, form({ person: b.username }))
    expect(added.text).toContain(`<li data-user="${b.userId}">`)
    expect(added.text).toContain('shared')
    const again = await page(a.cookie, `/chat/${id}/participants`, form({ person: b.username }))
    expect(again.text).toContain(`${b.username} already takes part.`)
  })

  test('an upload through the page goes to the API as it came; one over the limit is refused before it is read whole', async () => {
    const agent = await echoAgent(p())
    const a = await p().person()
    const id = (await p().call('POST', '/api/v1/WebchatConversation', { json: { agent_id: agent.id }, as: a })).body.id
    const upload = async (file: File) => {
      const form = new FormData()
      form.set('file', file)
      const response = await fetch(`${p().adminUrl}/chat/${id}/documents`, { method: 'POST', body: form, headers: { cookie: a.cookie, origin: p().adminUrl } })
      return { status: response.status, body: await response.json() }
    }
    const ok = await upload(new File(['Minutes: the budget is approved.'], 'minutes.txt', { type: 'text/plain' }))
    expect(ok.status).toBe(201)
    expect(ok.body).toMatchObject({ conversation_id: id, filename: 'minutes.txt', media_type: 'text/plain' })
    const huge = await upload(new File([new Uint8Array(p().services.config.documentMaxBytes + 128 * 1024)], 'huge.txt'))
    expect(huge.status).toBe(413)
    expect(huge.body.detail).toContain('the most a document may be')
    const listed = await p().call('GET', `/api/v1/WebchatDocument?conversation_id=eq.${id}&select=filename`, { as: a })
    expect(rowsOf(listed.body)).toEqual([{ filename: 'minutes.txt' }])
  })
})
