/** @jsxImportSource hono/jsx */
import { Alert } from '../../components/feedback.tsx'
import type { Hono } from 'hono'
import { isUuid } from '../../../models/fields.ts'
import { problemText, type Answer, type ApiClient } from '../../api-client.ts'
import type { AdminEnv } from '../../context.ts'
import { optionsFrom, type ConsoleResource, type Ctx } from '../resource.ts'

type TestResult = Answer<'post', '/api/mcp/servers/{id}/test'>

const BREAKER_WORDS: Record<string, string> = {
  closed: 'closed (calls pass)',
  open: 'open (calls fail at once until the next probe)',
  'half-open': 'half-open (the next call is the probe)',
}

/**
 * A connection test of one server, with the caller's own connection, and what it found; before any test, the
 * caller's breaker for the server, when it has one.
 */
/** `mayTest`: the test needs the role that edits servers; others see the breaker's state only. */
function TestPanel({ id, result, breaker = result?.breaker, problem, mayTest = true }: { id: string; result?: TestResult; breaker?: string; problem?: string; mayTest?: boolean }) {
  return (
    <section id="connection" class="panel">
      <h2>Connection</h2>
      {mayTest ? (
        <form method="post" action={`/mcp-servers/${id}/test`} hx-post={`/mcp-servers/${id}/test`} hx-target="#connection" hx-swap="outerHTML">
          <button type="submit">Test the connection</button>
          <span class="help"> Connects as you and lists the server’s tools.</span>
        </form>
      ) : null}
      <Alert text={problem} />
      {result || breaker ? (
        <div role="status">
          {result ? <p class={result.ok ? 'notice' : 'problem'}>{result.ok ? `Connected: ${result.tools.length} tools.` : `Could not connect: ${result.error || 'no reason given'}`}</p> : null}
          {breaker ? <p>Circuit breaker: {BREAKER_WORDS[breaker] ?? breaker}</p> : null}
          {result?.ok && result.tools.length ? (
            <ul class="tools">
              {result.tools.map((tool) => (
                <li>
                  <code>{tool.name}</code> {tool.description ? `— ${tool.description}` : ''}
                </li>
              ))}
            </ul>
          ) : null}
        </div>
      ) : null}
    </section>
  )
}

function mountServerExtras(app: Hono<AdminEnv>, api: ApiClient): void {
  app.post('/mcp-servers/:id/test', async (c) => {
    const id = c.req.param('id')
    if (!isUuid(id)) return c.notFound()
    const tested = await api.as(c).POST('/api/mcp/servers/{id}/test', { params: { path: { id } } })
    if (tested.data) return c.html(<TestPanel id={id} result={tested.data} />)
    return c.html(<TestPanel id={id} problem={problemText(tested, 'The test')} />, tested.response.status as 403)
  })
}

async function breakerOf(c: Ctx, api: ApiClient, server: string): Promise<string | undefined> {
  const { data } = await api.as(c).GET('/api/mcp/breakers', { params: { query: { server } } })
  return data?.data.find((b) => b.user_id === c.get('me').user.id)?.state
}

export const mcpServers: ConsoleResource = {
  model: 'McpServer',
  path: '/mcp-servers',
  title: 'MCP servers',
  singular: 'MCP server',
  intro: 'Servers the company offers through the gateway at /mcp/{name}: a program of the platform’s catalogue run in a sandbox (stdio), or a remote address.',
  columns: [
    { field: 'name', label: 'Name' },
    { field: 'transport', label: 'Transport' },
    { field: 'url', label: 'Address' },
    { field: 'enabled', label: 'On' },
  ],
  search: { field: 'name', label: 'Name contains' },
  fields: [
    { name: 'name', label: 'Name', required: true, help: 'Lowercase letters, digits, - and _; the gateway serves it at /mcp/<name>.' },
    { name: 'description', label: 'Description', kind: 'textarea' },
    { name: 'transport', label: 'Transport', kind: 'select', options: 'transports', required: true },
    { name: 'command_id', label: 'Program (stdio)', kind: 'select', options: 'commands', nullable: true, help: 'A program of the platform’s catalogue, kept by superadmins.' },
    { name: 'url', label: 'Address (streamable-http)', nullable: true, help: 'Addresses inside the platform’s network are refused unless the operator allows them.' },
    { name: 'env', label: 'Environment (JSON, stdio)', kind: 'json', help: 'e.g. {"API_TOKEN": {"secret": "everything/token"}}; a value given inline is never shown again.' },
    { name: 'headers', label: 'Headers (JSON, streamable-http)', kind: 'json', help: 'e.g. {"Authorization": {"secret": "crm/token"}}.' },
    { name: 'vault_secrets', label: 'Vault secrets the program may read (one per line)', kind: 'lines' },
    { name: 'enabled', label: 'Switched on', kind: 'checkbox' },
  ],
  options: async (c, api) => ({
    transports: [
      { value: 'stdio', label: 'stdio (a program of the catalogue)' },
      { value: 'streamable-http', label: 'streamable-http (a remote address)' },
    ],
    commands: await optionsFrom(api.as(c).GET('/api/v1/McpCommand', { params: { query: { limit: '500', order: 'name.asc' } } }), (m) => ({ value: m.id, label: m.description ? `${m.name}: ${m.description}` : m.name })),
  }),
  defaults: { enabled: true },
  nameOf: (row) => String(row.name ?? ''),
  panels: async (c, api, row, mayEdit) => {
    const breaker = await breakerOf(c, api, String(row.name))
    return <TestPanel id={String(row.id)} breaker={breaker} mayTest={mayEdit} />
  },
  mountExtra: mountServerExtras,
}

export const mcpCommands: ConsoleResource = {
  model: 'McpCommand',
  path: '/mcp-commands',
  title: 'MCP programs',
  singular: 'program',
  intro: 'The platform’s catalogue of programs that may run as stdio MCP servers, each in a sandbox. Superadmins keep it: these are commands run on the host.',
  columns: [
    { field: 'name', label: 'Name' },
    { field: 'command', label: 'Command' },
    { field: 'network', label: 'Network' },
    { field: 'enabled', label: 'On' },
  ],
  search: { field: 'name', label: 'Name contains' },
  fields: [
    { name: 'name', label: 'Name', required: true },
    { name: 'description', label: 'Description', kind: 'textarea' },
    { name: 'command', label: 'Command', required: true, help: 'A path, or a name on the platform’s PATH. Shown to company admins: keep secrets in the environment.' },
    { name: 'args', label: 'Arguments (one per line)', kind: 'lines' },
    { name: 'env', label: 'Fixed environment (JSON)', kind: 'json' },
    { name: 'variables', label: 'Variables a company may set (one per line)', kind: 'lines' },
    { name: 'network', label: 'May use the network', kind: 'checkbox' },
    { name: 'company_id', label: 'Offered to (empty: every company)', kind: 'select', options: 'companies', nullable: true },
    { name: 'enabled', label: 'Switched on', kind: 'checkbox' },
  ],
  options: async (c, api) => ({
    companies: await optionsFrom(api.as(c).GET('/api/v1/Company', { params: { query: { limit: '500', order: 'name.asc' } } }), (co) => ({ value: co.id, label: co.name })),
  }),
  defaults: { enabled: true },
  nameOf: (row) => String(row.name ?? ''),
}
