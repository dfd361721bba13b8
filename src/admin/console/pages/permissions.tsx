/** @jsxImportSource hono/jsx */
import type { Hono } from 'hono'
import { isUuid } from '../../../models/fields.ts'
import { problemText, type ApiClient, type Schema } from '../../api-client.ts'
import type { AdminEnv } from '../../context.ts'
import { Alert, Notice, Problem } from '../../components/feedback.tsx'
import { Table } from '../../components/table.tsx'
import { FormField } from '../fields.tsx'
import { CORRECT_FIELDS, formBody, refusal, type Field, type FormState } from '../form.ts'
import { isFragment, optionsFrom, peopleOptions, type Ctx } from '../resource.ts'

const ruleFields: Field[] = [
  { name: 'user_id', label: 'Who', kind: 'select', options: 'people', nullable: true, empty: 'Everyone (company default)' },
  { name: 'server', label: 'Server', kind: 'select', options: 'servers', required: true },
  { name: 'tool', label: 'Tool', help: 'A tool’s name, a prefix ending in * (get-*), or * for all of the server.' },
  { name: 'effect', label: 'Effect', kind: 'select', options: 'effects', required: true },
  { name: 'approvers', label: 'Who answers (approve)', kind: 'select', options: 'approvers', empty: '(the default: the person whose turn it is)' },
  { name: 'approval_timeout_seconds', label: 'Waits (seconds, approve)', kind: 'number', help: 'No answer in time is a no; 300 by default.' },
]
const EFFECTS = [
  { value: 'allow', label: 'allow' },
  { value: 'approve', label: 'approve: ask a person each time' },
  { value: 'deny', label: 'deny' },
]
const APPROVERS = [
  { value: 'self', label: 'the person whose turn it is' },
  { value: 'admins', label: 'that person or an admin' },
]

async function Rules({ c, api, form, notice }: { c: Ctx; api: ApiClient; form?: FormState; notice?: string }) {
  // The rule form needs server names only: read from the records, not by listing every server's tools (which
  // connects to each one), since this panel is drawn again on every rule added or removed.
  const [rules, users, companyServers, toolPlugins] = await Promise.all([
    api.as(c).GET('/api/v1/McpPermission', { params: { query: { limit: '500', order: 'server.asc,tool.asc' } } }),
    peopleOptions(c, api),
    optionsFrom(api.as(c).GET('/api/v1/McpServer', { params: { query: { limit: '500', order: 'name.asc', select: 'name' } } }), (s) => ({ value: s.name, label: s.name })),
    optionsFrom(api.as(c).GET('/api/plugins'), (p) => (p.kind === 'mcp' ? [{ value: p.name, label: `${p.name} (built-in tools)` }] : [])),
  ])
  const names = new Map(users.map((u) => [u.value, u.label]))
  const options = {
    people: users,
    servers: [{ value: '*', label: '* (every server)' }, ...toolPlugins, ...companyServers.filter((s) => !toolPlugins.some((t) => t.value === s.value))],
    effects: EFFECTS,
    approvers: APPROVERS,
  }
  const errors = form?.errors ?? []
  return (
    <section id="rules" class="panel">
      <h2>Rules</h2>
      <p class="help">
        A person with rules of their own for a server is judged by those; everyone else by the company’s defaults. The most specific rule wins, deny wins a tie (then approve),
        and no rule means no. An approve rule offers the tool and makes each call wait for a person’s yes (see <a href="/approvals">Tool approvals</a>).
      </p>
      <Notice text={notice} />
      {!rules.data ? (
        <Alert text={problemText(rules, 'Reading the rules')} />
      ) : (
        <Table caption="Rules" headers={['Who', 'Server', 'Tool', 'Effect']} actions>
            {rules.data.data.map((rule) => (
              <tr>
                <td>{rule.user_id ? (names.get(rule.user_id) ?? rule.user_id) : 'Everyone (company default)'}</td>
                <td>{rule.server}</td>
                <td>{rule.tool}</td>
                <td class={`effect-${rule.effect}`}>
                  {rule.effect}
                  {rule.effect === 'approve' ? <span class="help">{`${rule.approvers === 'admins' ? 'by the person or an admin' : 'by the person'}, within ${rule.approval_timeout_seconds} s`}</span> : null}
                </td>
                <td>
                  <form method="post" action={`/permissions/rules/${rule.id}/delete`} hx-post={`/permissions/rules/${rule.id}/delete`} hx-target="#rules" hx-swap="outerHTML">
                    <button type="submit" class="danger">
                      Remove<span class="visually-hidden"> the rule {rule.effect} {rule.server} {rule.tool}</span>
                    </button>
                  </form>
                </td>
              </tr>
            ))}
          </Table>
      )}
      <form class="inline-form" method="post" action="/permissions/rules" hx-post="/permissions/rules" hx-target="#rules" hx-swap="outerHTML">
        {ruleFields.map((field) => (
          <FormField field={field} values={form?.values ?? { tool: '*', effect: 'allow', approvers: 'self' }} errors={errors} prefix="rule" options={options} />
        ))}
        <button type="submit">Add rule</button>
      </form>
      <Problem message={form?.message} errors={errors} fields={ruleFields} />
    </section>
  )
}

