import { afterAll, beforeAll, expect, test } from 'bun:test'
import { ADMIN_PASSWORD, startTestPlatform, type TestPlatform } from '../helpers/platform.ts'
import { CONSOLE_ORIGIN as ORIGIN, consoleCookie } from '../helpers/console.ts'

// The console pages over HTTP, as a browser without JavaScript or htmx would use them; the browser tests drive the
// same pages in Chromium.
let p: TestPlatform
const htmx = { 'hx-request': 'true', 'hx-request-type': 'partial' }
let root: string

const signIn = (username: string, password: string) => consoleCookie(p, username, password)

beforeAll(async () => {
  p = await startTestPlatform()
  root = await signIn('admin', ADMIN_PASSWORD)
})
afterAll(() => p.close())

type Fields = Record<string, string | string[]>
function encode(fields: Fields): URLSearchParams {
  const body = new URLSearchParams()
  for (const [key, value] of Object.entries(fields)) for (const v of Array.isArray(value) ? value : [value]) body.append(key, v)
  return body
}

async function page(path: string, { cookie = root, post, fragment = false }: { cookie?: string; post?: Fields; fragment?: boolean } = {}) {
  const headers: Record<string, string> = { cookie, origin: ORIGIN, ...(fragment || post ? htmx : {}) }
  if (post) headers['content-type'] = 'application/x-www-form-urlencoded'
  const response = await p.admin.request(path, { method: post ? 'POST' : 'GET', headers, body: post ? encode(post) : undefined })
  return { status: response.status, headers: response.headers, text: await response.text() }
}

async function member(role: 'member' | 'admin' = 'member') {
  const user = await p.createUser({ role, password: `${role}-password-1` })
  return { ...user, cookie: await signIn(user.username, `${role}-password-1`) }
}

const versionIn = (html: string) => /name="_version" value="(\d+)"/.exec(html)![1]!

