/** @jsxImportSource hono/jsx */
import type { Hono } from 'hono'
import { problemText, type ApiClient, type Schema } from '../../api-client.ts'
import type { AdminEnv } from '../../context.ts'
import { Alert, Notice, Problem } from '../../components/feedback.tsx'
import { Table } from '../../components/table.tsx'
import { FormField } from '../fields.tsx'
import { CORRECT_FIELDS, formBody, refusal, type Field, type FormState, type FormValues } from '../form.ts'
import { isFragment, versionOf, versionTag, type Ctx } from '../resource.ts'

type PluginInfo = Schema<'PluginInfo'>
type JsonSchema = NonNullable<PluginInfo['config_schema']>
type Settings = Schema<'PluginSettings'>

/** What a settings form sends: only the scalars a manifest's settings may hold (the form makes nothing else). */
function scalars(json: Record<string, unknown>): Schema<'PluginSettingsInput'> {
  return Object.fromEntries(
    Object.entries(json).filter((entry): entry is [string, string | number | boolean | null] => ['string', 'number', 'boolean'].includes(typeof entry[1]) || entry[1] === null),
  )
}

const PLUGIN_NAME = /^[a-z0-9][a-z0-9-]{0,63}$/

/** A manifest's config_schema as form fields: one per property, secrets as password fields left empty. */
export function settingsFields(schema: JsonSchema | null, fixed: readonly string[] = []): Field[] {
  return Object.entries(schema?.properties ?? {}).map(([key, property]) => {
    const secret = property.format === 'password' || property.writeOnly === true
    const kind = secret ? 'password' : property.type === 'boolean' ? 'checkbox' : property.enum ? 'select' : property.type === 'number' || property.type === 'integer' ? 'number' : 'text'
    const notes = [property.description, fixed.includes(key) ? 'Set by the operator’s environment, which wins over this value.' : '', secret ? 'Never shown again; leave empty to keep the current one.' : '']
    return { name: key, label: property.title ?? key, kind, options: property.enum ? key : undefined, help: notes.filter(Boolean).join(' ') || undefined, required: !secret && (schema?.required ?? []).includes(key) }
  })
}

/** The agents (the signed-in person can see) that would stop working without `plugin`: its runner's, or those using it. */
async function agentsUsing(c: Ctx, api: ApiClient, plugin: PluginInfo): Promise<string[]> {
  const query = { select: 'name,runner,plugins', order: 'name.asc', limit: '500' }
  const [agents, runners] = await Promise.all([
    api.as(c).GET('/api/v1/AgentConfigRecord', { params: { query } }),
    plugin.kind === 'runner' ? api.as(c).GET('/api/runners') : undefined,
  ])
  // A runner plugin registers runners under names of their own (runner-echo's is echo).
  const itsRunners = new Set((runners?.data?.data ?? []).filter((r) => r.plugin === plugin.name).map((r) => r.name))
  return (agents.data?.data ?? []).filter((a) => itsRunners.has(a.runner) || (a.plugins?.enabled ?? []).includes(plugin.name)).map((a) => a.name)
}

/** Asked before a plugin in use is switched off: who would stop, and a second, deliberate press. */
function SwitchOffQuestion({ plugin, users }: { plugin: PluginInfo; users: string[] }) {
  const action = `/plugins/${plugin.name}/disable`
  const shown = users.slice(0, 5).join(', ') + (users.length > 5 ? ` and ${users.length - 5} more` : '')
  return (
    <div class="confirm" role="alert">
      <p>
        {users.length === 1 ? '1 agent uses' : `${users.length} agents use`} {plugin.name}
        {plugin.kind === 'runner' ? ' as its runner' : ''}: {shown}. Switched off, {users.length === 1 ? 'it stops' : 'they stop'} answering until it is on again.
      </p>
      <form method="post" action={action} hx-post={action} hx-target={`#plugin-${plugin.name}`} hx-swap="outerHTML">
        <input type="hidden" name="confirm" value="yes" />
        <button type="submit" class="danger">
          Switch off anyway
        </button>{' '}
        <a href="/plugins">Keep it on</a>
      </form>
    </div>
  )
}

