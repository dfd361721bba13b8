/** @jsxImportSource hono/jsx */
import type { Hono } from 'hono'
import { stream } from 'hono/streaming'
import { AUDIT_ACTIONS } from '../../../audit/trail.ts'
import { MAX_LIMIT } from '../../../models/list-query.ts'
import { problemText, type ApiClient } from '../../api-client.ts'
import type { AdminEnv } from '../../context.ts'
import { Alert } from '../../components/feedback.tsx'
import { Table } from '../../components/table.tsx'
import { PageRefusal } from '../routes.tsx'
import { isFragment, PAGE_SIZE, pageOf, type Ctx, type Row } from '../resource.ts'
import { Time } from '../../components/time.tsx'

/** The filters a person set on the page, as the query string carries them. */
interface Filters {
  action: string
  model: string
  actor: string
  from: string
  to: string
}

/** Rows of one CSV export at most: a bigger trail is exported a period at a time. */
export const EXPORT_MAX_ROWS = 100_000
const DAY = /^\d{4}-\d\d-\d\d$/
const NAME = /^[A-Za-z]{1,64}$/
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

/** The page's filters, each kept only when well formed (a bad one is dropped and said so, never sent on). */
function filtersOf(c: Ctx): { filters: Filters; problems: string[] } {
  const raw = (name: string) => c.req.query(name)?.trim() ?? ''
  const problems: string[] = []
  const keep = (name: string, ok: (value: string) => boolean, what: string) => {
    const value = raw(name)
    if (value === '' || ok(value)) return value
    problems.push(`${what} is not valid and was left out.`)
    return ''
  }
  const filters = {
    action: keep('action', (v) => (AUDIT_ACTIONS as readonly string[]).includes(v), 'The action'),
    model: keep('model', (v) => NAME.test(v), 'The kind of record'),
    actor: keep('actor', (v) => UUID.test(v), 'The person (a user id)'),
    from: keep('from', (v) => DAY.test(v) && !Number.isNaN(Date.parse(v)), 'The first day'),
    to: keep('to', (v) => DAY.test(v) && !Number.isNaN(Date.parse(v)), 'The last day'),
  }
  return { filters, problems }
}

/** The API query of the filters: newest first, the last day counted whole. */
function apiQuery(filters: Filters, limit: number, offset: number, count: boolean, until?: string): URLSearchParams {
  const query = new URLSearchParams({ limit: String(limit), offset: String(offset), order: 'created_at.desc' })
  if (until) query.append('created_at', `lte.${until}`)
  if (count) query.set('count', 'exact')
  if (filters.action) query.set('action', `eq.${filters.action}`)
  if (filters.model) query.set('model', `eq.${filters.model}`)
  if (filters.actor) query.set('actor_id', `eq.${filters.actor}`)
  if (filters.from) query.append('created_at', `gte.${filters.from}T00:00:00Z`)
  if (filters.to) query.append('created_at', `lt.${new Date(Date.parse(`${filters.to}T00:00:00Z`) + 86_400_000).toISOString()}`)
  return query
}

function pageUrl(filters: Filters, offset: number, path = '/audit'): string {
  const query = new URLSearchParams(Object.entries(filters).filter(([, v]) => v !== ''))
  if (offset > 0) query.set('offset', String(offset))
  const text = query.toString()
  return text ? `${path}?${text}` : path
}

/** Names of the people in `rows` whom the viewer may read (members of their company; everyone for a superadmin). */
async function namesOf(c: Ctx, api: ApiClient, rows: Row[]): Promise<Map<string, string>> {
  const ids = [...new Set(rows.map((r) => r.actor_id).filter((id): id is string => typeof id === 'string'))]
  if (ids.length === 0) return new Map()
  const reply = await api.call(c, 'GET', `/api/v1/User?select=id,username,display_name&limit=${MAX_LIMIT}&id=in.(${ids.join(',')})`)
  if (reply.status !== 200) return new Map()
  return new Map(pageOf(reply.body).data.map((u) => [String(u.id), String(u.display_name || u.username)]))
}

/** What changed, in one line a person reads: `role: member → admin; password: changed`. */
export function changesText(changes: unknown): string {
  if (!changes || typeof changes !== 'object') return ''
  const show = (value: unknown) => (typeof value === 'string' ? value : JSON.stringify(value))
  return Object.entries(changes as Record<string, unknown>)
    .map(([field, change]) => {
      if (change && typeof change === 'object' && !Array.isArray(change) && ('from' in change || 'to' in change)) {
        const { from, to } = change as { from?: unknown; to?: unknown }
        return 'from' in change && 'to' in change ? `${field}: ${show(from)} → ${show(to)}` : 'to' in change ? `${field}: ${show(to)}` : `${field} was ${show(from)}`
      }
      return `${field}: ${show(change)}`
    })
    .join('; ')
}


