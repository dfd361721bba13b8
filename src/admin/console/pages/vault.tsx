/** @jsxImportSource hono/jsx */
import type { Hono } from 'hono'
import { problemText, type ApiClient } from '../../api-client.ts'
import type { AdminEnv } from '../../context.ts'
import { Alert, Notice, Problem } from '../../components/feedback.tsx'
import { Table } from '../../components/table.tsx'
import { FormField } from '../fields.tsx'
import { CORRECT_FIELDS, formBody, refusal, type Field, type FormState } from '../form.ts'
import { isFragment, type Ctx } from '../resource.ts'


const SCOPES = [
  { value: 'company', label: 'Company (its admins)' },
  { value: 'user', label: 'Mine (only me)' },
  { value: 'global', label: 'Global (superadmins: runner and plugin keys)' },
]
type Scope = 'company' | 'user' | 'global'
const scopeOf = (value: unknown): Scope => (value === 'user' || value === 'global' ? value : 'company')

/** A text field's value as the form gave it; left out, it is empty, which the API refuses by the field's name. */
const text = (value: unknown) => (typeof value === 'string' ? value : '')

const setFields: Field[] = [
  { name: 'name', label: 'Name', required: true, help: 'Letters, digits and _ . - /, e.g. slack/bot_token.' },
  { name: 'value', label: 'Value', kind: 'password', required: true, help: 'Encrypted at once and never shown again.' },
]

/** A scope's secrets: names and versions only. Values go in and never come back out. */
async function Secrets({ c, api, scope, form, notice }: { c: Ctx; api: ApiClient; scope: Scope; form?: FormState; notice?: string }) {
  const listed = await api.as(c).GET('/api/vault/secrets', { params: { query: { scope } } })
  const errors = form?.errors ?? []
  const url = `/vault/secrets?scope=${scope}`
  return (
    <section id="secrets" class="panel">
      <h2>{SCOPES.find((s) => s.value === scope)!.label}</h2>
      <Notice text={notice} />
      {!listed.data ? (
        <Alert text={problemText(listed, 'Reading the secrets')} />
      ) : listed.data.data.length === 0 ? (
        <p>No secrets here yet.</p>
      ) : (
        <Table caption="Secrets" headers={['Name', 'Version', 'Changed', 'Rotate']} actions>
            {listed.data.data.map((secret, index) => (
              <tr>
                <td>
                  <code>{secret.name}</code>
                </td>
                <td>{secret.version}</td>
                <td>{secret.updated_at}</td>
                <td>
                  <form class="inline-form" method="post" action={url} hx-post={url} hx-target="#secrets" hx-swap="outerHTML">
                    <input type="hidden" name="name" value={secret.name} />
                    <label for={`rotate-${index}`} class="visually-hidden">
                      New value of {secret.name}
                    </label>
                    <input id={`rotate-${index}`} name="value" type="password" autocomplete="new-password" required />
                    <button type="submit">Rotate</button>
                  </form>
                </td>
                <td>
                  <form method="post" action={`/vault/secrets/delete?scope=${scope}`} hx-post={`/vault/secrets/delete?scope=${scope}`} hx-target="#secrets" hx-swap="outerHTML" hx-confirm={`Delete the secret ${secret.name}?`}>
                    <input type="hidden" name="name" value={secret.name} />
                    <button type="submit" class="danger">
                      Delete<span class="visually-hidden"> {secret.name}</span>
                    </button>
                  </form>
                </td>
              </tr>
            ))}
          </Table>
      )}
      <form class="card" method="post" action={url} hx-post={url} hx-target="#secrets" hx-swap="outerHTML">
        <h3>Set a secret</h3>
        {setFields.map((field) => (
          <FormField field={field} values={{ name: typeof form?.values.name === 'string' ? form.values.name : '' }} errors={errors} prefix="secret" />
        ))}
        <button type="submit">Save secret</button>
        <Problem message={form?.message} errors={errors} fields={setFields} />
      </form>
    </section>
  )
}

/** `/vault`: secrets by scope, set, rotated and deleted through the vault API. */
export function mountVault(app: Hono<AdminEnv>, api: ApiClient): void {
  app.get('/vault', async (c) => {
    const scope = scopeOf(c.req.query('scope'))
    const visible = SCOPES.filter((s) => s.value !== 'global' || c.get('me').user.is_superadmin)
    return c.render(
      <section>
        <h1>Vault</h1>
        <p class="intro">Secrets agents, MCP servers and runners use, kept encrypted. Nobody reads a value back here.</p>
        <nav class="tabs" aria-label="Scopes">
          {visible.map((s) => (
            <a href={`/vault?scope=${s.value}`} aria-current={s.value === scope ? 'page' : undefined}>
              {s.label}
            </a>
          ))}
        </nav>
        {await Secrets({ c, api, scope })}
      </section>,
      { title: 'Vault' },
    )
  })

  const answer = async (c: Ctx, scope: Scope, status: number, extra: { form?: FormState; notice?: string }) => {
    if (!isFragment(c)) return c.redirect(`/vault?scope=${scope}`, 303)
    return c.html(await Secrets({ c, api, scope, ...extra }), status as 200)
  }

  app.post('/vault/secrets', async (c) => {
    const scope = scopeOf(c.req.query('scope'))
    const { values, json, errors } = formBody(setFields, await c.req.parseBody(), 'create')
    if (errors.length) return answer(c, scope, 422, { form: { values, errors, message: CORRECT_FIELDS } })
    const saved = await api.as(c).PUT('/api/vault/secrets', { body: { scope, name: text(json.name), value: text(json.value) } })
    if (saved.data) return answer(c, scope, 200, { notice: `Saved ${saved.data.name} (version ${saved.data.version}).` })
    return answer(c, scope, saved.response.status, { form: refusal(values, saved) })
  })

  app.post('/vault/secrets/delete', async (c) => {
    const scope = scopeOf(c.req.query('scope'))
    const name = String((await c.req.parseBody()).name ?? '')
    const deleted = await api.as(c).DELETE('/api/vault/secrets', { body: { scope, name } })
    if (deleted.response.status === 204) return answer(c, scope, 200, { notice: `Deleted ${name}.` })
    return answer(c, scope, deleted.response.status, { form: refusal({}, deleted) })
  })
}
