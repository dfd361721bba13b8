/** @jsxImportSource hono/jsx */
import type { Hono } from 'hono'
import { isUuid } from '../../../models/fields.ts'
import { problemText, type ApiClient, type Schema } from '../../api-client.ts'
import type { AdminEnv } from '../../context.ts'
import { Alert, Notice, Problem } from '../../components/feedback.tsx'
import { Table } from '../../components/table.tsx'
import { FormField } from '../fields.tsx'
import { refusal, type Field, type FormState } from '../form.ts'
import { isFragment, peopleOptions, type ConsoleResource, type Ctx } from '../resource.ts'

export const users: ConsoleResource = {
  model: 'User',
  path: '/users',
  title: 'Users',
  singular: 'user',
  columns: [
    { field: 'username', label: 'Username' },
    { field: 'display_name', label: 'Name' },
    { field: 'email', label: 'Email' },
    { field: 'is_superadmin', label: 'Superadmin' },
  ],
  search: { field: 'username', label: 'Username contains' },
  fields: [
    { name: 'username', label: 'Username', required: true },
    { name: 'display_name', label: 'Name' },
    { name: 'email', label: 'Email', kind: 'email', required: true },
    // The first password only: afterwards the user changes it (or is handed a reset link); admins never set it.
    { name: 'password', label: 'Password', kind: 'password', createOnly: true, help: 'At least 8 characters. Afterwards only its owner changes it.' },
    { name: 'is_superadmin', label: 'Superadmin (operates the whole platform)', kind: 'checkbox' },
  ],
  nameOf: (row) => String(row.username ?? ''),
  panels: async (_c, _api, row) => <PasswordReset userId={String(row.id)} />,
  mountExtra: mountPasswordReset,
}

/**
 * An admin never sets or learns another person's password: they send a reset link, which ends the person's
 * password, sessions and tokens. The button says so before it is pressed.
 */
function PasswordReset({ userId, notice, problem, link }: { userId: string; notice?: string; problem?: string; link?: string }) {
  const action = `/users/${userId}/password-reset`
  return (
    <section id="password-reset" class="panel">
      <h2>Password</h2>
      <p>
        Sending a reset link ends this person’s password, sessions, API tokens and connected MCP hosts at once; the link, mailed to their address,
        lets them choose a new password within 24 hours.
      </p>
      <Notice text={notice} />
      <Alert text={problem} />
      {link ? (
        <p>
          No mail could be sent, so hand this link over privately (it works once): <code class="reset-link">{link}</code>
        </p>
      ) : null}
      <form method="post" action={action} hx-post={action} hx-target="#password-reset" hx-swap="outerHTML">
        <button type="submit" class="danger">
          Send a password reset link
        </button>
      </form>
    </section>
  )
}

function mountPasswordReset(app: Hono<AdminEnv>, api: ApiClient): void {
  app.post('/users/:id/password-reset', async (c) => {
    const id = c.req.param('id')
    if (!isUuid(id)) return c.notFound()
    const made = await api.as(c).POST('/api/users/{id}/password-reset', { params: { path: { id } } })
    const status = made.response.status
    const panel =
      status === 202 && made.data && 'sent_to' in made.data ? (
        <PasswordReset userId={id} notice={`A reset link was mailed to ${made.data.sent_to}.`} />
      ) : status === 201 && made.data && 'url' in made.data ? (
        <PasswordReset userId={id} notice="The password is reset." link={made.data.url} />
      ) : (
        <PasswordReset userId={id} problem={problemText(made, 'Sending the reset link')} />
      )
    if (!isFragment(c)) return c.render(<section>{panel}</section>, { title: 'Password reset' })
    return c.html(panel)
  })
}

const ROLES = ['member', 'admin', 'owner'].map((role) => ({ value: role, label: role }))
const memberFields: Field[] = [
  { name: 'user_id', label: 'User', kind: 'select', options: 'users', required: true },
  { name: 'role', label: 'Role', kind: 'select', options: 'roles', required: true },
]

/**
 * A company's people and their roles, read and written as CompanyUser in that company. The role ladder is the
 * API's: granting above one's own role, or touching someone above it, is refused there and the refusal shown here.
 */