function PluginRow({ plugin, message, question }: { plugin: PluginInfo; message?: string; question?: string[] }) {
  const action = `/plugins/${plugin.name}/${plugin.enabled ? 'disable' : 'enable'}`
  return (
    <tr id={`plugin-${plugin.name}`}>
      <td>{plugin.config_schema?.properties ? <a href={`/plugins/${plugin.name}`}>{plugin.name}</a> : plugin.name}</td>
      <td>{plugin.kind}</td>
      <td>{plugin.version}</td>
      <td>{plugin.description}</td>
      <td>{plugin.enabled ? 'on' : 'off'}</td>
      <td>
        <form method="post" action={action} hx-post={action} hx-target={`#plugin-${plugin.name}`} hx-swap="outerHTML">
          <button type="submit">
            {plugin.enabled ? 'Switch off' : 'Switch on'}
            <span class="visually-hidden"> {plugin.name}</span>
          </button>
        </form>
        {question ? <SwitchOffQuestion plugin={plugin} users={question} /> : null}
        {message ? (
          <span class="problem" role="alert">
            {message}
          </span>
        ) : null}
      </td>
    </tr>
  )
}

function SettingsForm({ plugin, settings, version, form, notice }: { plugin: PluginInfo; settings: Settings; version: string; form?: FormState; notice?: string }) {
  const fields = settingsFields(plugin.config_schema, settings.fixed_by_environment)
  const options = Object.fromEntries(Object.entries(plugin.config_schema?.properties ?? {}).filter(([, p]) => p.enum).map(([key, p]) => [key, p.enum!.map((v) => ({ value: String(v), label: String(v) }))]))
  const values: FormValues = {}
  for (const field of fields) {
    const value = settings.values[field.name]
    values[field.name] = field.kind === 'checkbox' ? (value === true ? 'on' : '') : value === undefined || value === null ? '' : String(value)
  }
  const action = `/plugins/${plugin.name}/settings`
  return (
    <form id="settings-form" class="card wide" method="post" action={action} hx-post={action} hx-target="this" hx-swap="outerHTML" novalidate>
      <input type="hidden" name="_version" value={version} />
      {fields.map((field) => (
        <>
          <FormField field={field} values={form?.values ?? values} errors={form?.errors ?? []} prefix="setting" options={options} />
          {field.kind === 'password' ? <p class="help">{settings.secrets?.[field.name]?.set ? 'A value is set.' : 'No value is set.'}</p> : null}
        </>
      ))}
      <Problem message={form?.message} errors={form?.errors} fields={fields} />
      <Notice text={notice} />
      <button type="submit">Save settings</button>
    </form>
  )
}

