/** @jsxImportSource hono/jsx */
import type { Hono } from 'hono'
import { isUuid } from '../../../models/fields.ts'
import { problemText, type ApiClient, type Schema } from '../../api-client.ts'
import type { AdminEnv } from '../../context.ts'
import { Alert, Notice } from '../../components/feedback.tsx'
import { Table } from '../../components/table.tsx'
import { Time } from '../../components/time.tsx'
import { isFragment, type Ctx } from '../resource.ts'

type Approval = Schema<'ToolApproval'>
type Status = Approval['status']

const STATUSES: Array<{ value: Status | ''; label: string }> = [
  { value: 'pending', label: 'Waiting' },
  { value: '', label: 'All' },
  { value: 'approved', label: 'Approved' },
  { value: 'denied', label: 'Declined' },
  { value: 'expired', label: 'Not answered in time' },
  { value: 'cancelled', label: 'Ended with their turn' },
]
const WORDS: Record<Status, string> = { pending: 'waiting', approved: 'approved', denied: 'declined', expired: 'not answered in time', cancelled: 'ended with its turn' }

function statusOf(c: Ctx): Status | '' {
  const asked = c.req.query('status')
  return STATUSES.find((s) => s.value === asked)?.value ?? (asked === undefined ? 'pending' : '')
}

/** How long a request waited for its answer, in words. */
function waited(a: Approval): string {
  if (!a.decided_at) return ''
  const seconds = Math.round((Date.parse(a.decided_at) - Date.parse(a.created_at)) / 1000)
  return seconds < 60 ? `${seconds} s` : `${Math.round(seconds / 60)} min`
}

/** One request: what it asked, for whom, how it ended, and (while it waits, for whoever may answer) its buttons. */
function ApprovalRow({ a, me, admin }: { a: Approval; me: string; admin: boolean }) {
  const mayAnswer = a.status === 'pending' && (a.user_id === me || (a.approvers === 'admins' && admin))
  return (
    <tr id={`approval-${a.id}`}>
      <td>
        <Time iso={a.created_at} />
      </td>
      <td>
        <code>
          {a.server}/{a.tool}
        </code>
        <details>
          <summary>Arguments</summary>
          <pre>{JSON.stringify(a.arguments, null, 2)}</pre>
        </details>
      </td>
      <td>{a.user_id === me ? 'you' : <code>{a.user_id}</code>}</td>
      <td>
        {WORDS[a.status]}
        {a.decided_by_name ? ` by ${a.decided_by_name}` : ''}
        {a.status === 'pending' ? (
          <span class="help">
            until <Time iso={a.expires_at} />
          </span>
        ) : (
          <span class="help">after {waited(a)}</span>
        )}
      </td>
      <td>{a.conversation_id ? <a href={`/chat/${a.conversation_id}`}>the conversation</a> : ''}</td>
      <td class="actions">
        {mayAnswer ? (
          <form method="post" action={`/approvals/${a.id}`} hx-post={`/approvals/${a.id}`} hx-target="#approvals" hx-swap="outerHTML" class="inline-form">
            <button type="submit" name="approve" value="yes">
              Approve<span class="visually-hidden"> {a.tool}</span>
            </button>{' '}
            <button type="submit" name="approve" value="no" class="danger">
              Deny<span class="visually-hidden"> {a.tool}</span>
            </button>
          </form>
        ) : null}
      </td>
    </tr>
  )
}

function ApprovalsSection({ list, status, me, admin, notice, problem }: { list?: Approval[]; status: Status | ''; me: string; admin: boolean; notice?: string; problem?: string }) {
  return (
    <section id="approvals">
      <nav class="tabs" aria-label="Which requests">
        {STATUSES.map((s) => (
          <a href={`/approvals?status=${s.value}`} aria-current={s.value === status ? 'page' : undefined}>
            {s.label}
          </a>
        ))}
      </nav>
      <Notice text={notice} />
      <Alert text={problem} />
      {list && list.length > 0 ? (
        <Table caption="Tool approvals" headers={['Asked', 'The call', 'For', 'How it stands', 'Where']} actions>
          {list.map((a) => (
            <ApprovalRow a={a} me={me} admin={admin} />
          ))}
        </Table>
      ) : list ? (
        <p class="empty">{status === 'pending' ? 'Nothing waits for an answer.' : 'No requests here yet.'} A permission rule with the effect “approve” makes an agent ask before it calls a tool.</p>
      ) : null}
    </section>
  )
}

/** `/approvals`: tool calls waiting for a person's yes, and those answered, read and answered through the API. */
export function mountApprovals(app: Hono<AdminEnv>, api: ApiClient): void {
  const section = async (c: Ctx, status: Status | '', said: { notice?: string; problem?: string } = {}) => {
    const listed = await api.as(c).GET('/api/approvals', { params: { query: { ...(status ? { status } : {}), limit: 200 } } })
    const me = c.get('me')
    const admin = me.user.is_superadmin || me.role === 'admin' || me.role === 'owner'
    const problem = said.problem ?? (listed.data ? undefined : problemText(listed, 'Listing the tool approvals'))
    return <ApprovalsSection list={listed.data?.data} status={status} me={me.user.id} admin={admin} notice={said.notice} problem={problem} />
  }

  app.get('/approvals', async (c) => {
    const content = await section(c, statusOf(c))
    if (isFragment(c)) return c.html(content)
    return c.render(
      <section>
        <h1>Tool approvals</h1>
        <p class="intro">Calls agents wanted to make with tools a rule keeps behind a person’s yes: those waiting, and how the others ended.</p>
        {content}
      </section>,
      { title: 'Tool approvals' },
    )
  })

  app.post('/approvals/:id', async (c) => {
    const id = c.req.param('id')
    if (!isUuid(id)) return c.notFound()
    const approve = (await c.req.parseBody()).approve === 'yes'
    const answered = await api.as(c).POST('/api/approvals/{id}/decision', { params: { path: { id } }, body: { approve } })
    const said = answered.data ? { notice: `${approve ? 'Approved' : 'Declined'}: ${answered.data.server}/${answered.data.tool}.` } : { problem: problemText(answered, 'Answering') }
    if (!answered.data) c.status(answered.response.status as 409)
    const content = await section(c, 'pending', said)
    if (isFragment(c)) return c.html(content)
    return c.render(
      <section>
        <h1>Tool approvals</h1>
        {content}
      </section>,
      { title: 'Tool approvals' },
    )
  })
}
