/** @jsxImportSource hono/jsx */
import type { Child } from 'hono/jsx'
import { FormField } from './fields.tsx'
import type { Field, FormState, FormValues, Option } from './form.ts'
import { PAGE_SIZE, type ConsoleResource, type Row } from './resource.ts'
import { Notice, Problem } from '../components/feedback.tsx'

export interface Listing {
  rows: Row[]
  count: number
  offset: number
  q: string
  /** The column the rows are ordered by, and which way. */
  sort: string
  dir: 'asc' | 'desc'
  /** The API lets the signed-in person make one. */
  mayCreate: boolean
}

/** What the signed-in person's role may do with a record, as the API said (its Allow header). */
export interface May {
  edit: boolean
  delete: boolean
}

type Place = Pick<Listing, 'q' | 'offset' | 'sort' | 'dir'>

/** A list's address; the resource's default order (its search field, ascending) is left out. */
function listUrl(resource: ConsoleResource, { q, offset, sort, dir }: Place) {
  const query = new URLSearchParams({
    ...(q ? { q } : {}),
    ...(sort !== resource.search.field || dir !== 'asc' ? { sort, dir } : {}),
    ...(offset ? { offset: String(offset) } : {}),
  })
  return `${resource.path}${query.size ? `?${query}` : ''}`
}

function cell(row: Row, column: ConsoleResource['columns'][number]): string {
  if (column.show) return column.show(row)
  const value = row[column.field]
  if (typeof value === 'boolean') return value ? 'yes' : 'no'
  return value === null || value === undefined ? '' : typeof value === 'object' ? JSON.stringify(value) : String(value)
}

/** A link that swaps the rows for another view of them and keeps the address in step. */
function RowsLink({ resource, to, label, current }: { resource: ConsoleResource; to: Place; label: string; current?: boolean }) {
  const url = listUrl(resource, to)
  return (
    <a href={url} hx-get={url} hx-target="#rows" hx-swap="outerHTML" hx-push-url="true" aria-current={current ? 'page' : undefined}>
      {label}
    </a>
  )
}

/** The pages to offer: the first, the last, and two either side of the current one, with gaps between. */
export function pageNumbers(current: number, last: number): Array<number | 'gap'> {
  const shown = [...new Set([1, last, ...[-2, -1, 0, 1, 2].map((d) => current + d)])].filter((n) => n >= 1 && n <= last).sort((a, b) => a - b)
  return shown.flatMap((n, i) => (i > 0 && n - shown[i - 1]! > 1 ? (['gap', n] as const) : [n]))
}

/** A column's heading: a link that orders the rows by it (and the other way, once they are), saying which way they are. */
function SortHeading({ resource, listing, column }: { resource: ConsoleResource; listing: Listing; column: ConsoleResource['columns'][number] }) {
  const sorted = listing.sort === column.field
  if (column.sortable === false) return <th scope="col">{column.label}</th>
  const dir = sorted && listing.dir === 'asc' ? 'desc' : 'asc'
  return (
    <th scope="col" aria-sort={sorted ? (listing.dir === 'asc' ? 'ascending' : 'descending') : undefined}>
      <RowsLink resource={resource} to={{ q: listing.q, offset: 0, sort: column.field, dir }} label={`${column.label}${sorted ? (listing.dir === 'asc' ? ' ▲' : ' ▼') : ''}`} />
    </th>
  )
}