test('agents: runner and model come from the registry; saved through the API; a stale save is refused', async () => {
  const blank = await page('/agents/new')
  expect(blank.status).toBe(200)
  expect(blank.text).toMatch(/<select id="record-runner" name="runner"[^>]*hx-get="\/agents\/model-field"/)
  expect(blank.text).toMatch(/<option value="echo"[^>]*>echo<\/option>/)
  expect(blank.text).toContain('id="record-model-field"')
  // Changing the runner swaps in that runner's models.
  const models = await page('/agents/model-field?runner=echo', { fragment: true })
  expect(models.text).toStartWith('<div class="field" id="record-model-field">')
  const echoModels = (await p.call('GET', '/api/runners/echo/models')).body.data as Array<{ id: string }>
  expect(echoModels.length).toBeGreaterThan(0)
  for (const model of echoModels) expect(models.text).toContain(`value="${model.id}"`)

  const refused = await page('/agents', { post: { name: '', runner: 'echo', timeout_seconds: 'soon' } })
  expect(refused.status).toBe(422)
  expect(refused.text).toMatch(/id="record-timeout_seconds-error">must be a number/)

  const apiRefused = await page('/agents', { post: { name: 'x', runner: 'echo', timeout_seconds: '0' } })
  expect(apiRefused.status).toBe(422)
  expect(apiRefused.text).toMatch(/id="record-timeout_seconds-error">[^<]*(?:>=|greater|least|small)/i)

  // A channel ticked on without what it needs: the API's error stands beside the field, and the message links to it.
  const incomplete = await page('/agents', { post: { name: 'helper', runner: 'echo', 'channels.telegram.enabled': 'on', 'channels.telegram.unknown_senders': 'invite' } })
  expect(incomplete.status).toBe(422)
  expect(incomplete.text).toMatch(/id="record-channels-telegram-bot_token_secret-error">/)
  expect(incomplete.text).toContain('<a href="#record-channels-telegram-bot_token_secret">Telegram › Bot token (vault name)</a>')
  // An untouched channel is not sent at all, whatever its select says.
  const quiet = await page('/agents', { post: { name: 'quiet', runner: 'echo', 'channels.slack.unknown_senders': 'refuse' } })
  expect(quiet.status).toBe(201)
  const quietId = /\/agents\/([0-9a-f-]{36})/.exec(quiet.headers.get('hx-redirect')!)![1]
  expect((await p.call('GET', `/api/v1/AgentConfigRecord/${quietId}`)).body.channels).toEqual({ webchat: { enabled: false } })
  expect((await p.call('DELETE', `/api/v1/AgentConfigRecord/${quietId}`)).status).toBe(204)

  const created = await page('/agents', {
    post: {
      name: 'helper',
      runner: 'echo',
      model: echoModels[0]!.id,
      enabled: 'on',
      timeout_seconds: '120',
      'channels.webchat.enabled': 'on',
      'channels.telegram.enabled': 'on',
      'channels.telegram.bot_token_secret': 'tg/token',
      'channels.telegram.webhook_secret_secret': 'tg/hook',
      'channels.telegram.unknown_senders': 'refuse',
      'voice.language': 'en-GB',
      starter_prompts: 'What can you do?\n\n  Summarise my week  ',
    },
  })
  expect(created.status).toBe(201)
  const id = /\/agents\/([0-9a-f-]{36})/.exec(created.headers.get('hx-redirect')!)![1]!
  const record = (await p.call('GET', `/api/v1/AgentConfigRecord/${id}`)).body
  expect(record).toMatchObject({
    name: 'helper',
    runner: 'echo',
    model: echoModels[0]!.id,
    timeout_seconds: 120,
    enabled: true,
    channels: { webchat: { enabled: true }, telegram: { enabled: true, bot_token_secret: 'tg/token', webhook_secret_secret: 'tg/hook', unknown_senders: 'refuse' } },
    voice: { language: 'en-GB' },
    starter_prompts: ['What can you do?', 'Summarise my week'],
  })

  const opened = await page(`/agents/${id}`)
  expect(opened.text).toContain('Live state')
  // The form in parts, linked from its top; the Telegram channel's status loads into it after the page.
  for (const part of ['identity', 'model', 'tools', 'channels', 'voice', 'email', 'context']) expect(opened.text).toContain(`href="#part-${part}"`)
  expect(opened.text).toContain(`hx-get="/agents/${id}/channels/telegram"`)
  expect(opened.text).not.toContain(`hx-get="/agents/${id}/channels/slack"`)
  const version = versionIn(opened.text)
  // A channel emptied goes; a group's optional field emptied is cleared; an emptied optional field is cleared.
  const saved = await page(`/agents/${id}`, {
    post: { _version: version, name: 'helper', runner: 'echo', model: echoModels[0]!.id, timeout_seconds: '120', 'channels.webchat.enabled': 'on', 'voice.language': '' },
  })
  expect(saved.status).toBe(200)
  const after = (await p.call('GET', `/api/v1/AgentConfigRecord/${id}`)).body
  expect(after.channels).toEqual({ webchat: { enabled: true } })
  expect(after.voice?.language).toBeUndefined()
  expect(after.enabled).toBe(false)

  const stale = await page(`/agents/${id}`, { post: { _version: version, name: 'late', runner: 'echo' } })
  expect(stale.status).toBe(412)
  expect(stale.text).toContain('changed by someone else')
  expect((await p.call('GET', `/api/v1/AgentConfigRecord/${id}`)).body.name).toBe('helper')

  const reload = await page(`/agents/${id}/reload`, { post: {} })
  expect(reload.status).toBe(200)
  expect(reload.text).toContain('switched off, so it was only stopped')
})

