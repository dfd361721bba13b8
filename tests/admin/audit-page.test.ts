import { afterAll, beforeAll, expect, test } from 'bun:test'
import { csvField } from '../../src/admin/console/pages/audit.tsx'
import { ADMIN_PASSWORD, startTestPlatform, type TestPlatform } from '../helpers/platform.ts'
import { CONSOLE_ORIGIN as ORIGIN, consoleCookie } from '../helpers/console.ts'

// The console's audit page over HTTP, as a browser without JavaScript would use it.
let p: TestPlatform
let root: string

const signIn = (username: string, password: string) => consoleCookie(p, username, password)

async function page(path: string, cookie = root, fragment = false) {
  const headers: Record<string, string> = { cookie, origin: ORIGIN, ...(fragment ? { 'hx-request': 'true', 'hx-request-type': 'partial' } : {}) }
  const response = await p.admin.request(path, { headers })
  return { status: response.status, headers: response.headers, text: await response.text() }
}

beforeAll(async () => {
  p = await startTestPlatform()
  root = await signIn('admin', ADMIN_PASSWORD)
})
afterAll(() => p.close())

test('the page lists who did what, filters by action and day, and pages through the API', async () => {
  const made = await p.call('POST', '/api/v1/McpCommand', { json: { name: 'audited-program', command: 'npx', args: ['-y', 'x'] } })
  expect(made.status).toBe(201)
  const shown = await page('/audit')
  expect(shown.status).toBe(200)
  expect(shown.text).toContain('<h1>Audit trail</h1>')
  expect(shown.text).toContain('audited-program')
  expect(shown.text).toMatch(/sign in<\/td>/)

  const today = new Date().toISOString().slice(0, 10)
  const filtered = await page(`/audit?action=create&model=McpCommand&from=${today}&to=${today}`, root, true)
  expect(filtered.status).toBe(200)
  expect(filtered.text).toStartWith('<div id="audit-events">')
  expect(filtered.text).toContain('name: audited-program')
  expect(filtered.text).not.toMatch(/sign in<\/td>/)
  // A day long past holds none of today's events.
  expect((await page('/audit?action=create&model=McpCommand&to=2001-01-01', root, true)).text).toContain('No events match.')
})

test('a malformed filter is said and left out, never sent to the API', async () => {
  const shown = await page('/audit?action=drop_table&from=yesterday&actor=%27%20or%201=1')
  expect(shown.status).toBe(200)
  expect(shown.text).toContain('The action is not valid and was left out.')
  expect(shown.text).toContain('The first day is not valid and was left out.')
  expect(shown.text).toContain('The person (a user id) is not valid and was left out.')
})

test('the CSV export holds the filtered events, one per line, with formulas defused', async () => {
  await p.call('POST', '/api/v1/AgentConfigRecord', { json: { name: '=HYPERLINK("http://evil.example")' } })
  const csv = await p.admin.request('/audit/export.csv?model=AgentConfigRecord', { headers: { cookie: root } })
  expect(csv.status).toBe(200)
  expect(csv.headers.get('content-type')).toContain('text/csv')
  expect(csv.headers.get('content-disposition')).toMatch(/^attachment; filename="audit-\d{4}-\d\d-\d\d\.csv"$/)
  const lines = (await csv.text()).trim().split('\r\n')
  expect(lines[0]).toBe('created_at,company_id,actor_id,action,model,record_id,changes,address,request_id')
  expect(lines.length).toBeGreaterThan(1)
  for (const line of lines.slice(1)) expect(line).toContain('"AgentConfigRecord"')
  expect(csvField('=1+1')).toBe(`"'=1+1"`)
  expect(csvField('say "hi"')).toBe('"say ""hi"""')
  expect(csvField({ name: { to: 'x' } })).toBe('"{""name"":{""to"":""x""}}"')
})

test('a member is refused the page and the export, with the API’s reason', async () => {
  const user = await p.createUser({ role: 'member', password: 'member-password-1' })
  const cookie = await signIn(user.username, 'member-password-1')
  const refused = await page('/audit', cookie)
  expect(refused.status).toBe(403)
  expect(refused.text).toContain('Your role may not list AuditEvent records')
  expect((await p.admin.request('/audit/export.csv', { headers: { cookie } })).status).toBe(403)
  // The menu does not offer it to them.
  const menu = (html: string) => /<nav [^>]*aria-label="Console">[\s\S]*?<\/nav>/.exec(html)![0]
  expect(menu((await page('/chat', cookie)).text)).not.toContain('href="/audit"')
  expect(menu((await page('/')).text)).toContain('href="/audit"')
})