async function Members({ c, api, company, form, notice }: { c: Ctx; api: ApiClient; company: string; form?: FormState; notice?: string }) {
  const [members, people] = await Promise.all([
    api.as(c, { company }).GET('/api/v1/CompanyUser', { params: { query: { limit: '500', order: 'created_at.asc' } } }),
    api.as(c, { company }).GET('/api/v1/User', { params: { query: { limit: '500', order: 'username.asc', select: 'id,username,display_name' } } }),
  ])
  const names = new Map((people.data?.data ?? []).map((u) => [u.id, u.display_name || u.username]))
  const options = { users: [...names].map(([value, label]) => ({ value, label })), roles: ROLES }
  const errors = form?.errors ?? []
  return (
    <section id="members" class="panel">
      <h2>Members</h2>
      <Notice text={notice} />
      {!members.data ? (
        <Alert text={problemText(members, 'Reading the members')} />
      ) : (
        <Table caption="Members" headers={['User', 'Role']} actions>
            {members.data.data.map((m) => (
              <tr>
                <td>{names.get(m.user_id) ?? m.user_id}</td>
                <td>
                  <form class="inline-form" method="post" action={`/companies/${company}/members/${m.id}`} hx-post={`/companies/${company}/members/${m.id}`} hx-target="#members" hx-swap="outerHTML">
                    <label for={`role-${m.id}`} class="visually-hidden">
                      Role of {names.get(m.user_id) ?? m.user_id}
                    </label>
                    <select id={`role-${m.id}`} name="role">
                      {ROLES.map((r) => (
                        <option value={r.value} selected={r.value === m.role}>
                          {r.label}
                        </option>
                      ))}
                    </select>
                    <button type="submit">Change role</button>
                  </form>
                </td>
                <td>
                  <form method="post" action={`/companies/${company}/members/${m.id}/remove`} hx-post={`/companies/${company}/members/${m.id}/remove`} hx-target="#members" hx-swap="outerHTML" hx-confirm="Remove this member from the company?">
                    <button type="submit" class="danger">
                      Remove
                    </button>
                  </form>
                </td>
              </tr>
            ))}
          </Table>
      )}
      <form class="inline-form" method="post" action={`/companies/${company}/members`} hx-post={`/companies/${company}/members`} hx-target="#members" hx-swap="outerHTML">
        {memberFields.map((field) => (
          <FormField field={field} values={form?.values ?? { role: 'member' }} errors={errors} prefix="member" options={options} />
        ))}
        <button type="submit">Add member</button>
      </form>
      <Problem message={form?.message} errors={errors} fields={memberFields} />
    </section>
  )
}

function mountMembers(app: Hono<AdminEnv>, api: ApiClient): void {
  const answer = async (c: Ctx, company: string, status: number, extra: { form?: FormState; notice?: string }) => {
    const panel = await Members({ c, api, company, ...extra })
    if (isFragment(c)) return c.html(panel, status as 200)
    return c.redirect(`/companies/${company}`, 303)
  }
  const ids = (c: Ctx) => {
    const company = c.req.param('company') ?? ''
    const member = c.req.param('member')
    return isUuid(company) && (member === undefined || isUuid(member)) ? { company, member } : undefined
  }
  app.post('/companies/:company/members', async (c) => {
    const at = ids(c)
    if (!at) return c.notFound()
    const body = await c.req.parseBody()
    const values = { user_id: String(body.user_id ?? ''), role: String(body.role ?? '') }
    // The role is the person's choice from the form, checked by the API like any other value sent to it.
    const added = await api.as(c, { company: at.company }).POST('/api/v1/CompanyUser', { body: values as Schema<'CompanyUserCreate'> })
    if (added.data) return answer(c, at.company, 200, { notice: 'Member added.' })
    return answer(c, at.company, added.response.status, { form: refusal(values, added) })
  })
  app.post('/companies/:company/members/:member', async (c) => {
    const at = ids(c)
    if (!at) return c.notFound()
    const role = String((await c.req.parseBody()).role ?? '')
    const changed = await api.as(c, { company: at.company }).PATCH('/api/v1/CompanyUser/{id}', { params: { path: { id: at.member! } }, body: { role } })
    if (changed.data) return answer(c, at.company, 200, { notice: 'Role changed.' })
    return answer(c, at.company, changed.response.status, { form: refusal({}, changed) })
  })
  app.post('/companies/:company/members/:member/remove', async (c) => {
    const at = ids(c)
    if (!at) return c.notFound()
    const removed = await api.as(c, { company: at.company }).DELETE('/api/v1/CompanyUser/{id}', { params: { path: { id: at.member! } } })
    if (removed.response.status === 204) return answer(c, at.company, 200, { notice: 'Member removed.' })
    return answer(c, at.company, removed.response.status, { form: refusal({}, removed) })
  })
}

export const companies: ConsoleResource = {
  model: 'Company',
  path: '/companies',
  title: 'Companies',
  singular: 'company',
  columns: [
    { field: 'name', label: 'Name' },
    { field: 'slug', label: 'Slug' },
  ],
  search: { field: 'name', label: 'Name contains' },
  fields: [
    { name: 'name', label: 'Name', required: true },
    { name: 'slug', label: 'Slug', required: true, help: 'Lowercase letters, digits and dashes; used in addresses.' },
    { name: 'require_sso', label: 'Members sign in only through a sign-in provider', kind: 'checkbox', help: 'Their passwords are refused; superadmins are not affected. Needs an enabled provider.' },
    {
      name: 'owner_id',
      label: 'Owner',
      kind: 'select',
      options: 'people',
      required: true,
      createOnly: true,
      help: 'Who runs the company from the start: they add its people and agents. Make their account first under Users if they have none.',
    },
  ],
  options: async (c, api) => ({ people: await peopleOptions(c, api) }),
  nameOf: (row) => String(row.name ?? ''),
  panels: (c, api, row) => Members({ c, api, company: String(row.id) }),
  mountExtra: mountMembers,
}