test('agents: the tools a person must approve are set per tool, and kept by a save that does not touch them', async () => {
  const made = await p.call('POST', '/api/v1/AgentConfigRecord', { json: { name: 'asker', plugins: { enabled: ['mcp-planning'] }, mcp_permissions: { servers: { 'mcp-planning': { approve: ['plan_create'] } } } } })
  expect(made.status).toBe(201)
  const id = made.body.id as string
  const opened = await page(`/agents/${id}`)
  expect(opened.text).toMatch(/name="mcp_permissions\.mcp-planning\.approve" type="checkbox" value="plan_create" checked=""/)
  // Saved with the box still ticked and another ticked: both ask; the tools themselves unchanged (every tool).
  const saved = await page(`/agents/${id}`, {
    post: { _version: versionIn(opened.text), name: 'asker', runner: 'echo', 'plugins.enabled': 'mcp-planning', 'mcp_permissions.mcp-planning': 'all', 'mcp_permissions.mcp-planning.approve': ['plan_create', 'plan_update'] },
  })
  expect(saved.status).toBe(200)
  expect((await p.call('GET', `/api/v1/AgentConfigRecord/${id}`)).body.mcp_permissions).toEqual({ servers: { 'mcp-planning': { approve: ['plan_create', 'plan_update'], deny: [] } } })
  // Unticked: nothing asks any more.
  const again = await page(`/agents/${id}`)
  expect((await page(`/agents/${id}`, { post: { _version: versionIn(again.text), name: 'asker', runner: 'echo', 'plugins.enabled': 'mcp-planning', 'mcp_permissions.mcp-planning': 'all' } })).status).toBe(200)
  expect((await p.call('GET', `/api/v1/AgentConfigRecord/${id}`)).body.mcp_permissions).toEqual({ servers: { 'mcp-planning': { deny: [] } } })
  // Gone again: a later test counts the agents on the echo runner.
  expect((await p.call('DELETE', `/api/v1/AgentConfigRecord/${id}`)).status).toBe(204)
})