/** One person's effective tools: the catalogue as the gateway judges it for them. */
async function Preview({ c, api, userId }: { c: Ctx; api: ApiClient; userId?: string }) {
  const users = await peopleOptions(c, api)
  const preview = userId ? await api.as(c).GET('/api/mcp/tools', { params: { query: { user_id: userId } } }) : undefined
  return (
    <section id="preview" class="panel">
      <h2>Preview</h2>
      <form class="inline-form" method="get" action="/permissions" hx-get="/permissions/preview" hx-target="#preview" hx-swap="outerHTML">
        <FormField field={{ name: 'user_id', label: 'What this person may use', kind: 'select', options: 'people' }} values={{ user_id: userId ?? '' }} errors={[]} prefix="preview" options={{ people: users }} />
        <button type="submit">Show</button>
      </form>
      {preview && !preview.data ? <Alert text={problemText(preview, 'The preview')} /> : null}
      {preview?.data ? (
        <ul class="effective" aria-label="Effective tools">
          {preview.data.data.map((server) => (
            <li>
              <strong>{server.name}</strong> {server.allowed === false ? '— not allowed' : ''}
              {server.error ? <span class="problem"> (could not be listed: {server.error})</span> : null}
              {server.allowed !== false && server.tools.length ? (
                <ul>
                  {server.tools.map((tool) => (
                    <li class={tool.allowed ? 'allowed' : 'denied'}>
                      <code>{tool.name}</code> {tool.allowed ? '✓ allowed' : '✗ not allowed'}
                    </li>
                  ))}
                </ul>
              ) : null}
            </li>
          ))}
        </ul>
      ) : null}
    </section>
  )
}

/** `/permissions`: who may use which MCP server and tool, and a preview of one person's effective tools. */
export function mountPermissions(app: Hono<AdminEnv>, api: ApiClient): void {
  app.get('/permissions', async (c) => {
    const userId = c.req.query('user_id')
    const [rules, preview] = await Promise.all([Rules({ c, api }), Preview({ c, api, userId: userId && isUuid(userId) ? userId : undefined })])
    return c.render(
      <section>
        <h1>Permissions</h1>
        <p class="intro">
          MCP servers and tools per person and company default. People are added on the <a href="/users">Users</a> page and given roles on their company’s page.
        </p>
        {rules}
        {preview}
      </section>,
      { title: 'Permissions' },
    )
  })

  app.get('/permissions/preview', async (c) => {
    const userId = c.req.query('user_id')
    return c.html(await Preview({ c, api, userId: userId && isUuid(userId) ? userId : undefined }))
  })

  const answer = async (c: Ctx, status: number, extra: { form?: FormState; notice?: string }) => {
    if (!isFragment(c)) return c.redirect('/permissions', 303)
    return c.html(await Rules({ c, api, ...extra }), status as 200)
  }

  app.post('/permissions/rules', async (c) => {
    const { values, json, errors } = formBody(ruleFields, await c.req.parseBody(), 'create')
    if (errors.length) return answer(c, 422, { form: { values, errors, message: CORRECT_FIELDS } })
    // The form's fields are the schema's; whether their values are is the API's to judge (a 422 names what is not).
    const added = await api.as(c).POST('/api/v1/McpPermission', { body: json as Schema<'McpPermissionCreate'> })
    if (added.data) return answer(c, 200, { notice: 'Rule added.' })
    return answer(c, added.response.status, { form: refusal(values, added) })
  })

  app.post('/permissions/rules/:id/delete', async (c) => {
    const id = c.req.param('id')
    if (!isUuid(id)) return c.notFound()
    const removed = await api.as(c).DELETE('/api/v1/McpPermission/{id}', { params: { path: { id } } })
    if (removed.response.status === 204) return answer(c, 200, { notice: 'Rule removed.' })
    return answer(c, removed.response.status, { form: refusal({}, removed) })
  })
}
