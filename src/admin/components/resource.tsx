/** @jsxImportSource hono/jsx */
import type { FieldError } from '../../errors.ts'
import { PAGE_SIZE, type Field, type Resource } from '../resources/resource.ts'

type Row = Record<string, unknown>

export interface Listing {
  rows: Row[]
  count: number
  offset: number
  q: string
}

export interface FormState {
  values: Record<string, string>
  errors: FieldError[]
  message?: string
}

function fieldErrors(errors: FieldError[], name: string) {
  return errors.filter((e) => e.path === name || e.path.startsWith(`${name}.`))
}

function listUrl(resource: Resource, q: string, offset: number) {
  const query = new URLSearchParams({ ...(q ? { q } : {}), ...(offset ? { offset: String(offset) } : {}) })
  return `${resource.path}${query.size ? `?${query}` : ''}`
}

export function Problem({ message, errors = [] }: { message?: string; errors?: FieldError[] }) {
  if (!message && errors.length === 0) return null
  return (
    <div class="problem" role="alert">
      {message}
      {errors.filter((e) => e.path === '(body)').map((e) => (
        <div>{e.message}</div>
      ))}
    </div>
  )
}

function Input({ field, value, errors, id }: { field: Field; value: string; errors: FieldError[]; id: string }) {
  const mine = fieldErrors(errors, field.name)
  return (
    <label for={id}>
      {field.label}
      <input id={id} name={field.name} type={field.type ?? 'text'} value={field.type === 'password' ? '' : value} required={field.required} aria-invalid={mine.length > 0 ? 'true' : undefined} />
      {mine.map((e) => (
        <span class="field-error">{e.message}</span>
      ))}
    </label>
  )
}

export function RecordRow({ resource, row, message }: { resource: Resource; row: Row; message?: string }) {
  const url = `${resource.path}/${row.id}`
  return (
    <tr id={`row-${row.id}`}>
      {resource.columns.map((column) => (
        <td>{String(row[column.field] ?? '')}</td>
      ))}
      <td class="actions">
        <button type="button" hx-get={`${url}/edit`} hx-target="closest tr" hx-swap="outerHTML">
          Edit
        </button>
        <button type="button" hx-delete={url} hx-target="closest tr" hx-swap="outerHTML" hx-confirm={`Delete ${resource.singular} ${resource.nameOf(row)}?`}>
          Delete
        </button>
        {message ? <span class="problem">{message}</span> : null}
      </td>
    </tr>
  )
}

export function EditRow({ resource, row, form }: { resource: Resource; row: Row; form?: FormState }) {
  const url = `${resource.path}/${row.id}`
  const fields = resource.fields.filter((f) => !f.createOnly)
  const values = form?.values ?? Object.fromEntries(fields.map((f) => [f.name, String(row[f.name] ?? '')]))
  return (
    <tr id={`row-${row.id}`} class="editing">
      <td colspan={resource.columns.length + 1}>
        <form hx-patch={url} hx-target="closest tr" hx-swap="outerHTML" class="inline-form">
          {fields.map((f) => (
            <Input field={{ ...f, required: f.required && f.type !== 'password' }} value={values[f.name] ?? ''} errors={form?.errors ?? []} id={`edit-${row.id}-${f.name}`} />
          ))}
          <button type="submit">Save</button>
          <button type="button" hx-get={`${url}/row`} hx-target="closest tr" hx-swap="outerHTML">
            Cancel
          </button>
          <Problem message={form?.message} errors={form?.errors} />
        </form>
      </td>
    </tr>
  )
}

/** The table and its pager; `outOfBand` when it rides along with another fragment (after a create). */
export function Rows({ resource, listing, outOfBand }: { resource: Resource; listing: Listing; outOfBand?: boolean }) {
  const { rows, count, offset, q } = listing
  const last = Math.min(offset + rows.length, count)
  return (
    <div id="rows" hx-swap-oob={outOfBand ? 'outerHTML' : undefined}>
      <table>
        <thead>
          <tr>
            {resource.columns.map((c) => (
              <th>{c.label}</th>
            ))}
            <th></th>
          </tr>
        </thead>
        <tbody>
          {rows.map((row) => (
            <RecordRow resource={resource} row={row} />
          ))}
        </tbody>
      </table>
      <nav class="pager">
        <span>{count === 0 ? `No ${resource.title.toLowerCase()} found.` : `${offset + 1}–${last} of ${count}`}</span>
        {offset > 0 ? (
          <a href={listUrl(resource, q, Math.max(0, offset - PAGE_SIZE))} hx-get={listUrl(resource, q, Math.max(0, offset - PAGE_SIZE))} hx-target="#rows" hx-swap="outerHTML" hx-push-url="true">
            Previous
          </a>
        ) : null}
        {last < count ? (
          <a href={listUrl(resource, q, offset + PAGE_SIZE)} hx-get={listUrl(resource, q, offset + PAGE_SIZE)} hx-target="#rows" hx-swap="outerHTML" hx-push-url="true">
            Next
          </a>
        ) : null}
      </nav>
    </div>
  )
}

export function CreateForm({ resource, form, created }: { resource: Resource; form?: FormState; created?: string }) {
  return (
    <form id="create" method="post" action={resource.path} hx-post={resource.path} hx-target="#create" hx-swap="outerHTML" class="card">
      <h2>New {resource.singular}</h2>
      {created ? (
        <p class="notice" role="status">
          Created {resource.singular} {created}.
        </p>
      ) : null}
      {resource.fields.map((f) => (
        <Input field={f} value={form?.values[f.name] ?? ''} errors={form?.errors ?? []} id={`create-${f.name}`} />
      ))}
      <button type="submit">Create {resource.singular}</button>
      <Problem message={form?.message} errors={form?.errors} />
    </form>
  )
}

/** The whole page body: search, table and create form. */
export function ResourcePage({ resource, listing, form }: { resource: Resource; listing: Listing; form?: FormState }) {
  return (
    <section>
      <h1>{resource.title}</h1>
      <form class="search" action={resource.path} hx-get={resource.path} hx-target="#rows" hx-swap="outerHTML" hx-push-url="true">
        <label for="q">
          {resource.search.label}
          <input
            id="q"
            name="q"
            type="search"
            value={listing.q}
            hx-get={resource.path}
            hx-trigger="input changed delay:300ms"
            hx-target="#rows"
            hx-swap="outerHTML"
            hx-push-url="true"
          />
        </label>
        <button type="submit">Search</button>
      </form>
      <Rows resource={resource} listing={listing} />
      <CreateForm resource={resource} form={form} />
    </section>
  )
}