test('agents: a member reads agents and is offered no change; a change sent by hand shows the API’s refusal', async () => {
  const agent = (await p.call('POST', '/api/v1/AgentConfigRecord', { json: { name: 'guarded' } })).body
  const someone = await member()
  const list = await page('/agents', { cookie: someone.cookie })
  expect(list.status).toBe(200)
  expect(list.text).toContain('guarded')
  expect(list.text).not.toContain('href="/agents/new"')
  const opened = await page(`/agents/${agent.id}`, { cookie: someone.cookie })
  // Shown, not offered: the fields disabled, no Save, no Delete, no picture upload, no Reload.
  expect(opened.text).toContain('<fieldset class="form-body" disabled="">')
  expect(opened.text).toContain('You may read this agent; changing it takes a role yours does not have')
  for (const offer of ['>Save</button>', 'id="delete-form"', 'id="picture"', `action="/agents/${agent.id}/reload"`]) expect(opened.text).not.toContain(offer)
  // The admin is offered all of it.
  const asAdmin = await page(`/agents/${agent.id}`)
  for (const offer of ['>Save</button>', 'id="delete-form"', 'id="picture"', `action="/agents/${agent.id}/reload"`]) expect(asAdmin.text).toContain(offer)
  expect(asAdmin.text).not.toContain('<fieldset class="form-body" disabled')
  const refused = await page(`/agents/${agent.id}`, { cookie: someone.cookie, post: { _version: versionIn(opened.text), name: 'mine', runner: 'echo' } })
  expect(refused.status).toBe(403)
  expect(refused.text).toMatch(/role=\"alert\"[^>]*>[^<]*may not update/i)
  expect((await p.call('GET', `/api/v1/AgentConfigRecord/${agent.id}`)).body.name).toBe('guarded')
  // The menu does not offer what the role cannot use; the API is what refuses it.
  expect(list.text).not.toContain('href="/permissions"')
  const permissions = await page('/permissions', { cookie: someone.cookie })
  expect(permissions.text).toContain('may not list')
})

test('MCP servers: the security rules of the API show by their field', async () => {
  const local = await page('/mcp-servers', { post: { name: 'inside', transport: 'streamable-http', url: 'http://127.0.0.1:9/mcp' } })
  expect(local.status).toBe(422)
  expect(local.text).toMatch(/id="record-url-error">[^<]+/)
  const noProgram = await page('/mcp-servers', { post: { name: 'prog', transport: 'stdio' } })
  expect(noProgram.status).toBe(422)
  expect(noProgram.text).toMatch(/id="record-command_id-error">[^<]*catalogue/)
  const badJson = await page('/mcp-servers', { post: { name: 'prog', transport: 'stdio', env: '{"A": ' } })
  expect(badJson.status).toBe(422)
  expect(badJson.text).toMatch(/id="record-env-error">is not valid JSON/)
  expect((await p.call('GET', '/api/v1/McpServer?name=eq.prog')).body.data).toEqual([])
})

test('MCP servers: testing a connection says why it failed, without the upstream’s words', async () => {
  // Switched off, so the test reports it without reaching anywhere.
  const program = (await p.call('POST', '/api/v1/McpCommand', { json: { name: 'nothing', command: 'true' } })).body
  const server = (await p.call('POST', '/api/v1/McpServer', { json: { name: 'gone', transport: 'stdio', command_id: program.id, enabled: false } })).body
  expect(server.id).toBeString()
  const opened = await page(`/mcp-servers/${server.id}`)
  expect(opened.text).toContain('Test the connection')
  const tested = await page(`/mcp-servers/${server.id}/test`, { post: {} })
  expect(tested.status).toBe(200)
  expect(tested.text).toContain('Could not connect')
  const someone = await member()
  const refused = await page(`/mcp-servers/${server.id}/test`, { cookie: someone.cookie, post: {} })
  expect(refused.status).toBe(403)
  expect(refused.text).toContain('role="alert"')
})

test('permissions: rules are added and removed through the API, and the preview shows one person’s tools', async () => {
  const someone = await p.createUser({})
  const blank = await page('/permissions')
  expect(blank.status).toBe(200)
  expect(blank.text).toContain('Everyone')
  const bad = await page('/permissions/rules', { post: { user_id: someone.userId, server: 'Not A Server!', tool: '*', effect: 'allow' } })
  expect(bad.status).toBe(422)
  expect(bad.text).toMatch(/id="rule-server-error">/)
  // An approve rule says who answers and how long the call waits.
  const approve = await page('/permissions/rules', { post: { server: 'everything', tool: 'delete_*', effect: 'approve', approvers: 'admins', approval_timeout_seconds: '60' } })
  expect(approve.status).toBe(200)
  expect(approve.text).toContain('by the person or an admin, within 60 s')
  const stored = (await p.call('GET', '/api/v1/McpPermission?tool=eq.delete_*')).body.data[0]
  expect(stored).toMatchObject({ user_id: null, server: 'everything', tool: 'delete_*', effect: 'approve', approvers: 'admins', approval_timeout_seconds: 60 })
  expect((await p.call('DELETE', `/api/v1/McpPermission/${stored!.id}`)).status).toBe(204)
  const added = await page('/permissions/rules', { post: { user_id: someone.userId, server: 'everything', tool: 'echo', effect: 'allow' } })
  expect(added.status).toBe(200)
  expect(added.text).toContain('Rule added.')
  const rules = (await p.call('GET', `/api/v1/McpPermission?user_id=eq.${someone.userId}`)).body.data
  expect(rules).toMatchObject([{ server: 'everything', tool: 'echo', effect: 'allow' }])
  const preview = await page(`/permissions/preview?user_id=${someone.userId}`, { fragment: true })
  expect(preview.status).toBe(200)
  expect(preview.text).toStartWith('<section id="preview"')
  expect(preview.text).toContain('aria-label="Effective tools"')
  const removed = await page(`/permissions/rules/${rules[0]!.id}/delete`, { post: {} })
  expect(removed.text).toContain('Rule removed.')
  expect((await p.call('GET', `/api/v1/McpPermission?user_id=eq.${someone.userId}`)).body.data).toEqual([])
})

test('vault: values go in and never come back; rotating raises the version; members are refused', async () => {
  const set = await page('/vault/secrets?scope=company', { post: { name: 'crm/token', value: 'hunter2-secret-value' } })
  expect(set.status).toBe(200)
  expect(set.text).toContain('Saved crm/token (version 1).')
  const rotated = await page('/vault/secrets?scope=company', { post: { name: 'crm/token', value: 'second-secret-value' } })
  expect(rotated.text).toContain('version 2')
  const shown = await page('/vault?scope=company')
  expect(shown.text).toContain('crm/token')
  expect(shown.text).not.toContain('hunter2-secret-value')
  expect(shown.text).not.toContain('second-secret-value')
  const empty = await page('/vault/secrets?scope=company', { post: { name: 'x', value: '' } })
  expect(empty.status).toBe(422)
  expect(empty.text).toMatch(/id="secret-value-error">/)

  const someone = await member()
  const refused = await page('/vault/secrets?scope=company', { cookie: someone.cookie, post: { name: 'crm/token', value: 'overwritten' } })
  expect(refused.status).toBe(403)
  expect(refused.text).toContain('role="alert"')
  expect((await page('/vault', { cookie: someone.cookie })).text).not.toContain('scope=global')
  const deleted = await page('/vault/secrets/delete?scope=company', { post: { name: 'crm/token' } })
  expect(deleted.text).toContain('Deleted crm/token.')
})

test('runners: the registry is curated and refreshed from the page', async () => {
  const list = await page('/runners')
  expect(list.text).toContain('href="/runners/echo"')
  const runner = await page('/runners/echo')
  expect(runner.status).toBe(200)
  expect(runner.text).toContain('Model registry')
  expect(runner.text).toContain('needs no sign-in')
  const bad = await page('/runners/echo/models', { post: { id: '', name: 'n', api_id: 'a' } })
  expect(bad.status).toBe(422)
  expect(bad.text).toMatch(/id="model-id-error">/)
  const saved = await page('/runners/echo/models', { post: { id: 'echo-curated', name: 'Curated echo', api_id: 'echo-x' } })
  expect(saved.text).toContain('Saved model echo-curated.')
  expect((await p.call('GET', '/api/runners/echo/models')).body.data).toContainEqual(expect.objectContaining({ id: 'echo-curated', curated: true }))
  expect((await page('/runners/no%20such')).status).toBe(404)
})

test('companies: members and roles, within the role ladder', async () => {
  const admin = await member('admin')
  const newcomer = await p.createUser({ companyId: null })
  const company = p.root.companyId
  const opened = await page(`/companies/${company}`, { cookie: admin.cookie })
  expect(opened.text).toContain('Members')
  // The newcomer belongs to no company yet, so only a superadmin sees them to add them.
  const added = await page(`/companies/${company}/members`, { post: { user_id: newcomer.userId, role: 'member' } })
  expect(added.text).toContain('Member added.')
  const membership = (await p.call('GET', `/api/v1/CompanyUser?user_id=eq.${newcomer.userId}`)).body.data[0]!
  const tooHigh = await page(`/companies/${company}/members/${membership.id}`, { cookie: admin.cookie, post: { role: 'owner' } })
  expect(tooHigh.status).toBe(403)
  expect(tooHigh.text).toContain('above yours')
  expect((await p.call('GET', `/api/v1/CompanyUser/${membership.id}`)).body.role).toBe('member')
  const promoted = await page(`/companies/${company}/members/${membership.id}`, { cookie: admin.cookie, post: { role: 'admin' } })
  expect(promoted.text).toContain('Role changed.')
  expect((await p.call('GET', `/api/v1/CompanyUser/${membership.id}`)).body.role).toBe('admin')
})

test('superadmin pages: system settings take JSON; members are refused what only superadmins may do', async () => {
  const bad = await page('/system-config', { post: { key: 'chat.limit', value: '{nope' } })
  expect(bad.status).toBe(422)
  expect(bad.text).toMatch(/id="record-value-error">is not valid JSON/)
  const made = await page('/system-config', { post: { key: 'chat.limit', value: '20' } })
  expect(made.status).toBe(201)
  expect((await p.call('GET', '/api/v1/SystemConfig?key=eq.chat.limit')).body.data[0]!.value).toBe(20)
  const acl = await page('/model-acls/new')
  expect(acl.text).toContain('<option value="AgentConfigRecord"')

  const admin = await member('admin')
  for (const path of ['/system-config', '/model-acls']) {
    const refused = await page(path, { cookie: admin.cookie })
    expect(refused.status, path).toBe(403)
    expect(refused.text, path).toContain('role="alert"')
  }
  const write = await page('/mcp-commands', { cookie: admin.cookie, post: { name: 'shell', command: '/bin/sh' } })
  expect(write.status).toBe(403)
  expect((await p.call('GET', '/api/v1/McpCommand?name=eq.shell')).body.data).toEqual([])
})

test('switching off a runner agents use asks first, naming them; asked again, it is switched off', async () => {
  const names = [`uses-echo-a-${crypto.randomUUID().slice(0, 4)}`, `uses-echo-b-${crypto.randomUUID().slice(0, 4)}`]
  for (const name of names) expect((await p.call('POST', '/api/v1/AgentConfigRecord', { json: { name, runner: 'echo', model: 'echo-1' } })).status).toBe(201)
  const asked = await page('/plugins/runner-echo/disable', { post: {} })
  expect(asked.status).toBe(200)
  expect(asked.text).toMatch(/\d+ agents use runner-echo as its runner: /)
  for (const name of names) expect(asked.text).toContain(name)
  expect(asked.text).toContain('name="confirm" value="yes"')
  // Nothing changed yet.
  const echoOn = async () => ((await p.call('GET', '/api/plugins')).body.data as any[]).find((x) => x.name === 'runner-echo').enabled
  expect(await echoOn()).toBe(true)
  try {
    const done = await page('/plugins/runner-echo/disable', { post: { confirm: 'yes' } })
    expect(done.status).toBe(200)
    expect(done.text).toContain('Switch on')
    expect(await echoOn()).toBe(false)
  } finally {
    expect((await p.call('POST', '/api/plugins/runner-echo/enable')).status).toBe(200)
  }
  // A plugin no agent uses is switched off at once.
  const unused = ((await p.call('GET', '/api/plugins')).body.data as any[]).find((x) => x.kind === 'theme' && x.enabled === false)
  if (unused) expect((await page(`/plugins/${unused.name}/disable`, { post: {} })).text).not.toContain('Switch off anyway')
})

test('sign-in providers: set up through the API from the form, mapped roles within the ladder, members kept out', async () => {
  const admin = await member('admin')
  const blank = await page('/identity-providers/new', { cookie: admin.cookie })
  expect(blank.status).toBe(200)
  expect(blank.text).toContain('name="role_mapping"')
  const fields = { name: 'Okta', slug: 'console-okta', issuer: 'https://idp.example.com', client_id: 'switchboard', client_secret_secret: 'okta/secret', enabled: 'on', jit: 'on', default_role: 'member' }
  // An admin may not map a group to owner: the API's refusal shows on the form, and nothing is saved.
  const tooHigh = await page('/identity-providers', { cookie: admin.cookie, post: { ...fields, role_mapping: '[{"group": "leads", "role": "owner"}]' } })
  expect(tooHigh.status).toBe(403)
  expect(tooHigh.text).toContain('above your own role')
  const saved = await page('/identity-providers', { cookie: admin.cookie, post: { ...fields, role_mapping: '[{"group": "leads", "role": "admin"}]' } })
  expect(saved.status).toBe(201)
  const stored = (await p.call('GET', '/api/v1/IdentityProvider?slug=eq.console-okta')).body.data[0]!
  expect(stored).toMatchObject({ name: 'Okta', issuer: 'https://idp.example.com', role_mapping: [{ group: 'leads', role: 'admin' }], jit: true, link_by_email: false, enabled: true })
  expect((await page('/identity-providers', { cookie: admin.cookie })).text).toContain('console-okta')
  const someone = await member('member')
  expect((await page('/identity-providers', { cookie: someone.cookie })).status).toBe(403)
  // The company's own sign-in page offers it.
  const companySlug = (await p.store.db.selectFrom('companies').select('slug').where('id', '=', p.root.companyId!).executeTakeFirstOrThrow()).slug
  const login = await p.admin.request(`/login?company=${companySlug}`)
  expect(await login.text()).toContain('href="/auth/sso/console-okta?post_login_redirect=%2F"')
  await p.call('DELETE', `/api/v1/IdentityProvider/${stored.id}`)
})