/** The table and its pager, swapped alone when the search, the order or the page changes. */
export function Rows({ resource, listing }: { resource: ConsoleResource; listing: Listing }) {
  const { rows, count, offset, q, sort, dir } = listing
  const last = Math.min(offset + rows.length, count)
  const pages = Math.max(1, Math.ceil(count / PAGE_SIZE))
  const page = Math.floor(offset / PAGE_SIZE) + 1
  const at = (n: number): Place => ({ q, sort, dir, offset: (n - 1) * PAGE_SIZE })
  return (
    <div id="rows">
      <table>
        <caption class="visually-hidden">{resource.title}</caption>
        <thead>
          <tr>
            {resource.columns.map((column) => (
              <SortHeading resource={resource} listing={listing} column={column} />
            ))}
          </tr>
        </thead>
        <tbody>
          {rows.map((row) => (
            <tr id={`row-${row.id}`}>
              {resource.columns.map((column, index) =>
                index === 0 ? (
                  <td>
                    <a href={`${resource.path}/${row.id}`}>{cell(row, column) || resource.nameOf(row) || String(row.id)}</a>
                  </td>
                ) : (
                  <td>{cell(row, column)}</td>
                ),
              )}
            </tr>
          ))}
        </tbody>
      </table>
      {count === 0 ? (
        <p class="empty">
          {q
            ? `No ${resource.title.toLowerCase()} match “${q}”. Try fewer letters, or clear the search.`
            : `No ${resource.title.toLowerCase()} yet.${listing.mayCreate ? ' Make the first with the button below.' : ''}`}
        </p>
      ) : null}
      <nav class="pager" aria-label="Pages">
        <span>{count === 0 ? '' : `${offset + 1}–${last} of ${count}`}</span>
        {page > 1 ? <RowsLink resource={resource} to={at(page - 1)} label="Previous" /> : null}
        {pages > 1
          ? pageNumbers(page, pages).map((n) => (n === 'gap' ? <span aria-hidden="true">…</span> : <RowsLink resource={resource} to={at(n)} label={String(n)} current={n === page} />))
          : null}
        {page < pages ? <RowsLink resource={resource} to={at(page + 1)} label="Next" /> : null}
      </nav>
    </div>
  )
}

export function ListPage({ resource, listing, notice }: { resource: ConsoleResource; listing: Listing; notice?: string }) {
  return (
    <section>
      <h1>{resource.title}</h1>
      {resource.intro ? <p class="intro">{resource.intro}</p> : null}
      <Notice text={notice} />
      <form class="search" role="search" action={resource.path} hx-get={resource.path} hx-target="#rows" hx-swap="outerHTML" hx-push-url="true">
        {listing.sort !== resource.search.field || listing.dir !== 'asc' ? (
          <>
            <input type="hidden" name="sort" value={listing.sort} />
            <input type="hidden" name="dir" value={listing.dir} />
          </>
        ) : null}
        <label for="q">{resource.search.label}</label>
        <input id="q" name="q" type="search" value={listing.q} hx-get={resource.path} hx-trigger="input changed delay:300ms" hx-target="#rows" hx-swap="outerHTML" hx-push-url="true" />
        <button type="submit">Search</button>
      </form>
      <Rows resource={resource} listing={listing} />
      {listing.mayCreate ? (
        <p>
          <a class="button" href={`${resource.path}/new`}>
            New {resource.singular}
          </a>
        </p>
      ) : null}
    </section>
  )
}

/** The form's fields in the parts their `section` names, in order; fields without one stand alone. */
function sectionsOf(fields: readonly Field[]): Array<{ title?: string; fields: Field[] }> {
  const sections: Array<{ title?: string; fields: Field[] }> = []
  for (const field of fields) {
    const last = sections.at(-1)
    if (last && last.title === field.section) last.fields.push(field)
    else sections.push({ title: field.section, fields: [field] })
  }
  return sections
}

const sectionId = (title: string) => `part-${title.toLowerCase().replace(/[^a-z0-9]+/g, '-')}`

/**
 * A record's form, for a new record (`id` absent) or an existing one; it replaces itself with the answer. The
 * version the page was read at rides along, so a save over someone else's newer one is refused (If-Match). A long
 * form comes in parts, with links to each at the top; its buttons and what a save said stay in view at the bottom.
 */
