/** @jsxImportSource hono/jsx */
import type { Hono } from 'hono'
import { problemText, type ApiClient } from '../../api-client.ts'
import type { AdminEnv } from '../../context.ts'
import { Alert, Notice, Problem } from '../../components/feedback.tsx'
import { Table } from '../../components/table.tsx'
import { FormField } from '../fields.tsx'
import { formBody, refusal, type Field, type FormState } from '../form.ts'
import { isFragment, type Ctx } from '../resource.ts'


const RUNNER_NAME = /^[a-z0-9][a-z0-9-]{0,63}$/
const modelFields: Field[] = [
  { name: 'id', label: 'Id (what agents name)', required: true },
  { name: 'name', label: 'Display name', required: true },
  { name: 'api_id', label: 'Provider id (api_id)', required: true, help: 'Sent to the provider and used for cost.' },
  { name: 'placeholder', label: 'Placeholder (not confirmed with the provider yet)', kind: 'checkbox' },
]
const keyFields: Field[] = [{ name: 'api_key', label: 'API key', kind: 'password', required: true, help: 'Kept encrypted in the vault and never shown again.' }]

async function Models({ c, api, runner, form, notice }: { c: Ctx; api: ApiClient; runner: string; form?: FormState; notice?: string }) {
  const listed = await api.as(c).GET('/api/runners/{name}/models', { params: { path: { name: runner } } })
  const errors = form?.errors ?? []
  return (
    <section id="models" class="panel">
      <h2>Model registry</h2>
      <Notice text={notice} />
      {!listed.data ? (
        <Alert text={problemText(listed, 'Reading the models')} />
      ) : (
        <Table caption="Models" headers={['Id', 'Name', 'Provider id', 'Curated', 'In catalogue', 'Placeholder']}>
            {listed.data.data.map((m) => (
              <tr>
                <td>
                  <code>{m.id}</code>
                </td>
                <td>{m.name}</td>
                <td>
                  <code>{m.api_id}</code>
                </td>
                <td>{m.curated ? 'yes' : 'no'}</td>
                <td>{m.in_catalogue ? 'yes' : 'no'}</td>
                <td>{m.placeholder ? 'yes' : 'no'}</td>
              </tr>
            ))}
          </Table>
      )}
      <form method="post" action={`/runners/${runner}/refresh`} hx-post={`/runners/${runner}/refresh`} hx-target="#models" hx-swap="outerHTML">
        <button type="submit">Refresh from the provider</button>
        <span class="help"> Adds new models; keeps curated names and ids, and models the provider no longer lists.</span>
      </form>
      <form class="card" method="post" action={`/runners/${runner}/models`} hx-post={`/runners/${runner}/models`} hx-target="#models" hx-swap="outerHTML">
        <h3>Add or correct a model</h3>
        {modelFields.map((field) => (
          <FormField field={field} values={form?.values ?? {}} errors={errors} prefix="model" />
        ))}
        <button type="submit">Save model</button>
        <Problem message={form?.message} errors={errors} fields={modelFields} />
      </form>
    </section>
  )
}

async function Auth({ c, api, runner, form, notice }: { c: Ctx; api: ApiClient; runner: string; form?: FormState; notice?: string }) {
  const { data: status, ...read } = await api.as(c).GET('/api/runners/{name}/auth/status', { params: { path: { name: runner } } })
  const errors = form?.errors ?? []
  return (
    <section id="auth" class="panel">
      <h2>Provider sign-in</h2>
      <Notice text={notice} />
      {!status ? (
        <Alert text={problemText(read, 'Reading the sign-in status')} />
      ) : status.method === 'none' ? (
        <p>This runner needs no sign-in.</p>
      ) : (
        <>
          <p>{status.configured ? 'An API key is set.' : 'No API key is set yet: agents on this runner cannot answer.'}</p>
          <form class="card" method="post" action={`/runners/${runner}/api-key`} hx-post={`/runners/${runner}/api-key`} hx-target="#auth" hx-swap="outerHTML">
            {keyFields.map((field) => (
              <FormField field={field} values={{}} errors={errors} prefix="key" />
            ))}
            <button type="submit">{status.configured ? 'Replace the key' : 'Set the key'}</button>
            <Problem message={form?.message} errors={errors} fields={keyFields} />
          </form>
        </>
      )}
    </section>
  )
}

