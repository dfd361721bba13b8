/** @jsxImportSource hono/jsx */
import type { Hono } from 'hono'
import { raw } from 'hono/html'
import { problemText, type Answer, type ApiClient } from '../../api-client.ts'
import type { AdminEnv, Me } from '../../context.ts'
import { Alert, Notice } from '../../components/feedback.tsx'
import type { PageAssets } from '../../components/layout.tsx'
import { Table } from '../../components/table.tsx'
import { PageRefusal } from '../routes.tsx'
import { monthOf } from '../../../usage/budgets.ts'
import type { Ctx } from '../resource.ts'
import { Time } from '../../components/time.tsx'

type Summary = Answer<'get', '/api/usage'>
type BudgetState = Answer<'get', '/api/usage/budgets'>['data'][number]
type Scope = 'company' | 'mine'

/** The chart library and the script that draws the charts from the data each figure carries; both served from here. */
const ASSETS: PageAssets = { scripts: ['/static/vendor/chart.js', '/static/usage.js'] }
const DAY = /^\d{4}-\d\d-\d\d$/

const usd = (n: number) => `USD ${n.toFixed(n > 0 && n < 0.01 ? 4 : 2)}`
const count = (n: number) => Math.round(n).toLocaleString('en')

function isAdmin(me: Me): boolean {
  return me.user.is_superadmin || me.role === 'admin' || me.role === 'owner'
}

/**
 * A chart: a canvas the page's script draws on, the figures it draws as JSON beside it (read, never run), and the
 * same figures as a table for screen readers and for browsers without scripts.
 */
function Chart({ id, title, kind, rows }: { id: string; title: string; kind: 'bars' | 'columns'; rows: Array<{ label: string; cost_usd: number; turns: number }> }) {
  const data = { kind, title, labels: rows.map((r) => r.label), values: rows.map((r) => Number(r.cost_usd.toFixed(6))) }
  return (
    <figure class="chart" id={id} data-chart={id}>
      <figcaption>{title}</figcaption>
      {rows.length === 0 ? (
        <p class="help">Nothing was spent in this period.</p>
      ) : (
        <>
          {/* Chart.js sizes a responsive chart by its container, which therefore has the height. */}
          <div class="chart-box">
            <canvas role="img" aria-label={`${title}: a chart of the table below`}></canvas>
          </div>
          {/* Raw, as a script's text is never HTML: a `<` is escaped instead, so no `</script>` can end it early. */}
          <script type="application/json" class="chart-data">
            {raw(JSON.stringify(data).replaceAll('<', '\\u003c'))}
          </script>
          <details>
            <summary>The figures</summary>
            <Table caption={title} headers={['', 'Cost', 'Turns']}>
              {rows.map((r) => (
                <tr>
                  <td>{r.label}</td>
                  <td>{usd(r.cost_usd)}</td>
                  <td>{count(r.turns)}</td>
                </tr>
              ))}
            </Table>
          </details>
        </>
      )}
    </figure>
  )
}

function Budgets({ states, admin, back }: { states: BudgetState[]; admin: boolean; back: string }) {
  if (states.length === 0) return <p class="help">No monthly budget applies{admin ? ' (set one on the Budgets page)' : ''}.</p>
  const amount = (s: BudgetState, n: number) => (s.metric === 'cost_usd' ? usd(n) : `${count(n)} tokens`)
  return (
    <ul class="budgets">
      {states.map((s) => {
        const share = Math.min(100, Math.floor((s.used / s.limit) * 100))
        return (
          <li class={s.refusing ? 'budget spent' : 'budget'}>
            <strong>{s.scope === 'company' ? 'The company' : 'Yours'}</strong>: {amount(s, s.used)} of {amount(s, s.limit)} this month{' '}
            <meter min={0} max={100} low={80} high={99} optimum={0} value={share}>
              {share} %
            </meter>{' '}
            {s.refusing ? (
              'spent: turns and tool calls are refused'
            ) : s.lifted_until ? (
              <>
                lifted until <Time iso={s.lifted_until} />
              </>
            ) : (
              `${share} %`
            )}
            {admin && s.refusing ? (
              <form method="post" action={`/usage/budgets/${s.id}/lift`} class="inline">
                <input type="hidden" name="back" value={back} />
                <button type="submit">Lift until the month ends</button>
              </form>
            ) : null}
          </li>
        )
      })}
    </ul>
  )
}

function Period({ scope, from, to, admin, path }: { scope: Scope; from: string; to: string; admin: boolean; path: string }) {
  return (
    <form class="filters" action={path} method="get">
      {admin && path === '/usage' ? (
        <label>
          Whose{' '}
          <select name="scope">
            <option value="company" selected={scope === 'company'}>
              the company’s
            </option>
            <option value="mine" selected={scope === 'mine'}>
              mine
            </option>
          </select>
        </label>
      ) : null}
      <label>
        From <input type="date" name="from" value={from} />
      </label>
      <label>
        To <input type="date" name="to" value={to} />
      </label>
      <button type="submit">Show</button>
    </form>
  )
}