/** `/plugins`: what is installed, switched on and off at runtime, and each plugin's settings from its manifest. */
export function mountPlugins(app: Hono<AdminEnv>, api: ApiClient): void {
  const list = (c: Ctx) => api.as(c).GET('/api/plugins')
  const find = async (c: Ctx, name: string) => (await list(c)).data?.data.find((p) => p.name === name)

  app.get('/plugins', async (c) => {
    const listed = await list(c)
    return c.render(
      <section>
        <h1>Plugins</h1>
        <p class="intro">Runners, tools, channels and themes. Switching one on or off takes effect at once, in every process, without a restart.</p>
        {!listed.data ? (
          <Alert text={problemText(listed, 'Reading the plugins')} />
        ) : (
          <Table caption="Plugins" headers={['Name', 'Kind', 'Version', 'Description', 'State']} actions>
              {listed.data.data.map((plugin) => (
                <PluginRow plugin={plugin} />
              ))}
            </Table>
        )}
      </section>,
      { title: 'Plugins' },
    )
  })

  // `/plugins/:name/*` names `/plugins/:name` too.
  app.use('/plugins/:name/*', async (c, next) => (PLUGIN_NAME.test(c.req.param('name') ?? '') ? next() : c.notFound()))

  for (const verb of ['enable', 'disable'] as const) {
    app.post(`/plugins/:name/${verb}`, async (c) => {
      const name = c.req.param('name')!
      // A plugin agents rely on is switched off only when asked a second time, knowing which agents stop.
      if (verb === 'disable' && (await c.req.parseBody()).confirm !== 'yes') {
        const plugin = await find(c, name)
        const users = plugin?.enabled ? await agentsUsing(c, api, plugin) : []
        if (plugin && users.length > 0) {
          return isFragment(c) ? c.html(<PluginRow plugin={plugin} question={users} />) : c.render(<table><tbody><PluginRow plugin={plugin} question={users} /></tbody></table>, { title: 'Switch off?' })
        }
      }
      const switched = await api.as(c).POST(verb === 'enable' ? '/api/plugins/{name}/enable' : '/api/plugins/{name}/disable', { params: { path: { name } } })
      if (!isFragment(c)) return c.redirect('/plugins', 303)
      if (switched.data) {
        // Switching a theme on switches the one before it off: the whole page shows the change.
        if (switched.data.kind === 'theme') {
          c.header('HX-Refresh', 'true')
        }
        return c.html(<PluginRow plugin={switched.data} />)
      }
      const status = switched.response.status
      const plugin = await find(c, name)
      if (!plugin) return c.html(<tr><td class="problem" role="alert" colspan={6}>{problemText(switched, 'Switching')}</td></tr>, status as 404)
      return c.html(<PluginRow plugin={plugin} message={problemText(switched, 'Switching')} />, status as 403)
    })
  }

  const settingsPage = async (c: Ctx, plugin: PluginInfo, extra: { form?: FormState; notice?: string } = {}) => {
    const read = await api.as(c).GET('/api/plugins/{name}/settings', { params: { path: { name: plugin.name } } })
    const form = read.data ? <SettingsForm plugin={plugin} settings={read.data} version={versionOf(read.response.headers.get('etag'))} {...extra} /> : <Alert text={problemText(read, 'Reading the settings')} />
    return { form, status: read.response.status }
  }

  app.get('/plugins/:name', async (c) => {
    const plugin = await find(c, c.req.param('name'))
    if (!plugin) return c.notFound()
    const { form } = await settingsPage(c, plugin)
    return c.render(
      <section>
        <p class="crumbs">
          <a href="/plugins">Plugins</a>
        </p>
        <h1>Plugin {plugin.name}</h1>
        <p class="intro">{plugin.description}</p>
        <h2>Settings</h2>
        {form}
      </section>,
      { title: `Plugin ${plugin.name}` },
    )
  })

  app.post('/plugins/:name/settings', async (c) => {
    const plugin = await find(c, c.req.param('name')!)
    if (!plugin) return c.notFound()
    const posted = await c.req.parseBody()
    const fields = settingsFields(plugin.config_schema)
    const { values, json, errors } = formBody(fields, posted, 'edit')
    const version = typeof posted._version === 'string' ? posted._version : ''
    const saved = errors.length
      ? undefined
      : await api.as(c, { ifMatch: versionTag(version) }).PUT('/api/plugins/{name}/settings', { params: { path: { name: plugin.name } }, body: scalars(json) })
    const ok = saved?.data !== undefined
    const { form } = await settingsPage(c, plugin, ok ? { notice: 'Settings saved.' } : { form: saved ? refusal(values, saved) : { values, errors, message: CORRECT_FIELDS } })
    if (!isFragment(c)) return c.redirect(`/plugins/${plugin.name}`, 303)
    return c.html(form, ok ? 200 : ((saved?.response.status ?? 422) as 422))
  })
}
