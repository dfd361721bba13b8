import { expect, test } from 'bun:test'
import { usePlatform } from '../helpers/platform.ts'
import { expectProblem } from '../helpers/problem.ts'

const p = usePlatform()

test('an avatar is a file under /static/avatars/ or an http(s) URL, nothing else', async () => {
  const refused = [
    'javascript:alert(1)',
    'JaVaScRiPt:alert(1)',
    'data:image/svg+xml;base64,PHN2Zz4=',
    '/etc/passwd',
    '/static/avatars/../../master.key',
    '/static/avatars/',
    '//evil.example/a.png',
    'ftp://example.com/a.png',
    'http://user:pass@example.com/a.png',
    'file:///etc/passwd',
    '/api/v1/User',
  ]
  for (const avatar of refused) {
    const problem = expectProblem(await p().call('PATCH', `/api/v1/User/${p().root.userId}`, { json: { avatar } }), 422, 'validation_error')
    expect(problem.errors, avatar).toContainEqual(expect.objectContaining({ path: 'avatar' }))
  }
  for (const avatar of ['/static/avatars/ada.png', 'https://example.com/avatars/ada.png', 'http://cdn.example.com/a.jpg?size=64', null]) {
    const accepted = await p().call('PATCH', `/api/v1/User/${p().root.userId}`, { json: { avatar } })
    expect(accepted.status, String(avatar)).toBe(200)
    expect(accepted.body.avatar).toBe(avatar)
  }
})