/** `/runners`: each runner's model registry (curate, refresh) and its provider key, set into the vault. */
export function mountRunners(app: Hono<AdminEnv>, api: ApiClient): void {
  app.get('/runners', async (c) => {
    const listed = await api.as(c).GET('/api/runners')
    return c.render(
      <section>
        <h1>Runners</h1>
        <p class="intro">The back ends that call language models. Each has a model registry agents choose from, and may need a provider key.</p>
        {!listed.data ? (
          <Alert text={problemText(listed, 'Reading the runners')} />
        ) : (
          <ul class="runners">
            {listed.data.data.map((r) => (
              <li>
                <a href={`/runners/${r.name}`}>{r.name}</a> <span class="help">(plugin {r.plugin}{r.enabled === false ? ', switched off' : ''})</span>
              </li>
            ))}
          </ul>
        )}
      </section>,
      { title: 'Runners' },
    )
  })

  // `/runners/:name/*` names `/runners/:name` too.
  app.use('/runners/:name/*', async (c, next) => (RUNNER_NAME.test(c.req.param('name') ?? '') ? next() : c.notFound()))

  app.get('/runners/:name', async (c) => {
    const runner = c.req.param('name')
    const [models, auth] = await Promise.all([Models({ c, api, runner }), Auth({ c, api, runner })])
    return c.render(
      <section>
        <p class="crumbs">
          <a href="/runners">Runners</a>
        </p>
        <h1>Runner {runner}</h1>
        {auth}
        {models}
      </section>,
      { title: `Runner ${runner}` },
    )
  })

  const back = (c: Ctx) => c.redirect(`/runners/${c.req.param('name')}`, 303)

  app.post('/runners/:name/models', async (c) => {
    const runner = c.req.param('name')!
    const { values, json, errors } = formBody(modelFields, await c.req.parseBody(), 'create')
    const model = { id: String(json.id ?? ''), name: String(json.name ?? ''), api_id: String(json.api_id ?? ''), placeholder: json.placeholder === true }
    const saved = errors.length ? undefined : await api.as(c).POST('/api/runners/{name}/models', { params: { path: { name: runner } }, body: model })
    if (!isFragment(c)) return back(c)
    if (saved?.data) return c.html(await Models({ c, api, runner, notice: `Saved model ${model.id}.` }))
    return c.html(await Models({ c, api, runner, form: saved ? refusal(values, saved) : { values, errors } }), (saved?.response.status ?? 422) as 422)
  })

  app.post('/runners/:name/refresh', async (c) => {
    const runner = c.req.param('name')!
    const refreshed = await api.as(c).POST('/api/runners/{name}/models/refresh', { params: { path: { name: runner } } })
    if (!isFragment(c)) return back(c)
    const counts = refreshed.data
    if (counts) return c.html(await Models({ c, api, runner, notice: `Refreshed: ${counts.added} added, ${counts.updated} updated, ${counts.kept} kept.` }))
    return c.html(await Models({ c, api, runner, form: refusal({}, refreshed) }), refreshed.response.status as 422)
  })

  app.post('/runners/:name/api-key', async (c) => {
    const runner = c.req.param('name')!
    const { values, json, errors } = formBody(keyFields, await c.req.parseBody(), 'create')
    const stored = errors.length ? undefined : await api.as(c).POST('/api/runners/{name}/auth/api-key', { params: { path: { name: runner } }, body: { api_key: String(json.api_key ?? '') } })
    if (!isFragment(c)) return back(c)
    if (stored?.data) return c.html(await Auth({ c, api, runner, notice: 'The key is stored.' }))
    return c.html(await Auth({ c, api, runner, form: stored ? refusal(values, stored) : { values, errors } }), (stored?.response.status ?? 422) as 422)
  })
}