function Events({ rows, names, count, offset, filters }: { rows: Row[]; names: Map<string, string>; count: number; offset: number; filters: Filters }) {
  const last = Math.min(offset + rows.length, count)
  const link = (to: number, label: string) => (
    <a href={pageUrl(filters, to)} hx-get={pageUrl(filters, to)} hx-target="#audit-events" hx-swap="outerHTML" hx-push-url="true">
      {label}
    </a>
  )
  return (
    <div id="audit-events">
      <Table caption="Audit events" headers={['When', 'Who', 'Action', 'What', 'Changes', 'From']}>
        {rows.map((row) => (
          <tr>
            <td>
              <Time iso={typeof row.created_at === 'string' ? row.created_at : null} />
            </td>
            <td>{row.actor_id ? (names.get(String(row.actor_id)) ?? String(row.actor_id)) : <em>nobody signed in</em>}</td>
            <td>{String(row.action).replaceAll('_', ' ')}</td>
            <td>
              {String(row.model)} {row.record_id ? <code>{String(row.record_id)}</code> : null}
            </td>
            <td class="changes">{changesText(row.changes)}</td>
            <td>
              {row.address ? String(row.address) : ''}
              {row.request_id ? (
                <>
                  {' '}
                  <span class="help">request {String(row.request_id)}</span>
                </>
              ) : null}
            </td>
          </tr>
        ))}
      </Table>
      <nav class="pager" aria-label="Pages">
        <span>{count === 0 ? 'No events match.' : `${offset + 1}–${last} of ${count}`}</span>
        {offset > 0 ? link(Math.max(0, offset - PAGE_SIZE), 'Previous') : null}
        {last < count ? link(offset + PAGE_SIZE, 'Next') : null}
      </nav>
    </div>
  )
}

function FilterForm({ filters }: { filters: Filters }) {
  return (
    <form class="filters" role="search" action="/audit" hx-get="/audit" hx-target="#audit-events" hx-swap="outerHTML" hx-push-url="true">
      <label>
        Action{' '}
        <select name="action">
          <option value="">any</option>
          {AUDIT_ACTIONS.map((action) => (
            <option value={action} selected={filters.action === action}>
              {action.replaceAll('_', ' ')}
            </option>
          ))}
        </select>
      </label>
      <label>
        Kind of record <input name="model" value={filters.model} placeholder="McpServer" size={14} />
      </label>
      <label>
        Person (user id) <input name="actor" value={filters.actor} size={36} />
      </label>
      <label>
        From <input type="date" name="from" value={filters.from} />
      </label>
      <label>
        To <input type="date" name="to" value={filters.to} />
      </label>
      <button type="submit">Filter</button>
    </form>
  )
}

/** A CSV field, quoted, and kept from being read as a formula by a spreadsheet (a leading = + - @ is escaped). */
export function csvField(value: unknown): string {
  let text = value === null || value === undefined ? '' : typeof value === 'object' ? JSON.stringify(value) : String(value)
  if (/^[=+\-@\t\r]/.test(text)) text = `'${text}`
  return `"${text.replaceAll('"', '""')}"`
}

const CSV_COLUMNS = ['created_at', 'company_id', 'actor_id', 'action', 'model', 'record_id', 'changes', 'address', 'request_id'] as const

/** `/audit`: the audit trail with filters, a page at a time, and its CSV export; read through the public API. */
export function mountAudit(app: Hono<AdminEnv>, api: ApiClient): void {
  app.get('/audit', async (c) => {
    const { filters, problems } = filtersOf(c)
    const offset = Math.max(0, Number.parseInt(c.req.query('offset') ?? '0', 10) || 0)
    const reply = await api.call(c, 'GET', `/api/v1/AuditEvent?${apiQuery(filters, PAGE_SIZE, offset, true)}`)
    if (reply.status !== 200) throw new PageRefusal(reply.status, problemText(reply, 'Reading the audit trail'))
    const { data, count = offset + data.length } = pageOf(reply.body)
    const events = <Events rows={data} names={await namesOf(c, api, data)} count={count} offset={offset} filters={filters} />
    if (isFragment(c)) return c.html(events)
    return c.render(
      <section>
        <h1>Audit trail</h1>
        <p class="intro">Who changed what, when and from where: sign-ins, passwords, roles, MCP settings, plugins, vault names, OAuth grants, agents and tokens. Secret values are never recorded.</p>
        {problems.map((text) => (
          <Alert text={text} />
        ))}
        <FilterForm filters={filters} />
        <p>
          <a class="button" href={pageUrl(filters, 0, '/audit/export.csv')} download>
            Export as CSV
          </a>
        </p>
        {events}
      </section>,
      { title: 'Audit trail' },
    )
  })

  app.get('/audit/export.csv', async (c) => {
    const { filters } = filtersOf(c)
    // Pages are read newest first: events made while the export runs would shift them, so it ends where it began.
    const until = new Date().toISOString()
    // Asked before the download starts, so a refusal is a page that says so, not a broken file.
    const first = await api.call(c, 'GET', `/api/v1/AuditEvent?${apiQuery(filters, MAX_LIMIT, 0, false, until)}`)
    if (first.status !== 200) throw new PageRefusal(first.status, problemText(first, 'Exporting the audit trail'))
    c.header('content-type', 'text/csv; charset=utf-8')
    c.header('content-disposition', `attachment; filename="audit-${new Date().toISOString().slice(0, 10)}.csv"`)
    return stream(c, async (out) => {
      await out.write(`${CSV_COLUMNS.join(',')}\r\n`)
      let rows = pageOf(first.body).data
      for (let offset = 0; rows.length > 0 && offset < EXPORT_MAX_ROWS; ) {
        await out.write(rows.map((row) => `${CSV_COLUMNS.map((column) => csvField(row[column])).join(',')}\r\n`).join(''))
        offset += rows.length
        if (rows.length < MAX_LIMIT) break
        const next = await api.call(c, 'GET', `/api/v1/AuditEvent?${apiQuery(filters, MAX_LIMIT, offset, false, until)}`)
        if (next.status !== 200) {
          await out.write(csvField(`The export stopped at row ${offset}: ${problemText(next, 'reading the audit trail')}`) + '\r\n')
          break
        }
        rows = pageOf(next.body).data
      }
    })
  })
}