export function RecordForm({ resource, id, version, values, form, options, notice, readOnly }: {
  resource: ConsoleResource
  id?: string
  version?: string
  values: FormValues
  form?: FormState
  options: Record<string, Option[]>
  notice?: string
  /** The person may read the record, not change it: the fields are shown, disabled, and no Save is offered. */
  readOnly?: boolean
}) {
  const action = id ? `${resource.path}/${id}` : resource.path
  const fields = resource.fields.filter((f) => !(id && f.createOnly))
  const errors = form?.errors ?? []
  const sections = sectionsOf(fields)
  const titled = sections.filter((s): s is { title: string; fields: Field[] } => s.title !== undefined)
  const field = (f: Field) => <FormField field={f} values={form?.values ?? values} errors={errors} prefix="record" options={options} recordId={id} />
  return (
    <form id="record-form" class="card wide" method="post" action={action} hx-post={action} hx-target="this" hx-swap="outerHTML" novalidate>
      {id ? <input type="hidden" name="_version" value={version ?? ''} /> : null}
      {titled.length > 1 ? (
        <nav class="form-parts" aria-label="Parts of the form">
          {titled.map((s) => (
            <a href={`#${sectionId(s.title)}`}>{s.title}</a>
          ))}
        </nav>
      ) : null}
      <fieldset class="form-body" disabled={readOnly}>
        {sections.map((s) =>
          s.title ? (
            <fieldset class="form-part" id={sectionId(s.title)}>
              <legend>{s.title}</legend>
              {s.fields.map(field)}
            </fieldset>
          ) : (
            s.fields.map(field)
          ),
        )}
      </fieldset>
      {readOnly ? (
        <p class="help read-only">You may read this {resource.singular}; changing it takes a role yours does not have (an admin of the company, as a rule).</p>
      ) : (
      <div class="form-footer">
        <Problem message={form?.message} errors={errors} fields={fields} prefix="record" />
        <Notice text={notice} />
        <div class="buttons">
          <button type="submit">{id ? 'Save' : `Create ${resource.singular}`}</button>
        </div>
      </div>
      )}
    </form>
  )
}

export function RecordPage({ resource, row, version, form, values, options, notice, panels, deleteProblem, may = { edit: true, delete: true } }: {
  resource: ConsoleResource
  row?: Row
  version?: string
  form?: FormState
  values: FormValues
  options: Record<string, Option[]>
  notice?: string
  panels?: Child
  deleteProblem?: string
  may?: May
}) {
  const id = row ? String(row.id) : undefined
  return (
    <section>
      <p class="crumbs">
        <a href={resource.path}>{resource.title}</a>
      </p>
      <h1>{row ? `${capitalized(resource.singular)} ${resource.nameOf(row)}` : `New ${resource.singular}`}</h1>
      <RecordForm resource={resource} id={id} version={version} values={values} form={form} options={options} notice={notice} readOnly={id !== undefined && !may.edit} />
      {panels}
      {id && may.delete ? <DeleteForm resource={resource} id={id} version={version} name={resource.nameOf(row!)} problem={deleteProblem} /> : null}
    </section>
  )
}

/** `outOfBand`: riding along with a saved form, to carry the new version. */
export function DeleteForm({ resource, id, version, name, problem, outOfBand }: { resource: ConsoleResource; id: string; version?: string; name: string; problem?: string; outOfBand?: boolean }) {
  const action = `${resource.path}/${id}/delete`
  return (
    <form id="delete-form" class="danger-zone" method="post" action={action} hx-post={action} hx-target="this" hx-swap="outerHTML" hx-confirm={`Delete ${resource.singular} ${name}?`} hx-swap-oob={outOfBand ? 'true' : undefined}>
      <input type="hidden" name="_version" value={version ?? ''} />
      <input type="hidden" name="_name" value={name} />
      <button type="submit" class="danger">
        Delete {resource.singular}
      </button>
      <Problem message={problem} />
    </form>
  )
}

export function capitalized(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1)
}
