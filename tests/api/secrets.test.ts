import { expect, test } from 'bun:test'
import { sql } from 'kysely'
import { MODELS } from '../../src/models/registry.ts'
import { modelCases } from '../helpers/fixtures.ts'
import { ADMIN_PASSWORD, usePlatform, type Reply } from '../helpers/platform.ts'
import { fieldsOf } from '../helpers/typed-call.ts'

const p = usePlatform()

test('no response of any endpoint contains a password hash or a token hash', async () => {
  const replies: Reply[] = []
  const cases = modelCases(p())
  const member = await p().createUser({ password: 'member-password-1' })
  replies.push(await p().call('POST', '/auth/login', { as: null, json: { username: 'admin', password: ADMIN_PASSWORD }, headers: { accept: 'application/json' } }))
  replies.push(await p().call('POST', '/auth/login', { as: null, json: { username: member.username, password: 'member-password-1' }, headers: { accept: 'application/json' } }))
  replies.push(await p().call('POST', '/api/v1/User', { json: { email: 'hashme@example.com', username: 'hashme', password: 'a-password-to-hash' } }))
  replies.push(await p().call('POST', '/api/v1/ApiToken', { json: { name: 'scan' } }))
  replies.push(await p().call('POST', '/api/v1/ApiToken', { as: member, json: { name: 'scan' } }))
  for (const model of MODELS) {
    const made = await p().call('POST', `/api/v1/${model.name}`, { json: await cases[model.name]!.make(p().root) })
    replies.push(made)
    replies.push(await p().call('GET', `/api/v1/${model.name}?limit=500`))
    const id = fieldsOf(made.body).id
    replies.push(await p().call('GET', `/api/v1/${model.name}/${id}`))
    replies.push(await p().call('PATCH', `/api/v1/${model.name}/${id}`, { json: cases[model.name]!.patch }))
    replies.push(await p().call('GET', `/api/v1/${model.name}?limit=500`, { as: member }))
  }
  replies.push(await p().call('GET', '/api/openapi.json'))
  // Asking for the secret columns by name is refused, not answered.
  for (const query of ['User?select=password_hash', 'ApiToken?select=token_hash', 'User?password_hash=is.null', 'User?order=password_hash.asc']) {
    const refused = await p().call('GET', `/api/v1/${query}`)
    expect(refused.status).toBe(400)
    replies.push(refused)
  }

  const hashes = [
    ...(await p().store.db.selectFrom('users').select('password_hash').where('password_hash', 'is not', null).execute()).map((r) => r.password_hash!),
    ...(await p().store.db.selectFrom('api_tokens').select('token_hash').execute()).map((r) => r.token_hash),
    ...(await p().store.db.selectFrom('sessions').select('token_hash').execute()).map((r) => r.token_hash),
  ]
  expect(hashes.length).toBeGreaterThanOrEqual(7)
  for (const reply of replies) {
    const text = `${JSON.stringify(reply.body)} ${JSON.stringify([...reply.headers])}`
    expect(text).not.toContain('$argon2')
    for (const hash of hashes) expect(text).not.toContain(hash)
  }
})

test('no table of the database holds a secret set through the api in plain text', async () => {
  const values = ['company-secret-value-123', 'user-secret-value-456', 'sk-runner-key-789']
  expect((await p().call('PUT', '/api/vault/secrets', { json: { scope: 'company', name: 'scan/company', value: values[0] } })).status).toBe(200)
  expect((await p().call('PUT', '/api/vault/secrets', { json: { scope: 'user', name: 'scan/user', value: values[1] } })).status).toBe(200)
  expect((await p().call('POST', '/api/runners/openai/auth/api-key', { json: { api_key: values[2] } })).status).toBe(200)
  // An MCP server that takes its token from the vault keeps only the name.
  const program = (await p().call('POST', '/api/v1/McpCommand', { json: { name: 'scan', command: 'true', variables: ['TOKEN'] } })).body.id
  expect((await p().call('POST', '/api/v1/McpServer', { json: { name: 'scan', transport: 'stdio', command_id: program, env: { TOKEN: { secret: 'scan/company' } } } })).status).toBe(201)

  // Every row of every table, as text.
  const tables = await sql<{ name: string }>`SELECT table_name AS name FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'`.execute(p().store.db)
  expect(tables.rows.map((t) => t.name)).toContain('vault_secrets')
  let dump = ''
  for (const { name } of tables.rows) {
    const rows = await sql<{ row: string }>`SELECT row_to_json(t)::text AS row FROM ${sql.table(name)} t`.execute(p().store.db)
    dump += rows.rows.map((r) => r.row).join('\n')
  }
  expect(dump).toContain('scan/company')
  for (const value of values) {
    expect(dump).not.toContain(value)
    expect(dump).not.toContain(Buffer.from(value).toString('base64'))
    expect(dump).not.toContain(Buffer.from(value).toString('hex'))
  }
})