/** Every day of the period, those without usage at nought, so that the time axis has no gaps; none when nothing was spent. */
function everyDay(summary: Summary): Summary['data'] {
  if (summary.data.length === 0) return []
  const byKey = new Map(summary.data.map((row) => [row.key, row]))
  const days: Summary['data'] = []
  for (let t = Date.parse(`${summary.from}T00:00:00Z`); t <= Date.parse(`${summary.to}T00:00:00Z`); t += 86_400_000) {
    const key = new Date(t).toISOString().slice(0, 10)
    days.push(byKey.get(key) ?? { key, label: key, turns: 0, input_tokens: 0, output_tokens: 0, cost_usd: 0, tool_calls: 0 })
  }
  return days
}

/** The usage of a period and its charts: over time, by agent, and by person for the company's. */
async function UsagePage({ c, api, scope, path, notice }: { c: Ctx; api: ApiClient; scope: Scope; path: string; notice?: string }) {
  const me = c.get('me')
  const admin = isAdmin(me)
  const period = Object.fromEntries(['from', 'to'].flatMap((k) => (DAY.test(c.req.query(k) ?? '') ? [[k, c.req.query(k)!]] : [])))
  const summary = async (by: 'day' | 'agent' | 'user' | 'model') => {
    const reply = await api.as(c).GET('/api/usage', { params: { query: { scope, by, ...period } } })
    if (!reply.data) throw new PageRefusal(reply.response.status, problemText(reply, 'Reading the usage'))
    return reply.data
  }
  const [byDay, byAgent, byPerson, byModel, budgets] = await Promise.all([
    summary('day'),
    summary('agent'),
    scope === 'company' ? summary('user') : undefined,
    summary('model'),
    api.as(c).GET('/api/usage/budgets'),
  ])
  const { totals } = byDay as Summary
  const back = `${path}?${new URLSearchParams({ ...(scope === 'company' && path === '/usage' ? { scope } : {}), ...period })}`
  return (
    <section class="usage">
      <h1>{scope === 'company' ? 'Usage of the company' : 'Your usage'}</h1>
      <p class="intro">
        What the agents’ turns cost from {byDay.from} to {byDay.to} (UTC), priced by each model’s provider id.
      </p>
      <Notice text={notice} />
      <Period scope={scope} from={byDay.from} to={byDay.to} admin={admin} path={path} />
      <p class="totals">
        <strong>{usd(totals.cost_usd)}</strong> · {count(totals.turns)} turns · {count(totals.input_tokens + totals.output_tokens)} tokens · {count(totals.tool_calls)} tool calls ·{' '}
        {count(totals.background_tasks)} background tasks
      </p>
      <h2>Budgets this month</h2>
      {budgets.data ? <Budgets states={budgets.data.data} admin={admin} back={back} /> : <Alert text={problemText(budgets, 'Reading the budgets')} />}
      <div class="charts">
        <Chart id="chart-days" title="Cost per day" kind="columns" rows={everyDay(byDay)} />
        <Chart id="chart-agents" title="Cost by agent" kind="bars" rows={byAgent.data} />
        {byPerson ? <Chart id="chart-people" title="Cost by person" kind="bars" rows={byPerson.data} /> : null}
      </div>
      <h2>By model</h2>
      <div class="scrolls">
      <Table caption="Cost by model" headers={['Model', 'Cost', 'Turns', 'Tokens in', 'Tokens out', 'Tool calls']}>
        {byModel.data.map((r) => (
          <tr>
            <td>
              <code>{r.label}</code>
            </td>
            <td>{usd(r.cost_usd)}</td>
            <td>{count(r.turns)}</td>
            <td>{count(r.input_tokens)}</td>
            <td>{count(r.output_tokens)}</td>
            <td>{count(r.tool_calls)}</td>
          </tr>
        ))}
      </Table>
      </div>
    </section>
  )
}

/** `/usage` (the company's for admins, else one's own) and `/me/usage` (one's own): read through the public API. */
export function mountUsage(app: Hono<AdminEnv>, api: ApiClient): void {
  app.get('/usage', async (c) => {
    const scope: Scope = isAdmin(c.get('me')) && c.req.query('scope') !== 'mine' ? 'company' : 'mine'
    return c.render(<UsagePage c={c} api={api} scope={scope} path="/usage" notice={c.req.query('lifted') ? 'The budget is lifted until the month ends.' : undefined} />, { title: 'Usage', assets: ASSETS })
  })
  app.get('/me/usage', async (c) => c.render(<UsagePage c={c} api={api} scope="mine" path="/me/usage" />, { title: 'Your usage', assets: ASSETS }))

  // The lift is a change of the Budget record, made through the API as the signed-in admin.
  app.post('/usage/budgets/:id/lift', async (c) => {
    const id = c.req.param('id')
    const form = await c.req.parseBody()
    const back = typeof form.back === 'string' && /^\/(me\/)?usage(\?[\w=&%.-]*)?$/.test(form.back) ? form.back : '/usage'
    const until = monthOf(Date.now()).end.toISOString()
    const reply = await api.as(c).PATCH('/api/v1/Budget/{id}', { params: { path: { id } }, body: { lifted_until: until } })
    if (!reply.data) throw new PageRefusal(reply.response.status, problemText(reply, 'Lifting the budget'))
    return c.redirect(`${back}${back.includes('?') ? '&' : '?'}lifted=1`, 303)
  })
}
